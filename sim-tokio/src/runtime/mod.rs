//! The runtime: tokio's `Builder`, `Runtime` and `Handle` over one
//! simulation (`sim_runtime::Core`).
//!
//! Both flavors run every task on the calling thread, from the seed; the
//! flavor only decides what tokio's API permits (`block_in_place` needs
//! `multi_thread`, `time::pause` needs `current_thread`). Worker-thread
//! settings are accepted and recorded, because no worker thread exists.

pub(crate) mod builder;
mod handle;
mod id;
mod local_runtime;
mod metrics;
mod parks;
#[allow(clippy::module_inception)]
mod runtime;

pub use builder::Builder;
pub use handle::{EnterGuard, Handle, TryCurrentError};
pub use id::Id;
pub use local_runtime::{LocalOptions, LocalRuntime};
pub use metrics::RuntimeMetrics;
pub(crate) use runtime::is_rt_shutdown_message;
pub use runtime::{is_rt_shutdown_err, Runtime, RuntimeFlavor};

/// The index of the worker thread running the current task: `Some(0)` inside
/// a runtime (the simulation's one thread), `None` outside.
pub fn worker_index() -> Option<usize> {
    sim_runtime::context::with_current(|_| 0)
}
