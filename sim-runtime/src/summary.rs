//! How a run ended: its summary, kept per thread after the run is gone
//! (the sweep reads it, and reports name the last events).

use std::cell::RefCell;

/// A summary of a finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// The seed.
    pub seed: u64,
    /// How many trace events were recorded.
    pub events: u64,
    /// The virtual time at the end, in ns.
    pub end_ns: u64,
    /// The SHA-256 of the trace, in hex.
    pub trace_hash: String,
    /// Scheduling decisions: picks among two or more ready tasks (what a
    /// PCT horizon counts).
    pub decisions: u64,
}

/// What a report of a failure after a run tells of it: its last events
/// and its story, kept as they were at its end and made into text only
/// when asked (most runs pass, and nothing asks).
pub(crate) struct LastRunReport {
    /// The trace's last chunks.
    pub(crate) recent: crate::trace::RecentEvents,
    /// The run's story (no later run writes to it).
    pub(crate) story: crate::story::SharedStory,
    /// The host that was running at the end.
    pub(crate) failing_host: u32,
}

thread_local! {
    static LAST_SUMMARY: RefCell<Option<RunSummary>> = const { RefCell::new(None) };
    /// The last events and story of the last run that ended on this thread.
    static LAST_REPORT: RefCell<Option<LastRunReport>> = const { RefCell::new(None) };
}

/// The story (see `Core::story_report`) of the last run that ended on this
/// thread.
pub fn last_run_story() -> String {
    LAST_REPORT.with(|r| {
        let report = r.borrow();
        let Some(report) = report.as_ref() else {
            return String::new();
        };
        report
            .story
            .with(|story| story.report(Some(report.failing_host)))
            .unwrap_or_default()
    })
}

/// The last events (at most 16) of the last run that ended on this thread.
pub fn last_run_recent_events() -> Vec<String> {
    LAST_REPORT.with(|r| {
        let report = r.borrow();
        let Some(report) = report.as_ref() else {
            return Vec::new();
        };
        let mut lines = report.recent.lines();
        report.story.with(|story| story.name_tasks(&mut lines));
        lines
    })
}

/// The summary of the last run that finished on this thread.
pub fn last_run() -> Option<RunSummary> {
    LAST_SUMMARY.with(|s| s.borrow().clone())
}

/// Keeps a finished run's summary, last events and story for [`last_run`].
pub(crate) fn set_last_run(summary: RunSummary, report: LastRunReport) {
    LAST_REPORT.with(|r| *r.borrow_mut() = Some(report));
    LAST_SUMMARY.with(|s| *s.borrow_mut() = Some(summary));
}
