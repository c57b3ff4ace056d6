use super::Handle;

/// What the runtime can tell about itself.
#[derive(Clone, Debug)]
pub struct RuntimeMetrics {
    handle: Handle,
}

impl RuntimeMetrics {
    pub(crate) fn new(handle: Handle) -> RuntimeMetrics {
        RuntimeMetrics { handle }
    }

    /// The number of worker threads the runtime was configured with (1 for
    /// `current_thread`). All of them are the calling thread.
    pub fn num_workers(&self) -> usize {
        self.handle.workers()
    }

    /// The number of tasks alive: spawned and not yet finished.
    pub fn num_alive_tasks(&self) -> usize {
        // After a shutdown every task is gone.
        let scope = self.handle.scope();
        self.handle
            .try_core()
            .map_or(0, |core| core.scope_live_tasks(scope))
    }

    /// The time worker `worker` spent running tasks: the virtual time its
    /// polls took (the `block_on` future's count for worker 0). On a paused
    /// clock polls take no time, so this stays zero there; on a clock that
    /// is not paused each poll takes a little, as on a real machine.
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_total_busy_duration(&self, worker: usize) -> std::time::Duration {
        self.check_worker(worker);
        let busy_ns = self.handle.parks().busy_ns(|| {
            self.handle
                .try_core()
                .map(|core| core.busy_ns(self.handle.scope()))
                .unwrap_or_default()
        });
        std::time::Duration::from_nanos(busy_ns.get(worker).copied().unwrap_or(0))
    }

    /// How many times worker `worker` parked: each time nothing was ready
    /// and the virtual clock moved to the next event (all workers are idle
    /// then), and for a `multi_thread` runtime each time its idle workers
    /// parked between `block_on` calls (see `parks.rs`). Kept after the
    /// runtime shuts down.
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        self.check_worker(worker);
        self.handle.parks().parks(self.core_parks())
    }

    /// Parks plus unparks of worker `worker` (even while it runs, odd while
    /// it is parked).
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        self.check_worker(worker);
        self.handle.parks().parks_and_unparks(self.core_parks())
    }

    /// The simulation's parks while the runtime lives.
    fn core_parks(&self) -> Option<u64> {
        self.handle.try_core().map(|core| core.parks())
    }

    #[track_caller]
    fn check_worker(&self, worker: usize) {
        assert!(
            worker < self.num_workers(),
            "worker index {worker} out of bounds: the runtime has {} workers",
            self.num_workers()
        );
    }

    /// The number of tasks in the global queue. While no `block_on` of
    /// the simulation is under way, its ready tasks wait there, as tasks
    /// spawned or woken from outside a tokio runtime wait in its global
    /// queue; while one runs, the simulator picks among the ready tasks
    /// by seed, and the queue is empty.
    pub fn global_queue_depth(&self) -> usize {
        self.handle
            .try_core()
            .filter(|core| !core.in_block_on())
            .map_or(0, |core| core.ready_count())
    }
}
