//! Tasks: spawning, joining, cancelling, local sets, task-locals and the
//! cooperative budget.
//!
//! Every task runs on the simulation's one thread. The scheduler picks the
//! next ready task from the seed, so the interleaving of tasks varies with
//! the seed and repeats with it.

mod abort_handle;
mod blocking;
mod builder;
pub mod coop;
mod error;
mod id;
mod join_handle;
pub mod join_set;
mod local;
mod spawn;
mod task_local;
mod yield_now;

pub use abort_handle::AbortHandle;
pub use blocking::{block_in_place, spawn_blocking};
pub use builder::Builder;
pub use coop::{consume_budget, unconstrained, Unconstrained};
pub use error::JoinError;
pub use id::{id, try_id, Id};
pub use join_handle::JoinHandle;
pub use join_set::JoinSet;
pub use local::{spawn_local, LocalEnterGuard, LocalSet};
pub use spawn::spawn;
pub use task_local::{AccessError, LocalKey};
pub use yield_now::yield_now;

pub(crate) use blocking::{AllowBlockInPlace, BlockingTask};
pub(crate) use spawn::{spawn_at, spawn_on_core};

/// Futures returned by this module's functions.
pub mod futures {
    pub use super::task_local::TaskLocalFuture;
}
