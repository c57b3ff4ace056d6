//! Time, a part of the core: the virtual clock, each host's clock, and the
//! one event queue (timers, deliveries, faults) the clock moves through.
//!
//! The clock moves only forward and only when the core's loop finds nothing
//! ready (or a test advances it, or a poll has a cost). The time part holds
//! the state; the core decides when to move it and records each move.
//!
//! - [`host_clock`]: skew, jumps and drift per host.

pub mod host_clock;

use crate::events::{Action, EventKey, EventQueue, Fired};
use host_clock::{HostClocks, NodeClock};
use std::cell::{Cell, RefCell};
use std::task::Waker;

/// The time part.
pub(crate) struct Time {
    now_ns: Cell<u64>,
    paused: Cell<bool>,
    /// How many times the scheduler found nothing ready and moved the
    /// clock (what tokio counts as parks of its one worker).
    parks: Cell<u64>,
    /// The `std::time::Instant` at virtual time zero.
    base_instant: std::time::Instant,
    events: RefCell<EventQueue>,
    hosts: HostClocks,
}

impl Time {
    /// The clock at zero, paused or not.
    pub(crate) fn new(paused: bool) -> Time {
        Time {
            now_ns: Cell::new(0),
            paused: Cell::new(paused),
            parks: Cell::new(0),
            base_instant: std::time::Instant::now(),
            events: RefCell::new(EventQueue::default()),
            hosts: HostClocks::default(),
        }
    }

    /// Sets the `Instant` at virtual time zero (once, as the run is built).
    pub(crate) fn set_base_instant(&mut self, base: std::time::Instant) {
        self.base_instant = base;
    }

    /// The `std::time::Instant` at virtual time zero.
    #[inline]
    pub(crate) fn base_instant(&self) -> std::time::Instant {
        self.base_instant
    }

    /// The virtual time, in ns since the start of the run.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.now_ns.get()
    }

    /// Moves the clock to `now_ns`; returns whether it moved.
    pub(crate) fn move_to(&self, now_ns: u64) -> bool {
        let before = self.now_ns.get();
        assert!(now_ns >= before, "the clock never goes back");
        self.now_ns.set(now_ns);
        now_ns > before
    }

    /// Whether `time::pause` is in force.
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Sets the paused flag.
    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.set(paused);
    }

    /// How many times the loop went idle and moved the clock.
    pub(crate) fn parks(&self) -> u64 {
        self.parks.get()
    }

    /// Counts one park.
    pub(crate) fn park(&self) {
        self.parks.set(self.parks.get() + 1);
    }

    // ----- host clocks -------------------------------------------------------

    /// Sets `node`'s clock offsets from now on.
    pub(crate) fn set_host_clock(&self, node: u32, clock: NodeClock) {
        self.hosts.set(node, clock);
    }

    /// `node`'s clock offsets.
    pub(crate) fn host_clock(&self, node: u32) -> NodeClock {
        self.hosts.get(node)
    }

    /// What `node`'s monotonic clock reads now, in ns from the run's start.
    #[inline]
    pub(crate) fn local_now_ns(&self, node: u32) -> u64 {
        self.hosts.local_ns(node, self.now_ns.get())
    }

    /// The true time at which `node`'s monotonic clock reads `local_ns`.
    #[inline]
    pub(crate) fn true_ns_of_local(&self, node: u32, local_ns: u64) -> u64 {
        self.hosts.true_ns_of(node, local_ns)
    }

    /// How far `node`'s wall clock is off true time now, in ns.
    #[inline]
    pub(crate) fn wall_offset_ns(&self, node: u32) -> i64 {
        self.hosts.wall_offset_ns(node, self.now_ns.get())
    }

    // ----- the event queue ---------------------------------------------------

    /// Queues `action` at `deadline_ns`; returns its key and sequence number.
    #[inline]
    pub(crate) fn insert(&self, deadline_ns: u64, action: Action) -> (EventKey, u64) {
        self.events.borrow_mut().insert(deadline_ns, action)
    }

    /// Takes a pending event's action out of the queue.
    pub(crate) fn take(&self, key: EventKey) -> Option<Action> {
        self.events.borrow_mut().take(key)
    }

    /// Runs `f` on a pending timer's waker; false when `key` is no pending
    /// timer.
    pub(crate) fn with_timer_waker(
        &self,
        key: EventKey,
        f: impl FnOnce(&mut Option<Waker>),
    ) -> bool {
        match self.events.borrow_mut().waker_mut(key) {
            Some(waker) => {
                f(waker);
                true
            }
            None => false,
        }
    }

    /// Cancels a pending event.
    pub(crate) fn cancel(&self, key: EventKey) -> bool {
        self.events.borrow_mut().cancel(key)
    }

    /// Whether an event is still pending.
    pub(crate) fn contains(&self, key: EventKey) -> bool {
        self.events.borrow().contains(key)
    }

    /// The earliest pending deadline.
    #[inline]
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.events.borrow_mut().next_deadline()
    }

    /// Whether an event is due at the current instant.
    #[inline]
    pub(crate) fn due_now(&self) -> bool {
        self.next_deadline()
            .is_some_and(|deadline| deadline <= self.now_ns.get())
    }

    /// Takes the next event due now, in the order events were scheduled.
    #[inline]
    pub(crate) fn pop_due(&self) -> Option<Fired> {
        self.events.borrow_mut().pop_due(self.now_ns.get())
    }

    /// Runs `f` on the action of the earliest pending event, if any (to
    /// fetch its memory early).
    #[inline]
    pub(crate) fn with_next_action(&self, f: impl FnOnce(&Action)) {
        if let Some(action) = self.events.borrow().peek_action() {
            f(action);
        }
    }

    /// How many events are pending.
    #[inline]
    pub(crate) fn pending(&self) -> usize {
        self.events.borrow().len()
    }

    /// How many pending timers keep a waker `matches` accepts.
    pub(crate) fn count_timer_wakers(&self, matches: impl Fn(&Waker) -> bool) -> u32 {
        self.events.borrow().count_wakers(matches)
    }

    /// Drops every pending event (a shutdown); returns their actions.
    pub(crate) fn clear(&self) -> Vec<Action> {
        self.events.borrow_mut().clear()
    }
}
