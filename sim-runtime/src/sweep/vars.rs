//! The variables between the runner (`cargo sim test`) and a test
//! process, and the watchdog's budgets.

/// The file a swept test process appends its records to.
pub const OUT_VAR: &str = crate::settings::SWEEP_OUT.name;

/// The seeds of a sweep: comma-separated, in hex.
pub const SEEDS_VAR: &str = crate::settings::SWEEP_SEEDS.name;

/// `1`: run every seed, not only up to the first failure.
pub const KEEP_GOING_VAR: &str = crate::settings::SWEEP_KEEP_GOING.name;

/// A directory where every run of a sweep writes its trace.
pub const TRACE_DIR_VAR: &str = crate::settings::SWEEP_TRACE_DIR.name;

/// `1`: traces in `SIM_SWEEP_TRACE_DIR` are named by test and seed
/// (`<test>-<seed>.trace`, `cargo sim test --trace`), not by seed and run
/// (the runner's own).
pub const TRACE_NAMED_VAR: &str = crate::settings::SWEEP_TRACE_NAMED.name;

/// The process id of the runner: only its own children report (a test's
/// child processes inherit the variables, and stay out of the records).
pub const PARENT_VAR: &str = crate::settings::SWEEP_PARENT.name;

/// `1`: print every run's seed and hash lines, not only a failure's.
pub const VERBOSE_VAR: &str = crate::settings::VERBOSE.name;

/// Harness fault units to leave out (`cargo sim test --shrink`; see
/// `sim_harness::shrink`): `3,7`.
pub const SHRINK_SKIP_VAR: &str = crate::settings::SHRINK_SKIP.name;

/// `1`: every harness link's latency is 0 (a shrunk run).
pub const SHRINK_FAST_LINKS_VAR: &str = crate::settings::SHRINK_FAST_LINKS.name;

/// Where a harness run appends the faults it applied (the shrinker's).
pub const SHRINK_OUT_VAR: &str = crate::settings::SHRINK_OUT.name;

/// Where a run lists what each link draw was for (`<stream> <index>
/// <what>`), so the shrinker can name the draws a failure needs.
pub const SHRINK_DRAWS_OUT_VAR: &str = crate::settings::SHRINK_DRAWS_OUT.name;

/// Harness fault units applied later, as `<unit>:<ns>,...` (shrinking).
pub const SHRINK_LATER_VAR: &str = crate::settings::SHRINK_LATER.name;

/// Wall-clock seconds one poll may take before it is a hang (default 5).
pub const HANG_POLL_VAR: &str = crate::settings::HANG_POLL_S.name;

/// Wall-clock seconds one run (`block_on`) may take before it is a hang
/// (default 300).
pub const HANG_RUN_VAR: &str = crate::settings::HANG_RUN_S.name;

/// The exit code of a process the watchdog ended.
pub const HANG_EXIT_CODE: i32 = 86;

pub(crate) const DEFAULT_HANG_POLL_S: u64 = 5;

/// The default of `SIM_HANG_RUN_S`.
pub const DEFAULT_HANG_RUN_S: u64 = 300;
