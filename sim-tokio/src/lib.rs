//! tokio's public API, implemented on a deterministic simulator.
//!
//! This package is named `tokio` so that, in a simulation build, it replaces
//! the real tokio for the whole dependency graph (`cargo sim` applies a
//! `[patch.crates-io]` and `--cfg simulation`). Each module mirrors tokio's
//! module of the same name and keeps its documented semantics; an item that
//! is not implemented is absent, never a stub.
//!
//! Everything runs on one thread, on a virtual clock, and every choice comes
//! from the seed in `SIM_SEED`. See the repository's README and
//! ARCHITECTURE.md.
//!
//! ```no_run
//! #[tokio::main]
//! async fn main() {
//!     let handle = tokio::spawn(async { 21 * 2 });
//!     tokio::time::sleep(std::time::Duration::from_secs(3600)).await; // instant
//!     assert_eq!(handle.await.unwrap(), 42);
//! }
//! ```

#![warn(missing_docs)]
#![allow(clippy::new_without_default)]

pub mod fs;
pub mod io;
#[doc(hidden)]
pub mod macros;
pub mod net;
pub mod process;
pub mod runtime;
pub mod signal;
pub mod sim;
pub mod sync;
pub mod task;
pub mod time;

pub use task::spawn;

/// Marks an async function to be run on the simulated runtime as the
/// program's entry point (tokio-macros' expansion, which calls
/// [`runtime::Builder`]).
pub use macros_impl::main;
/// Marks an async test to be run on a fresh simulated runtime, with
/// tokio's arguments (`flavor`, `worker_threads`, `start_paused`, `crate`,
/// `unhandled_panic`). Under `cargo sim test --seeds`, the test's body runs
/// once per seed in one process, each seed on a fresh thread.
///
/// ```no_run
/// #[tokio::test(start_paused = true)]
/// async fn sleeps_cost_nothing() {
///     tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
/// }
/// ```
pub use sim_macros::test;

/// What `#[tokio::test]`'s expansion calls. Not public API.
#[doc(hidden)]
pub mod __sim {
    pub use sim_runtime::sweep::ShouldPanic;

    /// Runs a test's body: once, or once per seed of a sweep. The OS layer
    /// goes in first, so that the sweep's joins of its seeds' threads are
    /// known for waits that wake no task (`OsLayer::wait_uncounted`).
    pub fn run_test<R: std::process::Termination + 'static>(
        should_panic: ShouldPanic,
        body: fn() -> R,
    ) -> R {
        sim_os::install();
        sim_runtime::sweep::run_test(should_panic, body)
    }
}

pub(crate) mod util;
