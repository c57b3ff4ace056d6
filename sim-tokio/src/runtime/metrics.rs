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

    /// The time worker `worker` spent running tasks. Polls take no virtual
    /// time, so this is zero.
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_total_busy_duration(&self, worker: usize) -> std::time::Duration {
        self.check_worker(worker);
        std::time::Duration::ZERO
    }

    /// How many times worker `worker` parked: each time nothing was ready
    /// and the virtual clock moved to the next event (counted on worker 0,
    /// the one thread that runs everything).
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        self.check_worker(worker);
        if worker == 0 {
            self.handle.try_core().map_or(0, |core| core.parks())
        } else {
            0
        }
    }

    /// Parks plus unparks of worker `worker`: twice the parks, as every
    /// park of the simulation ends within the same step.
    ///
    /// # Panics
    /// When `worker` is not below `num_workers()`.
    #[track_caller]
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        self.worker_park_count(worker) * 2
    }

    #[track_caller]
    fn check_worker(&self, worker: usize) {
        assert!(
            worker < self.num_workers(),
            "worker index {worker} out of bounds: the runtime has {} workers",
            self.num_workers()
        );
    }

    /// The number of tasks in the global queue: none, as the simulator
    /// keeps one ready set that it picks from by seed.
    pub fn global_queue_depth(&self) -> usize {
        0
    }
}
