//! Synchronization for tasks, with tokio's semantics.
//!
//! `Semaphore`, `Mutex`, `RwLock` and bounded `mpsc` share one FIFO
//! semaphore (`batch_semaphore.rs`): waiters are served in arrival order,
//! and dropping a pending `acquire`, `lock` or `send` loses nothing and
//! wedges no other waiter. Wake-up order depends only on the program and
//! the seed's scheduling.

mod barrier;
mod batch_semaphore;
pub mod broadcast;
pub mod mpsc;
mod mutex;
mod notify;
mod once_cell;
pub mod oneshot;
mod rwlock;
mod semaphore;
mod set_once;
mod waits;
pub mod watch;

pub use barrier::{Barrier, BarrierWaitResult};
pub use batch_semaphore::{AcquireError, TryAcquireError};
pub use mutex::{
    MappedMutexGuard, Mutex, MutexGuard, OwnedMappedMutexGuard, OwnedMutexGuard, TryLockError,
};
pub use notify::Notify;
pub use once_cell::{OnceCell, SetError};
pub use rwlock::{
    OwnedRwLockMappedWriteGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock,
    RwLockMappedWriteGuard, RwLockReadGuard, RwLockWriteGuard,
};
pub use semaphore::{OwnedSemaphorePermit, Semaphore, SemaphorePermit};
pub use set_once::{SetOnce, SetOnceError};

/// Futures returned by this module's types.
pub mod futures {
    pub use super::notify::{Notified, OwnedNotified};
}

#[inline]
pub(crate) fn budget(cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
    sim_runtime::context::with_current(|core| core.poll_budget(cx))
        .unwrap_or(std::task::Poll::Ready(()))
}

/// Gives back the budget unit an operation spent when it then waited, as
/// tokio's `RestoreOnPending` does: only progress costs budget.
#[inline]
pub(crate) fn restore_budget_if_pending<T>(polled: &std::task::Poll<T>) {
    if polled.is_pending() {
        sim_runtime::context::with_current(|core| core.restore_budget());
    }
}

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A thread spinning on polls yields here, holding no lock of ours.
    sim_runtime::context::yield_if_due();
    // A panic while holding an internal lock leaves consistent state (every
    // critical section is a few field updates); keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
