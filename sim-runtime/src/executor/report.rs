//! Failure reports: the last events with their tasks named, each pending
//! task with its spawn site and what it waits on, and the messages of the
//! deadlock, time, step and livelock limits.

use super::Core;
use crate::config::{INSTANT_STEP_LIMIT_VAR, STEP_LIMIT_VAR, TIME_LIMIT_VAR};
use std::fmt::Write;
use std::time::Duration;

/// The most pending tasks a report lists one by one.
const PENDING_LISTED_MAX: usize = 50;

impl Core {
    /// The last events of the run (at most 16), oldest first, each task
    /// by the name a user finds (`task 3 'src/client.rs:40'`).
    pub fn recent_events(&self) -> Vec<String> {
        let mut lines = self
            .trace
            .try_borrow()
            .map(|t| t.recent_lines())
            .unwrap_or_default();
        self.story.with(|story| story.name_tasks(&mut lines));
        lines
    }

    /// "task 3 'name' spawned at file:line:col", for reports.
    pub fn describe_task(&self, id: u64) -> String {
        // Only a task still in the table is described by its origin.
        let live = self.tasks.borrow().find(id).is_some();
        match live.then(|| self.origins.meta(id)).flatten() {
            // A simulated thread: where the code spawned it.
            Some(meta) if meta.kind == "thread" => {
                match crate::watch::thread_site(self.config.seed, id) {
                    Some(site) => format!(
                        "task {id} '{}' (a std thread) spawned at {site}",
                        meta.name.as_deref().unwrap_or(meta.kind)
                    ),
                    None => format!(
                        "task {id} '{}' (a std thread)",
                        meta.name.as_deref().unwrap_or(meta.kind)
                    ),
                }
            }
            Some(meta) => format!(
                "task {id} '{}' spawned at {}:{}:{}",
                meta.name.as_deref().unwrap_or(meta.kind),
                meta.location.file(),
                meta.location.line(),
                meta.location.column()
            ),
            None if id == 0 => "the root future".to_string(),
            None => format!("task {id}"),
        }
    }

    /// What `task` waits on, if the describer (or its own wait note) knows.
    pub fn describe_wait(&self, task: u64) -> Option<String> {
        let describer = self.wait_describer.borrow().clone();
        if let Some(lock) = describer.and_then(|d| d(task)) {
            return Some(lock);
        }
        let (note, more) = self.tasks.borrow().wait_of(task)?;
        Some(note.describe(more))
    }

    /// The pending tasks, each with its spawn site and (where the facade
    /// knows) what it waits for, where, and who holds it; at most 50.
    pub fn pending_tasks_report(&self) -> String {
        let ids: Vec<(u64, bool)> = {
            let tasks = self.tasks.borrow();
            let mut ids: Vec<(u64, bool)> = tasks
                .unfinished(self.id, |_| true)
                .into_iter()
                .map(|raw| (raw.id, tasks.slot(raw.slot).owner != 0))
                .collect();
            ids.sort_unstable();
            ids
        };
        if ids.is_empty() {
            return "No spawned task is pending; the root future waits alone.\n".to_string();
        }
        let mut out = format!("Pending tasks ({}):\n", ids.len());
        for &(id, local) in ids.iter().take(PENDING_LISTED_MAX) {
            let _ = writeln!(
                out,
                "  {}{}",
                self.describe_task(id),
                if local {
                    " (a task of a LocalSet, which runs only while the LocalSet is driven)"
                } else {
                    ""
                }
            );
            if let Some(wait) = self.describe_wait(id) {
                let _ = writeln!(out, "    waits {wait}");
            }
        }
        if ids.len() > PENDING_LISTED_MAX {
            let _ = writeln!(out, "  ... and {} more", ids.len() - PENDING_LISTED_MAX);
        }
        out
    }

    pub(super) fn deadlock_report(&self) -> String {
        let mut out = format!(
            "sim: deadlock: the root future is waiting, but no task can run and no timer or \
             event is pending, so nothing can ever wake it (virtual time {:?}, seed {:#x}).\n",
            Duration::from_nanos(self.time.now_ns()),
            self.config.seed
        );
        out.push_str(&self.pending_tasks_report());
        out.push_str(&format!(
            "Each waits on something no one will ever signal (a channel whose sender is kept \
             alive, a lock never released, a Notify never notified). Replay with SIM_SEED={:#x}.",
            self.config.seed
        ));
        out
    }

    pub(super) fn time_limit_message(&self, next_ns: u64) -> String {
        format!(
            "sim: time limit: the run would pass {:?} of virtual time (the next event is at \
             {:?}) with its root future still pending. Seed {:#x}. Raise the limit with {}=<seconds> \
             if the run really needs longer; otherwise something waits forever on a timer.\n{}",
            self.config.time_limit,
            Duration::from_nanos(next_ns),
            self.config.seed,
            TIME_LIMIT_VAR,
            self.pending_tasks_report().trim_end(),
        )
    }

    pub(super) fn step_limit_message(&self) -> String {
        format!(
            "sim: step limit: {} polls without the root future finishing (virtual time {:?}, \
             seed {:#x}). Some task is likely spinning (yielding in a loop) so the clock can \
             never move. Raise the limit with {}=<count> if the run really needs more.\n{}",
            self.config.step_limit,
            Duration::from_nanos(self.time.now_ns()),
            self.config.seed,
            STEP_LIMIT_VAR,
            self.pending_tasks_report().trim_end(),
        )
    }

    pub(super) fn livelock_message(&self) -> String {
        format!(
            "sim: livelock: {} polls at virtual time {:?} with no event between them (seed {:#x}). \
             Tasks keep waking each other (a retry or yield loop with no sleep, or messages over \
             links of zero latency: a loop bounded by virtual time never ends when nothing takes \
             time), so no timer can ever fire. Raise the limit with {}=<count> if the run really does that much work \
             in one instant.\n{}",
            self.config.instant_step_limit,
            Duration::from_nanos(self.time.now_ns()),
            self.config.seed,
            INSTANT_STEP_LIMIT_VAR,
            self.pending_tasks_report().trim_end(),
        )
    }
}
