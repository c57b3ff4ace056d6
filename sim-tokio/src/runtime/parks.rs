//! A runtime's park and unpark counts (`RuntimeMetrics::worker_park_count`
//! and `worker_park_unpark_count`) and its workers' busy time
//! (`worker_total_busy_duration`), kept past its shutdown as tokio keeps
//! them.
//!
//! Every worker parks when the simulation has nothing to run and the clock
//! must move (`Core::parks`): all of them are idle then. A `multi_thread`
//! runtime's workers also park when built and after each `block_on` (no
//! task of theirs runs until the next one), and unpark when a `block_on`
//! starts and at shutdown, as tokio's idle workers do.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The counts of one runtime, shared by its handles and metrics.
#[derive(Debug)]
pub(crate) struct Parks {
    multi_thread: bool,
    /// The simulation's parks when the runtime was built.
    idle_base: u64,
    /// The runtime's idle parks at shutdown (`u64::MAX`: not shut down).
    idle_final: AtomicU64,
    /// Parks and unparks of idle `multi_thread` workers outside the
    /// simulation's parks.
    extra_parks: AtomicU64,
    extra_unparks: AtomicU64,
    parked: AtomicBool,
    /// Each worker's busy ns at shutdown (`None`: not shut down).
    busy_final_ns: std::sync::Mutex<Option<Vec<u64>>>,
}

impl Parks {
    pub(crate) fn new(core_id: u16, multi_thread: bool) -> Parks {
        let idle_base = sim_runtime::context::lookup(core_id).map_or(0, |core| core.parks());
        let parks = Parks {
            multi_thread,
            idle_base,
            idle_final: AtomicU64::new(u64::MAX),
            extra_parks: AtomicU64::new(0),
            extra_unparks: AtomicU64::new(0),
            parked: AtomicBool::new(false),
            busy_final_ns: std::sync::Mutex::new(None),
        };
        parks.park();
        parks
    }

    /// Idle `multi_thread` workers park (no-op when parked, or for a
    /// `current_thread` runtime, whose worker is the caller's thread).
    pub(crate) fn park(&self) {
        if self.multi_thread && !self.parked.swap(true, Ordering::Relaxed) {
            self.extra_parks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Parked `multi_thread` workers unpark: a `block_on` starts, or the
    /// runtime shuts down.
    pub(crate) fn unpark(&self) {
        if self.multi_thread && self.parked.swap(false, Ordering::Relaxed) {
            self.extra_unparks.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The runtime shuts down: its idle parks stop counting, and its
    /// workers unpark.
    pub(crate) fn shut_down(&self, core_parks: Option<u64>, busy_ns: Vec<u64>) {
        let mut busy_final = self
            .busy_final_ns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        busy_final.get_or_insert(busy_ns);
        drop(busy_final);
        let idle = core_parks.map_or(0, |p| p.saturating_sub(self.idle_base));
        let _ =
            self.idle_final
                .compare_exchange(u64::MAX, idle, Ordering::Relaxed, Ordering::Relaxed);
        self.unpark();
    }

    fn idle(&self, core_parks: Option<u64>) -> u64 {
        match self.idle_final.load(Ordering::Relaxed) {
            u64::MAX => core_parks.map_or(0, |p| p.saturating_sub(self.idle_base)),
            done => done,
        }
    }

    /// Parks of each worker; `core_parks` is the simulation's count while
    /// it lives.
    pub(crate) fn parks(&self, core_parks: Option<u64>) -> u64 {
        self.idle(core_parks) + self.extra_parks.load(Ordering::Relaxed)
    }

    /// Parks plus unparks of each worker: every idle park of the
    /// simulation ends within its step.
    pub(crate) fn parks_and_unparks(&self, core_parks: Option<u64>) -> u64 {
        2 * self.idle(core_parks)
            + self.extra_parks.load(Ordering::Relaxed)
            + self.extra_unparks.load(Ordering::Relaxed)
    }

    /// Each worker's busy ns: kept at shutdown, or `live` (the
    /// simulation's count) before.
    pub(crate) fn busy_ns(&self, live: impl FnOnce() -> Vec<u64>) -> Vec<u64> {
        let busy_final = self
            .busy_final_ns
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        busy_final.clone().unwrap_or_else(live)
    }
}
