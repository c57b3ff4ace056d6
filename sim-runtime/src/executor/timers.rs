//! Timers and scheduled callbacks on the time part's event queue, as the
//! core wires them: a timer keeps its task's waker in the queue's
//! uncounted form (see `waker::keep`), and each insertion is traced.

use super::waker;
use super::Core;
use crate::events::{Action, EventKey, Handler};
use crate::trace::{EventKind, Label};
use std::task::Waker;

impl Core {
    /// Registers a timer at `deadline_ns` that wakes `waker`.
    pub fn timer_insert(&self, deadline_ns: u64, waker: Option<&Waker>) -> EventKey {
        self.insert_timer(deadline_ns, waker.map(waker::keep))
    }

    /// Inserts a timer with a waker already in its kept form.
    fn insert_timer(&self, deadline_ns: u64, waker: Option<Waker>) -> EventKey {
        let (key, seq) = self.time.insert(deadline_ns, Action::Wake(waker));
        self.trace(
            EventKind::TimerSet,
            self.current_task.get(),
            Label::Timer {
                id: seq,
                at_ns: deadline_ns,
            },
        );
        key
    }

    /// Moves a timer to a new deadline, keeping its waker (if it is still
    /// pending) so a task waiting on it is woken at the new time.
    pub fn timer_reset(&self, key: EventKey, deadline_ns: u64) -> EventKey {
        let waker = match self.time.take(key) {
            Some(Action::Wake(waker)) => waker,
            _ => None,
        };
        // A deadline already reached wakes the waiting task at once, inside
        // the reset, as tokio's does.
        if deadline_ns <= self.time.now_ns() {
            if let Some(waker) = waker {
                waker.wake();
            }
            return self.insert_timer(deadline_ns, None);
        }
        self.insert_timer(deadline_ns, waker)
    }

    /// Replaces a pending timer's waker. Returns false when the timer
    /// already fired or was cancelled.
    pub fn timer_set_waker(&self, key: EventKey, waker: &Waker) -> bool {
        self.time.with_timer_waker(key, |current| match current {
            Some(current) if waker::keeps(current, waker) => {}
            _ => *current = Some(waker::keep(waker)),
        })
    }

    /// Cancels a pending timer or event.
    pub fn event_cancel(&self, key: EventKey) -> bool {
        self.time.cancel(key)
    }

    /// Whether a timer or event is still pending.
    pub fn event_pending(&self, key: EventKey) -> bool {
        self.time.contains(key)
    }

    /// Schedules `handler`'s run of `arg` at `at_ns` (never in the past)
    /// in this runtime's context: [`Core::schedule`] without a box.
    #[inline]
    pub fn schedule_with(
        &self,
        at_ns: u64,
        label: &'static str,
        handler: &'static Handler,
        arg: u64,
    ) -> EventKey {
        let at_ns = at_ns.max(self.time.now_ns());
        self.time
            .insert(at_ns, Action::CallWith(handler, arg, label))
            .0
    }

    /// Schedules `callback` to run at `at_ns` (never in the past) in this
    /// runtime's context.
    pub fn schedule(
        &self,
        at_ns: u64,
        label: &'static str,
        callback: Box<dyn FnOnce()>,
    ) -> EventKey {
        let at_ns = at_ns.max(self.time.now_ns());
        self.time.insert(at_ns, Action::Call(callback, label)).0
    }
}
