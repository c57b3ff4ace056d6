//! Building a run from the environment: the layer above the core that reads
//! the variables (`SIM_SEED` and the limits, `SIM_TRACE`, `SIM_RECORD`,
//! `SIM_REPLAY`, a sweep's overrides) and gives the core its seams
//! (`crate::seams::Setup`): the trace file, the decision log, and the
//! observer that prints the seed lines and writes the sweep's records.

use crate::config::{self, parse_seed, Policy, SimConfig, SEED_VAR};
use crate::executor::Core;
use crate::scopes::RuntimeOptions;
use crate::seams::{DecisionLog, RunEnd, RunObserver, Setup};
use crate::{decision, seed, sweep, trace};
use std::cell::Cell;
use std::rc::Rc;

thread_local! {
    /// Runs built on this thread so far (names trace and decision files).
    static RUNS_ON_THREAD: Cell<u64> = const { Cell::new(0) };
}

/// Called at the start of every [`launch`], on the launching thread
/// (installed once by the OS layer).
static BEFORE_LAUNCH: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Installs the call [`launch`] makes first (once per process; later calls
/// are ignored).
pub fn set_before_launch(hook: fn()) {
    let _ = BEFORE_LAUNCH.set(hook);
}

/// Builds a simulation with `config` as the environment asks (its trace
/// file, decision log and reports), registers it with this thread and, for
/// a program's run (or with `SIM_VERBOSE`), announces its seed and replay
/// command on stderr.
pub fn launch(config: SimConfig, options: RuntimeOptions) -> Rc<Core> {
    // A simulated thread of a plain test's simulation that starts a
    // simulation of its own leaves that one first (sim-os's `ambient`).
    if let Some(hook) = BEFORE_LAUNCH.get() {
        hook();
    }
    warn_unknown_settings();
    let thread = std::thread::current();
    let thread_name = thread.name().filter(|name| *name != "main");
    let run_index = RUNS_ON_THREAD.with(|r| {
        r.set(r.get() + 1);
        r.get()
    });
    let seed = config.seed;
    let trace_path = sweep::trace_override(seed, run_index).or_else(|| {
        crate::settings::TRACE
            .non_empty()
            .map(|base| trace::trace_path(&base, thread_name, run_index))
    });
    let run_name = thread_name.unwrap_or("main").to_string();
    sweep::run_started(seed);
    // A program's run says its seed first; a test's stays quiet unless it
    // fails (the panic hook prints the seed then) or SIM_VERBOSE is set.
    if thread_name.is_none() || sweep::verbose() {
        seed::announce(seed, thread_name);
        sweep::seed_line_shown();
    }
    let decisions = decision::Decisions::new(
        seed,
        run_index,
        decision::record_path(thread_name, run_index),
    )
    .map(|mut d| {
        for (name, value) in settings(&config) {
            d.set(name, value);
        }
        Box::new(d) as Box<dyn DecisionLog>
    });
    Core::new(
        config,
        options,
        Setup {
            trace_path,
            decisions,
            observer: Some(Box::new(Reporter { run_name })),
        },
    )
}

/// The settings a decision file records: the configuration's, and the
/// shrinker's.
fn settings(config: &SimConfig) -> Vec<(&'static str, String)> {
    let mut out = config.settings();
    for var in [
        sweep::SHRINK_SKIP_VAR,
        sweep::SHRINK_FAST_LINKS_VAR,
        sweep::SHRINK_LATER_VAR,
    ] {
        if let Ok(Some(value)) = decision::var(var) {
            out.push((var, value));
        }
    }
    out
}

/// Prints a run's end (for a program, or with `SIM_VERBOSE`) and records it
/// for a sweep.
struct Reporter {
    run_name: String,
}

impl RunObserver for Reporter {
    fn run_finished(&self, end: &RunEnd<'_>) {
        let loud = self.run_name == "main" || sweep::verbose();
        if loud {
            seed::report(&self.run_name, end.summary, end.trace_path, end.policy);
        }
        sweep::run_finished(end.summary, end.properties);
        if let Some(path) = end.decisions_path {
            if loud {
                eprintln!("sim: decisions recorded to {}", path.display());
            }
        }
    }
}

impl SimConfig {
    /// Reads `SIM_SEED`, the limits (`SIM_TIME_LIMIT_S`, `SIM_STEP_LIMIT`,
    /// ...), `SIM_EPOCH_UNIX_S`, `SIM_ALLOW_THREADS` and the policy. A
    /// sweep's seed and policy, and a replayed decision file's settings,
    /// take precedence. An unset seed draws a fresh one from the OS.
    ///
    /// # Panics
    /// When a variable holds a value that does not parse: the message names
    /// the variable, the value and the expected form.
    pub fn from_env() -> SimConfig {
        match SimConfig::try_from_env() {
            Ok(config) => config,
            Err(message) => panic!("{message}"),
        }
    }

    /// As [`SimConfig::from_env`], returning the error message instead of
    /// panicking.
    pub fn try_from_env() -> Result<SimConfig, String> {
        let seed = match crate::settings::SEED.var() {
            // A replay runs the seed its decision file was recorded with.
            given if decision::replay_seed()?.is_some() => {
                let seed = decision::replay_seed()?.expect("checked");
                let asked = match sweep::seed_override() {
                    Some(s) => Some(s),
                    None => given.ok().map(|v| parse_seed(&v)).transpose()?,
                };
                if let Some(asked) = asked.filter(|&a| a != seed) {
                    return Err(format!(
                        "sim: {}={} was recorded with seed {seed:#x}, but this run asks for \
                         seed {asked:#x} ({SEED_VAR} or a sweep): unset one of them, or set \
                         {SEED_VAR}={seed:#x}",
                        decision::REPLAY_VAR,
                        crate::settings::REPLAY.value().unwrap_or_default()
                    ));
                }
                seed
            }
            // A sweep's seed thread takes its seed from the sweep.
            _ if sweep::seed_override().is_some() => sweep::seed_override().expect("checked"),
            Ok(value) => parse_seed(&value)?,
            Err(std::env::VarError::NotPresent) => crate::rng::os_random_u64(),
            Err(std::env::VarError::NotUnicode(value)) => {
                return Err(format!(
                    "sim: {SEED_VAR}={value:?} is not a valid seed: expected a u64, in decimal \
                     (SIM_SEED=42) or hex (SIM_SEED=0x2a)"
                ))
            }
        };
        let mut config = SimConfig::with_settings(seed, &decision::var)?;
        config.policy = match sweep::policy_override() {
            Some(policy) => policy,
            // A sweep's seed under the portfolio (a test that builds its
            // own runtime).
            None if sweep::portfolio::active() => sweep::portfolio::policy(seed),
            None => policy_from_env()?,
        };
        Ok(config)
    }
}

/// Once per process: a `SIM_*` variable that is no setting (a typo) is
/// named, with the setting it is nearest. Under `cargo sim`, which warned
/// already (it sets `SIM_CARGO_ARGS` or `SIM_SWEEP_PARENT`), nothing.
fn warn_unknown_settings() {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        let under_runner =
            crate::settings::CARGO_ARGS.is_set() || crate::settings::SWEEP_PARENT.is_set();
        if !under_runner {
            crate::settings::warn_unknown();
        }
    });
}

/// The policy `SIM_POLICY`, `SIM_PCT_DEPTH` and `SIM_PCT_HORIZON` ask for
/// (the environment's, or a replayed decision file's).
///
/// # Errors
/// A message naming the variable, its value and the accepted forms.
pub fn policy_from_env() -> Result<Policy, String> {
    config::policy_from(&decision::var)
}
