use super::JoinHandle;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A blocking closure as a task: it runs, whole, on its first poll.
pub(crate) struct BlockingTask<F> {
    func: Option<F>,
}

impl<F> BlockingTask<F> {
    pub(crate) fn new(func: F) -> BlockingTask<F> {
        BlockingTask { func: Some(func) }
    }
}

impl<F> Unpin for BlockingTask<F> {}

impl<F: FnOnce() -> R, R> Future for BlockingTask<F> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<R> {
        let func = self
            .func
            .take()
            .expect("a blocking task runs once and is then finished");
        // Off the runtime's tasks, as on tokio's blocking pool: it may
        // block on a runtime.
        Poll::Ready(sim_runtime::context::blocking_section(func))
    }
}

/// Runs a blocking closure as one scheduled step: a task that calls `f`
/// when the seed picks it, taking no virtual time. No thread is started.
///
/// Cancelling it before it runs means `f` never runs; once it runs it
/// finishes, as in tokio.
///
/// # Panics
/// Outside a runtime.
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let location = std::panic::Location::caller();
    crate::util::with_runtime(|core| {
        super::spawn::spawn_at(core, BlockingTask::new(f), None, "blocking", 0, location)
    })
}

/// Runs `f` in place. tokio requires the `multi_thread` flavor for this and
/// so does the simulator; there it runs inline, as the simulation has no
/// other thread to move tasks to.
///
/// # Panics
/// On a `current_thread` runtime, as in tokio.
#[track_caller]
pub fn block_in_place<F, R>(f: F) -> R
where
    F: FnOnce() -> R,
{
    let flavor = sim_runtime::context::with_current(|core| core.flavor());
    // On a current_thread runtime, or in a LocalSet's task, as in tokio.
    let in_local =
        sim_runtime::context::with_current(|core| core.current_local() != 0).unwrap_or(false);
    if flavor == Some(sim_runtime::Flavor::CurrentThread) || in_local {
        panic!("can call blocking only when running on the multi-threaded runtime");
    }
    // A blocking section has no budget, as in tokio; the task's comes back
    // after it, even if `f` panics.
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(previous) = self.0 {
                sim_runtime::context::with_current(|core| core.set_unconstrained(previous));
            }
        }
    }
    let _restore = Restore(sim_runtime::context::with_current(|core| {
        core.set_unconstrained(true)
    }));
    sim_runtime::context::blocking_section(f)
}
