//! Readiness of raw file descriptors: `AsyncFd`.
//!
//! In a simulation, a descriptor's readiness must come from the
//! simulation, or a run could not be replayed from its seed. So an
//! `AsyncFd` watches a simulated connection: a TCP socket made through
//! libc (`std::net`, `socket2`) or a Unix stream pair from `socketpair`
//! (as `nix` and `std::os::unix::net::UnixStream::pair` make one), read
//! and written through libc as on Linux. Its readiness follows tokio's
//! edge-triggered rules (`watch.rs`). A real descriptor (a kernel socket,
//! pipe or device) is an escape: making an `AsyncFd` on one fails with an
//! error that names it. So does a simulated listener or datagram socket,
//! whose readiness is not watched yet.

mod async_fd;
mod error;
mod guard;
mod watch;

pub use async_fd::AsyncFd;
pub use error::{AsyncFdRegisterError, TryIoError};
pub use guard::{AsyncFdReadyGuard, AsyncFdReadyMutGuard};

/// The error of `try_new` and `try_with_interest`: tokio's older name.
#[deprecated(note = "use `AsyncFdRegisterError` instead")]
pub type AsyncFdTryNewError<T> = AsyncFdRegisterError<T>;
