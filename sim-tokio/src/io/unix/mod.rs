//! Readiness of raw file descriptors: `AsyncFd`.
//!
//! In a simulation, a descriptor's readiness must come from the
//! simulation, or a run could not be replayed from its seed. So an
//! `AsyncFd` watches a simulated socket made through libc during the run:
//! a `std::net` TCP stream, listener or UDP socket, a Unix stream pair from
//! `socketpair` or a pipe from `pipe2` (as nix and `std` make them), read
//! and written through libc as on Linux. Its readiness follows tokio's
//! edge-triggered rules (`watch.rs`). A real descriptor (a kernel socket,
//! pipe or device) is an escape: making an `AsyncFd` on one fails with an
//! error that names it.

mod async_fd;
mod error;
mod watch;

pub use async_fd::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard};
pub use error::{AsyncFdRegisterError, TryIoError};

/// The error of `try_new` and `try_with_interest`: tokio's older name.
#[deprecated(note = "use `AsyncFdRegisterError` instead")]
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;
