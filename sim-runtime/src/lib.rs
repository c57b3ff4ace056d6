//! `sim-runtime`: the deterministic core under the `tokio` facade.
//!
//! One thread runs one simulation at a time. Its only source of choice is a
//! seed: the scheduler picks among ready tasks with a seeded generator, the
//! virtual clock moves only when nothing is ready, and every harness event is
//! recorded in a trace whose SHA-256 identifies the run. See ARCHITECTURE.md
//! at the repository root for how the pieces fit.
//!
//! - [`config`]: the seed and limits of a run (`SIM_SEED`, ...).
//! - [`executor`]: the scheduler loop, tasks, timers and the clock.
//! - [`events`]: the one event queue (timers, and later network and disk).
//! - [`trace`]: the trace and its hash (`SIM_TRACE`).
//! - [`decision`]: the decision log (`SIM_RECORD`, `SIM_REPLAY`).
//! - [`logs`]: the service's `tracing` events in the trace file
//!   (`SIM_TRACE_LOGS`).
//! - [`context`]: which runtime the current thread is in.
//! - [`sweep`]: what a test process does under `cargo sim test`'s seed
//!   sweeps: records, failure classes, the hang watchdog.
//! - [`interpose`]: libc's clock, randomness and thread creation, virtual
//!   during a run (simulation builds only).

#![warn(missing_docs)]

pub mod config;
pub mod context;
pub mod decision;
pub mod events;
pub mod executor;
pub mod files;
pub mod interpose;
pub mod logs;
pub mod rng;
pub mod seed;
pub mod sweep;
pub mod task;
#[cfg(all(
    simulation,
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod threads;
pub mod trace;
mod waker;

pub use config::SimConfig;
pub use events::EventKey;
pub use executor::{
    last_run, Core, Flavor, NodeClock, RawTask, RunSummary, RuntimeHooks, RuntimeOptions,
    WaitDetail, WaitNote,
};
pub use task::{Failure, Output, TaskMeta};
pub use trace::{EventKind, Label};
