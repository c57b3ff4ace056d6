//! The runtime: tokio's `Builder`, `Runtime` and `Handle` over one
//! simulation (`sim_runtime::Core`).
//!
//! Both flavors run every task on the calling thread, from the seed; the
//! flavor only decides what tokio's API permits (`block_in_place` needs
//! `multi_thread`, `time::pause` needs `current_thread`). Worker-thread
//! settings are accepted and recorded, because no worker thread exists.

mod builder;
mod handle;
mod id;
mod metrics;
#[allow(clippy::module_inception)]
mod runtime;

pub use builder::Builder;
pub use handle::{EnterGuard, Handle, TryCurrentError};
pub use id::Id;
pub use metrics::RuntimeMetrics;
pub(crate) use runtime::is_rt_shutdown_message;
pub use runtime::{is_rt_shutdown_err, Runtime, RuntimeFlavor};
