//! `sim-runtime`: the deterministic core under the `tokio` facade.
//!
//! One thread runs one simulation at a time. Its only source of choice is a
//! seed: the scheduler picks among ready tasks with a seeded generator, the
//! virtual clock moves only when nothing is ready, and every event is
//! recorded in a trace whose SHA-256 identifies the run. See
//! ARCHITECTURE.md at the repository root for how the pieces fit.
//!
//! The crate is layered; each layer uses only the ones below it.
//!
//! 1. Data: [`config`] (the seed and limits of a run), [`rng`], [`task`]
//!    (cells and slots), [`events`] (the one event queue), [`trace`] (the
//!    trace and its hash), [`failure`], [`summary`], [`watch`] (what the
//!    executor publishes for a watchdog), [`outside`] (the simulator's own
//!    real files) and [`seams`] (where the layers above plug in).
//! 2. The parts of the core: [`scheduler`] (the ready set and the
//!    policies), [`time`] (the virtual clock, the hosts' clocks, the event
//!    queue), the task table (`task::table`), [`scopes`] (runtimes),
//!    [`hosts`] and the seed's streams.
//! 3. The core: [`executor`] ([`Core`]: the loop and the wiring, wakers,
//!    and [`context`], which simulation the thread is in).
//! 4. Above the core: [`decision`] (the decision log: `SIM_RECORD`,
//!    `SIM_REPLAY`), [`sweep`] (what a test process does under `cargo sim
//!    test`), [`seed`] (the seed and hash lines) and [`mod@launch`] (a run
//!    built from the environment).
//!
//! The OS layer (libc interposition, `std::fs`, OS threads, `tracing`
//! capture) is the `sim-os` crate, above this one; the core reaches it only
//! through [`seams::OsLayer`].

#![warn(missing_docs)]

pub mod config;
pub mod decision;
mod escape;
pub mod events;
pub mod executor;
pub mod failure;
pub mod hosts;
pub mod launch;
pub mod outside;
pub mod prefetch;
pub mod property;
pub mod rng;
pub mod scheduler;
pub mod scopes;
pub mod seams;
pub mod seed;
pub mod settings;
pub mod story;
mod streams;
pub mod summary;
pub mod sweep;
pub mod task;
pub mod time;
pub mod trace;
pub mod watch;

pub use config::SimConfig;
pub use events::EventKey;
pub use executor::context;
pub use executor::{block_in_background, Core, RuntimeHooks, TASK_BUDGET};
pub use launch::launch;
pub use scopes::{Flavor, RuntimeOptions};
pub use summary::{last_run, RunSummary};
pub use task::wait::{WaitDetail, WaitNote};
pub use task::{Failure, Output, RawTask, TaskMeta};
pub use time::host_clock::{NodeClock, DRIFT_PPM_MAX};
pub use trace::{EventKind, Label};
