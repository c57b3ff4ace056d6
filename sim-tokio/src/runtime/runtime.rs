use super::{Builder, EnterGuard, Handle, RuntimeMetrics};
use crate::task::JoinHandle;
use std::fmt;
use std::future::Future;
use std::io;
use std::rc::Rc;
use std::time::Duration;

/// The flavor of a runtime.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
#[non_exhaustive]
pub enum RuntimeFlavor {
    /// The flavor that executes all tasks on the current thread.
    CurrentThread,
    /// The flavor that tokio runs on a thread pool; simulated on the
    /// current thread.
    MultiThread,
}

/// A simulated tokio runtime: one simulation, owned by the thread that
/// built it.
///
/// Dropping it cancels every task that has not finished (their join handles
/// report cancellation) and prints the run's trace hash.
pub struct Runtime {
    handle: Handle,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("handle", &self.handle)
            .finish()
    }
}

impl Runtime {
    pub(crate) fn from_core(
        core: Rc<sim_runtime::Core>,
        scope: u16,
        flavor: RuntimeFlavor,
        name: Option<String>,
        workers: usize,
    ) -> Runtime {
        Runtime {
            handle: Handle::new(core.id(), scope, flavor, name, workers),
        }
    }

    /// A `multi_thread` runtime with every driver enabled.
    ///
    /// # Errors
    /// When a `SIM_*` variable holds a bad value.
    pub fn new() -> io::Result<Runtime> {
        Builder::new_multi_thread().enable_all().build()
    }

    /// The runtime's handle.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Spawns a task; it first runs when the runtime is driven.
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
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
    /// When called from inside a runtime; on a deadlock, or at the time or
    /// step limit, with a message that says which and how to replay.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        assert_may_block();
        block_on_counted(&self.handle, future)
    }

    /// Makes this the current runtime until the guard drops.
    pub fn enter(&self) -> EnterGuard<'_> {
        self.handle.enter()
    }

    /// Shuts down: cancels every task, then waits for the closures of
    /// its blocking pool (`spawn_blocking`) to finish, at most `duration` of
    /// virtual time, while the simulation runs on.
    pub fn shutdown_timeout(self, duration: Duration) {
        let limit_ns = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        self.shut_down(Some(limit_ns));
    }

    /// Shuts down at once, cancelling every task, without waiting for the
    /// blocking pool's closures.
    pub fn shutdown_background(self) {
        self.shut_down(Some(0));
    }

    /// Shuts down without the check a drop makes: a shutdown that does not
    /// wait is allowed inside an asynchronous context, as in tokio.
    fn shut_down(self, wait_limit_ns: Option<u64>) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: read once from a value that is never used or dropped again.
        let handle = unsafe { std::ptr::read(&this.handle) };
        close_from_any_thread(handle, wait_limit_ns);
    }

    /// What the runtime can tell about itself.
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }
}

impl std::panic::UnwindSafe for Runtime {}
impl std::panic::RefUnwindSafe for Runtime {}

impl Drop for Runtime {
    fn drop(&mut self) {
        let in_async = sim_runtime::context::with_current(|core| core.in_block_on())
            .unwrap_or(false)
            && !sim_runtime::context::in_blocking_section();
        if in_async && !std::thread::panicking() {
            panic!(
                "Cannot drop a runtime in a context where blocking is not allowed. This happens \
                 when a runtime is dropped from within an asynchronous context."
            );
        }
        // As tokio's drop, it waits for the blocking pool's closures.
        close_from_any_thread(self.handle.clone(), None);
    }
}

/// Runtimes dropped or shut down on another thread than their own, to be
/// closed by their own thread (the only one that may touch a simulation)
/// the next time it runs one: at a `block_on`, or as it waits outside one
/// (`sim_runtime::context::before_drive`). One entry per such runtime.
static CLOSED_ELSEWHERE: std::sync::Mutex<Vec<(Handle, Option<u64>)>> =
    std::sync::Mutex::new(Vec::new());

/// How many entries `CLOSED_ELSEWHERE` holds: the check costs a load while
/// it is zero (it runs at every futex wait of a runtime's own thread).
static CLOSED_ELSEWHERE_COUNT: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(0);

