use super::{EnterGuard, Handle, Runtime, RuntimeMetrics};
use crate::task::JoinHandle;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

/// Options for [`super::Builder::build_local`]. None exist yet, as in tokio.
#[derive(Default, Debug)]
#[non_exhaustive]
pub struct LocalOptions {
    _not_send: PhantomData<*mut u8>,
}

/// A `current_thread` runtime that runs `!Send` tasks directly:
/// [`LocalRuntime::spawn_local`] and `task::spawn_local` need no `LocalSet`.
pub struct LocalRuntime {
    handle: Handle,
    _not_send: PhantomData<*mut u8>,
}

impl LocalRuntime {
    pub(crate) fn from_runtime(runtime: Runtime) -> LocalRuntime {
        let handle = runtime.handle().clone();
        // The simulation now belongs to this LocalRuntime: its Drop closes
        // it, not the Runtime's.
        std::mem::forget(runtime);
        LocalRuntime {
            handle,
            _not_send: PhantomData,
        }
    }

    /// A local runtime with every driver enabled.
    ///
    /// # Errors
    /// When a `SIM_*` variable holds a bad value.
    pub fn new() -> std::io::Result<LocalRuntime> {
        super::Builder::new_current_thread()
            .enable_all()
            .build_local(LocalOptions::default())
    }

    /// The runtime's handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Spawns a `!Send` task.
    #[track_caller]
    pub fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let core = self.handle.core();
        core.with_scope(self.handle.scope(), || {
            crate::task::spawn_on_core(&core, future, None, "local", 0)
        })
    }

    /// Runs a blocking closure as one scheduled step.
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, func: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(func)
    }

    /// Runs the simulation until `future` completes.
    ///
    /// # Panics
    /// As [`Runtime::block_on`].
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        super::runtime::assert_may_block();
        super::runtime::block_on_counted(&self.handle, future)
    }

    /// Makes this the current runtime until the guard drops.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// Shuts down: cancels every task, then waits for the closures of
    /// its blocking pool to finish, at most `duration` of virtual time.
    pub fn shutdown_timeout(self, duration: Duration) {
        let limit_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        self.shut_down(Some(limit_ns));
    }

    /// Shuts down at once, cancelling every task, without waiting for the
    /// blocking pool's closures.
    pub fn shutdown_background(self) {
        self.shut_down(Some(0));
    }

    fn shut_down(self, wait_limit_ns: Option<u64>) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: read once from a value that is never used or dropped again.
        let handle = unsafe { std::ptr::read(&this.handle) };
        if std::thread::current().id() == handle.thread() {
            super::runtime::close(&handle, wait_limit_ns);
        }
    }

    /// What the runtime can tell about itself.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }
}

impl fmt::Debug for LocalRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalRuntime").finish_non_exhaustive()
    }
}

impl Drop for LocalRuntime {
    fn drop(&mut self) {
        // Cancels every task and reports the run, as a Runtime's drop does.
        if std::thread::current().id() == self.handle.thread() {
            super::runtime::close(&self.handle, None);
        }
    }
}

impl std::panic::UnwindSafe for LocalRuntime {}
impl std::panic::RefUnwindSafe for LocalRuntime {}
