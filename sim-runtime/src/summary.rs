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

thread_local! {
    static LAST_SUMMARY: RefCell<Option<RunSummary>> = const { RefCell::new(None) };
    /// The last events of the last run that ended on this thread.
    static LAST_RECENT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The story of the last run that ended on this thread.
    static LAST_STORY: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The story (see `Core::story_report`) of the last run that ended on this
/// thread.
pub fn last_run_story() -> String {
    LAST_STORY.with(|s| s.borrow().clone())
}

/// The last events (at most 16) of the last run that ended on this thread.
pub fn last_run_recent_events() -> Vec<String> {
    LAST_RECENT.with(|r| r.borrow().clone())
}

/// The summary of the last run that finished on this thread.
pub fn last_run() -> Option<RunSummary> {
    LAST_SUMMARY.with(|s| s.borrow().clone())
}

/// Keeps a finished run's summary and last events for [`last_run`].
pub(crate) fn set_last_run(summary: RunSummary, recent: Vec<String>, story: String) {
    LAST_RECENT.with(|r| *r.borrow_mut() = recent);
    LAST_STORY.with(|s| *s.borrow_mut() = story);
    LAST_SUMMARY.with(|s| *s.borrow_mut() = Some(summary));
}
