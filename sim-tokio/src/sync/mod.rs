//! Synchronization for tasks. This part holds what the first milestone needs
//! (`oneshot`, `mpsc`, `Mutex`, `Notify`); the rest of tokio's `sync` comes
//! with its own issue and is absent until then.
//!
//! Waiters are served in FIFO order where tokio documents it, and dropping a
//! pending operation loses nothing and wedges no other waiter.

pub mod mpsc;
mod mutex;
mod notify;
pub mod oneshot;
mod waiters;

pub use mutex::{Mutex, MutexGuard, TryLockError};
pub use notify::{Notified, Notify};

/// Futures returned by this module's types.
pub mod futures {
    pub use super::notify::Notified;
}

pub(crate) fn budget(cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
    sim_runtime::context::with_current(|core| core.poll_budget(cx))
        .unwrap_or(std::task::Poll::Ready(()))
}

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding an internal lock leaves consistent state (every
    // critical section is a few field updates); keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