/// Closes `handle`'s runtime: now on its own thread; otherwise at its own
/// thread's next turn of a simulation, as tokio's drivers shut down and
/// wake their waiters with the shutdown error whichever thread dropped the
/// runtime.
fn close_from_any_thread(handle: Handle, wait_limit_ns: Option<u64>) {
    if std::thread::current().id() == handle.thread() {
        close(&handle, wait_limit_ns);
        return;
    }
    CLOSED_ELSEWHERE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((handle, wait_limit_ns));
    CLOSED_ELSEWHERE_COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    sim_runtime::context::set_before_drive(close_the_ones_dropped_elsewhere);
}

/// Closes this thread's runtimes that another thread dropped.
fn close_the_ones_dropped_elsewhere() {
    use std::sync::atomic::Ordering;
    if CLOSED_ELSEWHERE_COUNT.load(Ordering::SeqCst) == 0 {
        return;
    }
    // Called inside a futex wait too: a lock held elsewhere is left for
    // the next call rather than waited on (which would wait on a futex).
    let mut all = match CLOSED_ELSEWHERE.try_lock() {
        Ok(all) => all,
        Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    let me = std::thread::current().id();
    let (mine, others): (Vec<_>, Vec<_>) = std::mem::take(&mut *all)
        .into_iter()
        .partition(|(handle, _): &(Handle, Option<u64>)| handle.thread() == me);
    *all = others;
    CLOSED_ELSEWHERE_COUNT.fetch_sub(mine.len(), Ordering::SeqCst);
    drop(all);
    for (handle, wait_limit_ns) in mine {
        close(&handle, wait_limit_ns);
    }
}

/// Panics, at the caller's line, when a runtime is blocked on from inside
/// another's asynchronous context (a blocking section may, as in tokio).
#[track_caller]
pub(crate) fn assert_may_block() {
    let in_async = sim_runtime::context::with_current(|core| core.in_block_on()).unwrap_or(false)
        && !sim_runtime::context::in_blocking_section();
    if in_async {
        panic!(
            "Cannot start a runtime from within a runtime. This happens because a function \
             (like `block_on`) attempted to block the current thread while the thread is being \
             used to drive asynchronous tasks."
        );
    }
}

/// Shuts down the runtime of `handle`: its tasks only, while other
/// runtimes share its simulation; the whole simulation when it is the last.
/// First it waits for its blocking pool's closures, at most
/// `wait_limit_ns` of virtual time (`None`: while they run).
/// Blocks on `future` in `handle`'s runtime, its idle workers unparked
/// meanwhile (see `parks.rs`).
pub(crate) fn block_on_counted<F: Future>(handle: &Handle, future: F) -> F::Output {
    /// Parks the workers again when the `block_on` ends, by return or
    /// unwind.
    struct Repark<'a>(&'a Handle);
    impl Drop for Repark<'_> {
        fn drop(&mut self) {
            self.0.parks().park();
        }
    }
    close_the_ones_dropped_elsewhere();
    let core = handle.core();
    handle.parks().unpark();
    let _repark = Repark(handle);
    core.block_on_in(handle.scope(), future)
}

pub(crate) fn close(handle: &Handle, wait_limit_ns: Option<u64>) {
    let core = sim_runtime::context::lookup(handle.core_id());
    let core_parks = core.as_ref().map(|core| core.parks());
    let busy_ns = core
        .map(|core| core.busy_ns(handle.scope()))
        .unwrap_or_default();
    handle.parks().shut_down(core_parks, busy_ns);
    if let Some(core) = sim_runtime::context::lookup(handle.core_id()) {
        if !core.scope_shut_down(handle.scope()) {
            core.wait_for_blocking_pool(handle.scope(), wait_limit_ns);
        }
    }
    match sim_runtime::context::lookup(handle.core_id()) {
        Some(core) if core.live_scopes() > 1 => core.shutdown_scope(handle.scope()),
        _ => sim_runtime::Core::close(handle.core_id()),
    }
}

/// Whether `err` is the error tokio gives for I/O on a runtime that shut
/// down.
pub fn is_rt_shutdown_err(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::Other && err.to_string() == SHUTDOWN_MESSAGE
}

pub(crate) fn is_rt_shutdown_message() -> &'static str {
    SHUTDOWN_MESSAGE
}

pub(crate) const SHUTDOWN_MESSAGE: &str = sim_net::SHUTDOWN_MESSAGE;
