//! Small helpers shared across the facade.

use sim_runtime::Core;

/// The message tokio gives when a runtime is needed and none is current.
pub(crate) const NO_RUNTIME: &str =
    "there is no reactor running, must be called from the context of a Tokio 1.x runtime";

/// Runs `f` on the current runtime, or panics with tokio's message.
#[track_caller]
#[inline]
pub(crate) fn with_runtime<R>(f: impl FnOnce(&Core) -> R) -> R {
    match sim_runtime::context::with_current(f) {
        Some(r) => r,
        None => panic!("{NO_RUNTIME}"),
    }
}

/// Notes what the running task waits on (see `sim_runtime::WaitNote`),
/// for the reports that list pending tasks. Outside a runtime, nothing.
#[inline]
pub(crate) fn note_wait(
    what: &'static str,
    detail: sim_runtime::WaitDetail,
    site: Option<&'static std::panic::Location<'static>>,
) {
    sim_runtime::context::with_current(|core| {
        core.note_wait(sim_runtime::WaitNote { what, detail, site })
    });
}

/// Runs `future` to completion on a private, throwaway simulation: what the
/// `blocking_*` methods do when called outside any runtime (tokio parks the
/// thread; here the value must already be there or arrive from this thread).
///
/// # Panics
/// Inside a runtime, with tokio's message.
#[track_caller]
pub(crate) fn block_outside_runtime<F: std::future::Future>(future: F) -> F::Output {
    if sim_runtime::context::with_current(|_| ()).is_some() {
        panic!(
            "Cannot block the current thread from within a runtime. This happens because a \
             function attempted to block the current thread while the thread is being used to \
             drive asynchronous tasks."
        );
    }
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!(
            "sim: a blocking call outside the runtime would wait forever: nothing else runs on \
             this thread to complete it, and other threads are outside the simulation. Call it \
             only when the value is already there, or await it inside the runtime."
        ),
    }
}
