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
        self.handle.with_core(|core| core.live_tasks())
    }

    /// The number of tasks in the global queue: none, as the simulator
    /// keeps one ready set that it picks from by seed.
    pub fn global_queue_depth(&self) -> usize {
        0
    }
}
