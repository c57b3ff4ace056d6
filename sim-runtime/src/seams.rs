//! Where the layers above the core plug in. The core calls out only
//! through these traits, never by name:
//!
//! - [`DecisionLog`]: the decision log (`decision.rs`) records or replays
//!   the run's choices;
//! - [`RunObserver`]: the sweep and the seed lines (`sweep.rs`, `seed.rs`)
//!   hear how a run ended;
//! - [`OsLayer`]: the OS layer (`sim-os`: libc interposition, files,
//!   threads, `tracing` capture) adds what a run needs from it.
//!
//! [`Setup`] carries a run's seams into `Core::new`; the launch layer
//! (`launch.rs`) assembles it from the environment.

use crate::config::Policy;
use crate::summary::RunSummary;
use std::any::Any;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::OnceLock;

/// The stream of task picks in a decision log.
pub const SCHEDULE: &str = "schedule";
/// The stream of `select!` branch orders.
pub const SELECT: &str = "select";
/// The stream of user randomness (`getrandom`), 8 bytes per value.
pub const RANDOM: &str = "random";

/// One value of a decision log's stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A drawn value.
    Num(u64),
    /// The least choice (FIFO for the schedule, 0 for the others).
    Min,
}

/// Clamps a replayed value into a choice among `n` (`0`: any 64 bits).
pub fn clamp(value: Value, n: u64) -> u64 {
    match value {
        Value::Min => 0,
        Value::Num(v) if n == 0 => v,
        Value::Num(v) => v.min(n - 1),
    }
}

/// A run's decision log: what it records and replays.
pub trait DecisionLog {
    /// Whether a file drives this run (a replay keeps the ready queue in
    /// wake order).
    fn replaying(&self) -> bool;
    /// The next value of `stream`: the replayed one, or `draw()`'s.
    fn next(&mut self, stream: &str, draw: &mut dyn FnMut() -> u64) -> Value;
    /// Writes the record, if one was asked for; returns its path.
    fn finish(&mut self) -> Option<PathBuf>;
}

/// How a run ended, for the layers that report it.
pub struct RunEnd<'a> {
    /// The run's summary.
    pub summary: &'a RunSummary,
    /// Its trace file, if one was written.
    pub trace_path: Option<&'a Path>,
    /// Its scheduling policy.
    pub policy: Policy,
    /// Its decision file, if one was recorded.
    pub decisions_path: Option<&'a Path>,
    /// The properties it reached, with their counts.
    pub properties: &'a [crate::property::site::Reached],
}

/// Hears how a run ended (the sweep's record, the seed line).
pub trait RunObserver {
    /// The run ended; its summary is final.
    fn run_finished(&self, end: &RunEnd<'_>);
}

/// What the OS layer adds to a run.
pub trait OsLayer: Sync {
    /// A run starts; `trace_file` says whether it writes a trace file. The
    /// returned guard lives as long as the run (the `tracing` capture).
    fn run_started(&self, trace_file: bool) -> Option<Box<dyn Any>>;
    /// Whether the calling thread is a simulated OS thread (its `block_on`
    /// waits for its future while the simulation runs on).
    fn on_sim_thread(&self) -> bool;
    /// On a simulated OS thread, blocks on `future` until it completes,
    /// while the simulation (runtime `core`) runs on.
    fn block_on_thread(&self, core: u16, future: Pin<&mut dyn Future<Output = ()>>);
    /// The simulated OS thread the caller is (a token), if it is one.
    fn current_thread(&self) -> Option<u64>;
    /// Runs `call` on the simulated OS thread `thread` while it waits in its
    /// `block_on`, and returns once it ran (a panic in it continues here);
    /// false, without running it, when that thread does not wait there.
    fn run_on_thread(&self, thread: u64, call: &mut dyn FnMut()) -> bool;
    /// How many real threads (started outside any run) are alive besides
    /// the caller: one may still wake a task of the run.
    fn other_real_threads(&self) -> usize;
    /// Runs `wait`, in which the caller only waits for another thread (the
    /// sweep's loop joining the thread of its seed's run), with the caller
    /// not counted among those real threads meanwhile: it wakes no task.
    fn wait_uncounted(&self, wait: &mut dyn FnMut());
    /// Runs `start`, in which a thread spawned is a plain real thread of
    /// the simulator's own (the hang watchdog): not simulated, even inside
    /// a run, and not counted among the real threads a run waits for.
    fn start_plain_thread(&self, start: &mut dyn FnMut());
    /// libc's own `fork` (the interposed one refuses during a run): the
    /// fork server of branch runs (`property::fork`). `-1` when it failed.
    fn real_fork(&self) -> libc::pid_t;
    /// Sleeps for `duration` of real time (the interposed sleeps are
    /// virtual during a run).
    fn real_sleep(&self, duration: std::time::Duration);
    /// On the thread that built a live runtime, outside its `block_on`,
    /// with work that runs without one (a `multi_thread` runtime's tasks,
    /// simulated threads): blocks until `future` completes while the
    /// simulation runs in the background (`Core::drive_background`).
    /// `None`, without polling it, on any other thread; `Some(Err)` with a
    /// report when it can never complete.
    fn block_in_background(
        &self,
        future: Pin<&mut dyn Future<Output = ()>>,
    ) -> Option<Result<(), String>>;
}

static OS_LAYER: OnceLock<&'static dyn OsLayer> = OnceLock::new();

/// Installs the OS layer (once per process; later calls are ignored).
pub fn install_os_layer(layer: &'static dyn OsLayer) {
    let _ = OS_LAYER.set(layer);
}

/// The installed OS layer, if any.
#[inline]
pub fn os_layer() -> Option<&'static dyn OsLayer> {
    OS_LAYER.get().copied()
}

/// What a run gets from the layers above the core when it is built.
#[derive(Default)]
pub struct Setup {
    /// Where the trace file goes, if one is written.
    pub trace_path: Option<PathBuf>,
    /// The decision log, when the run records or replays one.
    pub decisions: Option<Box<dyn DecisionLog>>,
    /// Who hears how the run ended.
    pub observer: Option<Box<dyn RunObserver>>,
}
