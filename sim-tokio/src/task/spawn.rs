use super::JoinHandle;
use sim_runtime::{Core, TaskMeta};
use std::future::Future;
use std::panic::Location;

/// Spawns a task on the current runtime and returns its join handle.
///
/// The task is queued, never polled inline; the scheduler runs it when the
/// seed picks it.
///
/// # Panics
/// Outside a runtime, with tokio's message.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread()
/// #     .enable_all()
/// #     .start_paused(true)
/// #     .build()
/// #     .unwrap()
/// #     .block_on(async {
/// let handle = tokio::spawn(async { 6 * 7 });
/// assert_eq!(handle.await.unwrap(), 42);
/// # });
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    crate::util::with_runtime(|core| spawn_at(core, future, None, "task", 0, location))
}

/// Spawns onto `core` (owner 0: the scheduler; n: local set n).
#[track_caller]
pub(crate) fn spawn_on_core<F>(
    core: &Core,
    future: F,
    name: Option<&str>,
    kind: &'static str,
    owner: u32,
) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    spawn_at(core, future, name, kind, owner, Location::caller())
}

pub(crate) fn spawn_at<F>(
    core: &Core,
    future: F,
    name: Option<&str>,
    kind: &'static str,
    owner: u32,
    location: &'static Location<'static>,
) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    // After a shutdown, as in tokio: the task is cancelled at once.
    if core.is_shut_down() || core.scope_shut_down(core.current_scope()) {
        drop(future);
        return JoinHandle::cancelled(core.id());
    }
    let meta = TaskMeta {
        name: name.map(Box::from),
        location,
        kind,
    };
    JoinHandle::new(core.spawn(future, meta, owner))
}
