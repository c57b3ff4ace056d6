//! The simulation harness: several named hosts on one simulated network,
//! faults at virtual times, per-host disks. This module is the facade's
//! own (real tokio has none), so a crate that uses it needs nothing in its
//! `Cargo.toml` but `tokio`; its code goes under `#[cfg(simulation)]`,
//! since plain builds compile against the real tokio.
//!
//! A harness test is a plain `#[test]`: `cargo sim test --seeds` sweeps it
//! like any other, one process per seed.
//!
//! ```
//! use std::time::Duration;
//! use tokio::sim::{Fault, Sim};
//!
//! let mut sim = Sim::new(); // seeded from SIM_SEED
//! sim.host("server", || async {
//!     let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
//!     loop {
//!         let (mut stream, _) = listener.accept().await.unwrap();
//!         tokio::spawn(async move {
//!             let (mut r, mut w) = stream.split();
//!             let _ = tokio::io::copy(&mut r, &mut w).await;
//!         });
//!     }
//! });
//! sim.at(Duration::from_secs(5), Fault::Partition("client".into(), "server".into()));
//! sim.client("client", async {
//!     // Retried until the partition heals (the liveness phase heals it).
//!     let stream = tokio::net::TcpStream::connect("server:7").await.unwrap();
//!     drop(stream);
//! });
//! let report = sim.run();
//! println!("{} events, trace sha256 {}", report.events, report.trace_hash);
//! ```

use std::time::Duration;

mod buggify;
pub mod process;
pub mod property;
mod rng;

/// Asserts that a condition holds every time, and that some run of a sweep
/// reaches the assertion: `assert_always!(cond, "message" [, details])`.
/// See [`property`].
#[doc(inline)]
pub use crate::__sim_assert_always as assert_always;
/// Asserts that a condition holds every time the assertion is reached,
/// which may be never: `assert_always_or_unreachable!(cond, "message" [,
/// details])`. See [`property`].
#[doc(inline)]
pub use crate::__sim_assert_always_or_unreachable as assert_always_or_unreachable;
/// Asserts that some run of a sweep reaches this point:
/// `assert_reachable!("message" [, details])`. See [`property`].
#[doc(inline)]
pub use crate::__sim_assert_reachable as assert_reachable;
/// Asserts that a condition holds at least once in a sweep:
/// `assert_sometimes!(cond, "message" [, details])`. See [`property`].
#[doc(inline)]
pub use crate::__sim_assert_sometimes as assert_sometimes;
/// Asserts that no run reaches this point: `assert_unreachable!("message" [,
/// details])`. See [`property`].
#[doc(inline)]
pub use crate::__sim_assert_unreachable as assert_unreachable;
pub use buggify::buggify;
pub use rng::{rng, Stream};
pub use sim_harness::{control, history, rollout, swarm};
pub use sim_harness::{
    publish, DiskConfig, Fault, LinkConfig, Nemesis, Observations, Publication, Sim, SimReport,
};

/// Virtual time since the current run started: what `tokio::time::Instant`
/// measures from, on every host.
///
/// # Panics
/// Outside a simulation run.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// // Paused: the clock moves only by timers (on a clock that is not
/// // paused, polls and reads of the clock take time, as on a real machine).
/// #[tokio::main(flavor = "current_thread", start_paused = true)]
/// async fn main() {
///     tokio::time::sleep(Duration::from_secs(90)).await;
///     assert_eq!(tokio::sim::now(), Duration::from_secs(90));
/// }
/// ```
#[track_caller]
pub fn now() -> Duration {
    sim_runtime::context::with_current(|core| Duration::from_nanos(core.now_ns()))
        .expect("sim: tokio::sim::now() was called outside a simulation run")
}

/// The name of the current task's host (`main` outside a harness host).
///
/// # Panics
/// Outside a simulation run.
///
/// # Examples
///
/// ```
/// let mut sim = tokio::sim::Sim::new();
/// sim.client("client-1", async {
///     assert_eq!(tokio::sim::host_name(), "client-1");
/// });
/// sim.run();
/// ```
#[track_caller]
pub fn host_name() -> String {
    sim_net::with_net(|net| net.host_name(net.current_host()))
}

/// The seed of the current run, if the thread is in one.
///
/// # Examples
///
/// ```
/// assert_eq!(tokio::sim::seed(), None, "outside any run");
/// let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// runtime.block_on(async {
///     // Under `cargo sim test`, the seed the runner chose (SIM_SEED).
///     let seed = tokio::sim::seed().expect("inside a run");
///     println!("this run replays with SIM_SEED={seed:#x}");
/// });
/// ```
pub fn seed() -> Option<u64> {
    sim_runtime::context::with_current(|core| core.config().seed)
}

/// Sets the disk configuration (capacity, latency, fault rates) of the
/// current task's host, from now on. In a harness run, [`Sim::disk`] does it
/// before the run and [`Fault::Disk`] at a virtual time.
///
/// # Panics
/// Outside a simulation run; on a configuration that does not validate.
///
/// # Examples
///
/// ```
/// use tokio::sim::DiskConfig;
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let path = std::env::temp_dir().join("set-disk-config-example");
///     tokio::fs::write(&path, b"ok").await.unwrap();
///     // From now on every write fails with EIO.
///     tokio::sim::set_disk_config(DiskConfig { write_error_rate: 1.0, ..DiskConfig::default() });
///     let err = tokio::fs::write(&path, b"lost").await.unwrap_err();
///     assert_eq!(err.raw_os_error(), Some(5)); // EIO
/// }
/// ```
#[track_caller]
pub fn set_disk_config(config: DiskConfig) {
    let node = sim_runtime::context::with_current(|core| core.current_node())
        .expect("sim: tokio::sim::set_disk_config() was called outside a simulation run");
    sim_fs::set_disk_config(node, config);
}
