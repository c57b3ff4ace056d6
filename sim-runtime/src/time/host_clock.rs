//! Each host's clocks: how far a host's `Instant` and `SystemTime` read
//! from true virtual time (skew, jumps and drift), for the time part.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

/// How a node's clocks differ from true (virtual) time. Timers, sleeps and
/// the trace stay on true time; only what the node's tasks read is shifted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeClock {
    /// The node's monotonic clock (`Instant`) reads this far ahead.
    pub monotonic_offset_ns: u64,
    /// The node's wall clock (`SystemTime`) reads this far off (a jump
    /// changes it, either way).
    pub wall_offset_ns: i64,
    /// The node's clocks run this many parts per million fast (or slow,
    /// below zero) from `drift_since_ns` on: a crystal's error.
    pub drift_ppm: i64,
    /// The true time from which `drift_ppm` counts.
    pub drift_since_ns: u64,
}

/// The largest clock drift a node may have, in ppm (10%: far past any real
/// crystal, and far from a clock that stops, which would break `Instant`).
pub const DRIFT_PPM_MAX: i64 = 100_000;

impl NodeClock {
    /// How far the drift has moved the node's clocks by true time `true_ns`.
    pub fn drift_ns(&self, true_ns: u64) -> i64 {
        let elapsed = true_ns.saturating_sub(self.drift_since_ns) as i128;
        (elapsed * self.drift_ppm as i128 / 1_000_000) as i64
    }

    /// What the node's monotonic clock reads at true time `true_ns`.
    pub fn local_ns(&self, true_ns: u64) -> u64 {
        let local =
            true_ns as i128 + self.monotonic_offset_ns as i128 + self.drift_ns(true_ns) as i128;
        local.clamp(0, u64::MAX as i128) as u64
    }

    /// The first true time at which the node's monotonic clock reads
    /// `local_ns` or more (the inverse of [`NodeClock::local_ns`]).
    pub fn true_ns_of(&self, local_ns: u64) -> u64 {
        let undrifted = local_ns.saturating_sub(self.monotonic_offset_ns);
        if self.drift_ppm == 0 || undrifted <= self.drift_since_ns {
            return undrifted;
        }
        debug_assert!(self.drift_ppm.abs() <= DRIFT_PPM_MAX);
        let span = (undrifted - self.drift_since_ns) as i128;
        let rate = 1_000_000 + self.drift_ppm as i128;
        let guess = self.drift_since_ns as i128 + (span * 1_000_000 + rate - 1) / rate;
        let mut t = guess.clamp(0, u64::MAX as i128) as u64;
        // Rounding in drift_ns may leave the guess a nanosecond short; the
        // local clock rises at least 0.9 ns per ns, so two steps are enough.
        for _ in 0..4 {
            if self.local_ns(t) >= local_ns {
                break;
            }
            t += 1;
        }
        t
    }
}

/// Every host's clock, by host; `any` is false while every host reads
/// true time, so clock reads stay one add.
#[derive(Default)]
pub(crate) struct HostClocks {
    clocks: RefCell<BTreeMap<u32, NodeClock>>,
    any: Cell<bool>,
}

impl HostClocks {
    /// Sets `node`'s clock offsets from now on.
    pub(crate) fn set(&self, node: u32, clock: NodeClock) {
        self.clocks.borrow_mut().insert(node, clock);
        self.any.set(true);
    }

    /// `node`'s clock offsets.
    pub(crate) fn get(&self, node: u32) -> NodeClock {
        if !self.any.get() {
            return NodeClock::default();
        }
        self.clocks.borrow().get(&node).copied().unwrap_or_default()
    }

    /// What `node`'s monotonic clock reads at true time `now_ns`.
    #[inline]
    pub(crate) fn local_ns(&self, node: u32, now_ns: u64) -> u64 {
        if !self.any.get() {
            return now_ns;
        }
        self.get(node).local_ns(now_ns)
    }

    /// The true time at which `node`'s monotonic clock reads `local_ns`.
    #[inline]
    pub(crate) fn true_ns_of(&self, node: u32, local_ns: u64) -> u64 {
        if !self.any.get() {
            return local_ns;
        }
        self.get(node).true_ns_of(local_ns)
    }

    /// How far `node`'s wall clock is off true time at `now_ns`, in ns.
    #[inline]
    pub(crate) fn wall_offset_ns(&self, node: u32, now_ns: u64) -> i64 {
        if !self.any.get() {
            return 0;
        }
        let clock = self.get(node);
        (clock.monotonic_offset_ns as i64)
            .saturating_add(clock.drift_ns(now_ns))
            .saturating_add(clock.wall_offset_ns)
    }
}
