//! Work time: what a poll and a read of the clock cost in virtual time.
//!
//! On a clock that is not paused (a runtime built without `start_paused`)
//! work takes time, as on a real machine: each poll costs
//! `WORK_POLL_NS_MIN..=WORK_POLL_NS_MAX`, each read of the clock
//! `CLOCK_READ_NS`, and tasks that keep each other ready let time move
//! toward the next timer (`charge_busy`). None of it is an event: the
//! livelock limit and the hang watchdog count only events. A paused clock
//! moves only when every task waits, as paused tokio's does; the run's
//! `poll_cost_max_ns` (swarm) gives polls a cost on either.

use super::Core;

impl Core {
    /// Busy time passes: on a clock that is not paused, tasks that keep
    /// each other ready at one instant (a loop on `yield_now` waiting for a
    /// timer, or for a thread's sleep) let time move as a real machine's
    /// would, a millisecond each thousand polls at one instant, so the
    /// timer fires. A paused clock (`start_paused`, the harness) moves only when
    /// every task waits, as tokio's does.
    ///
    /// Only toward a pending event (a timer, a sleep), and never past it:
    /// with nothing to wait for, a spin keeps the clock still and is caught
    /// as the livelock it is.
    #[inline]
    pub(super) fn charge_busy(&self) {
        if self.time.is_paused() || self.steps_at_instant.get() < BUSY_POLLS_FREE {
            return;
        }
        self.charge_busy_steps();
    }

    /// The busy polls past the free ones move the clock (see above).
    fn charge_busy_steps(&self) {
        let now = self.time.now_ns();
        if let Some(next) = self.time.next_deadline().filter(|&d| d > now) {
            self.set_now((now + BUSY_POLLS_FREE * BUSY_POLL_NS).min(next));
        }
    }

    /// Charges one poll's cost to the clock. Polls have one when the run
    /// sets it (`SimConfig::poll_cost_max_ns`, drawn from its own stream):
    /// work takes virtual time, so a timer can come due in the middle of
    /// it. Otherwise a poll on a clock that is not paused takes
    /// `WORK_POLL_NS_MIN..=WORK_POLL_NS_MAX` ([`Core::charge_work`]), as it
    /// takes time on a real machine; the root's polls (`root`) count there
    /// too.
    #[inline]
    pub(super) fn charge_poll(&self, root: bool) {
        let max = self.config.poll_cost_max_ns;
        if max == 0 {
            self.charge_work();
            return;
        }
        if root {
            return;
        }
        let cost = self.stream_below("poll cost", max + 1);
        if cost > 0 {
            self.set_now(self.time.now_ns() + cost);
            self.count_busy(cost);
        }
    }

    /// A poll's work on a clock that is not paused: a real machine's clock
    /// moves while a task runs, so a wait measured around polls is never
    /// zero and a sleep ends after its deadline, never on it, as programs
    /// written against tokio expect (`Instant::elapsed() > timeout`).
    /// The cost is a hash of the step and the run's seed: no draw, no
    /// decision, the same on every replay. It does not count as the clock
    /// moving for the livelock limit: a spin is still caught.
    #[inline]
    fn charge_work(&self) {
        if self.time.is_paused() {
            return;
        }
        let mut state = self.work_salt ^ self.steps.get();
        let spread = WORK_POLL_NS_MAX - WORK_POLL_NS_MIN + 1;
        let cost = WORK_POLL_NS_MIN + crate::rng::splitmix64(&mut state) % spread;
        self.move_clock(self.time.now_ns() + cost);
        self.count_busy(cost);
    }

    /// Counts `ns` of polling for the latest poll's worker.
    fn count_busy(&self, ns: u64) {
        let (scope, worker) = self.polled_by.get();
        let (scope, worker) = (usize::from(scope), usize::from(worker));
        let mut busy = self.busy_ns.borrow_mut();
        if busy.len() <= scope {
            busy.resize_with(scope + 1, Vec::new);
        }
        let workers = &mut busy[scope];
        if workers.len() <= worker {
            workers.resize(worker + 1, 0);
        }
        workers[worker] += ns;
    }

    /// A read of the clock (`Instant::now`, `clock_gettime`). On a clock
    /// that is not paused it takes `CLOCK_READ_NS`, as a real read takes
    /// tens of ns: two reads are never equal, so time passes between two
    /// reads around `time::pause` or `time::resume`, as on tokio. Not an
    /// event, and never past the time limit (a read cannot fail). The
    /// runtime's own reads before its first poll are free: a run starts at
    /// zero.
    #[inline]
    pub fn charge_clock_read(&self) {
        if self.time.is_paused() || self.steps.get() == 0 {
            return;
        }
        let read_ns = self.time.now_ns() + CLOCK_READ_NS;
        if read_ns <= self.time_limit_ns() {
            self.time.move_to(read_ns);
        }
    }
}

/// What a read of a clock that is not paused costs (`charge_clock_read`).
const CLOCK_READ_NS: u64 = 25;

/// What a poll costs on a clock that is not paused (`charge_work`), at
/// least and at most: a wake and a poll of a task take a microsecond or
/// so on a real machine (tests run debug builds), so a wait that spans
/// another task's poll measures at least a microsecond, as bb8's
/// `get_wait_time` does on tokio.
const WORK_POLL_NS_MIN: u64 = 500;
const WORK_POLL_NS_MAX: u64 = 2_000;

/// Polls at one instant that take no virtual time (see `charge_poll`).
const BUSY_POLLS_FREE: u64 = 1_000;

/// What a poll past them costs, in virtual ns.
const BUSY_POLL_NS: u64 = 1_000;
