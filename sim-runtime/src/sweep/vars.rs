//! The variables between the runner (`cargo sim test`) and a test
//! process, and the watchdog's budgets.

/// The file a swept test process appends its records to.
pub const OUT_VAR: &str = "SIM_SWEEP_OUT";

/// The seeds of a sweep: comma-separated, in hex.
pub const SEEDS_VAR: &str = "SIM_SWEEP_SEEDS";

/// `1`: run every seed, not only up to the first failure.
pub const KEEP_GOING_VAR: &str = "SIM_SWEEP_KEEP_GOING";

/// A directory where every run of a sweep writes its trace.
pub const TRACE_DIR_VAR: &str = "SIM_SWEEP_TRACE_DIR";

/// `1`: traces in `SIM_SWEEP_TRACE_DIR` are named by test and seed
/// (`<test>-<seed>.trace`, `cargo sim test --trace`), not by seed and run
/// (the runner's own).
pub const TRACE_NAMED_VAR: &str = "SIM_SWEEP_TRACE_NAMED";

/// The process id of the runner: only its own children report (a test's
/// child processes inherit the variables, and stay out of the records).
pub const PARENT_VAR: &str = "SIM_SWEEP_PARENT";

/// `1`: print every run's seed and hash lines, not only a failure's.
pub const VERBOSE_VAR: &str = "SIM_VERBOSE";

/// Harness fault units to leave out (`cargo sim test --shrink`; see
/// `sim_harness::shrink`): `3,7`.
pub const SHRINK_SKIP_VAR: &str = "SIM_SHRINK_SKIP";

/// `1`: every harness link's latency is 0 (a shrunk run).
pub const SHRINK_FAST_LINKS_VAR: &str = "SIM_SHRINK_FAST_LINKS";

/// Where a harness run appends the faults it applied (the shrinker's).
pub const SHRINK_OUT_VAR: &str = "SIM_SHRINK_OUT";

/// Where a run lists what each link draw was for (`<stream> <index>
/// <what>`), so the shrinker can name the draws a failure needs.
pub const SHRINK_DRAWS_OUT_VAR: &str = "SIM_SHRINK_DRAWS_OUT";

/// Harness fault units applied later, as `<unit>:<ns>,...` (shrinking).
pub const SHRINK_LATER_VAR: &str = "SIM_SHRINK_LATER";

/// Wall-clock seconds one poll may take before it is a hang (default 5).
pub const HANG_POLL_VAR: &str = "SIM_HANG_POLL_S";

/// Wall-clock seconds one run (`block_on`) may take before it is a hang
/// (default 300).
pub const HANG_RUN_VAR: &str = "SIM_HANG_RUN_S";

/// The exit code of a process the watchdog ended.
pub const HANG_EXIT_CODE: i32 = 86;

pub(crate) const DEFAULT_HANG_POLL_S: u64 = 5;

/// The default of `SIM_HANG_RUN_S`.
pub const DEFAULT_HANG_RUN_S: u64 = 300;
