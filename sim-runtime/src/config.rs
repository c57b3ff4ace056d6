//! Run configuration: the seed and the limits of one simulation.
//!
//! Every knob lives here, in one struct, so that a run is described by a
//! value that can be printed, compared and replayed.

use std::time::Duration;

/// The environment variable that chooses the seed of every run in a process.
pub const SEED_VAR: &str = "SIM_SEED";
/// The environment variable that names the trace file (see [`crate::trace`]).
pub const TRACE_VAR: &str = "SIM_TRACE";
/// The environment variable that overrides the virtual-time limit, in seconds.
pub const TIME_LIMIT_VAR: &str = "SIM_TIME_LIMIT_S";
/// The environment variable that overrides the step limit (task polls).
pub const STEP_LIMIT_VAR: &str = "SIM_STEP_LIMIT";
/// The environment variable that sets what `SystemTime::now()` reads at
/// virtual time zero, in whole seconds since the Unix epoch.
pub const EPOCH_VAR: &str = "SIM_EPOCH_UNIX_S";
/// The environment variable that overrides the livelock limit: polls at one
/// virtual instant.
pub const INSTANT_STEP_LIMIT_VAR: &str = "SIM_INSTANT_STEP_LIMIT";
/// The environment variable that gives each poll a cost in virtual time:
/// the most nanoseconds one poll takes (drawn per poll; default 0, free).
pub const POLL_COST_VAR: &str = "SIM_POLL_COST_MAX_NS";
/// The environment variable that lets a run start real OS threads.
pub const ALLOW_THREADS_VAR: &str = "SIM_ALLOW_THREADS";

/// What a simulation run is allowed to do, and where its choices come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// The only source of choice in the run.
    pub seed: u64,
    /// A run whose virtual clock would pass this point fails.
    pub time_limit: Duration,
    /// A run that polls more than this many times fails. It catches busy
    /// loops that never let the clock move.
    pub step_limit: u64,
    /// A run that polls more than this many times without its clock moving
    /// fails as a livelock: tasks that keep each other busy forever at one
    /// instant are caught in a second or two, not at the step limit.
    pub instant_step_limit: u64,
    /// Each poll of a task takes a draw in `0..=poll_cost_max_ns` of virtual
    /// time (0: polls are free, the default). With a cost, timers can fire
    /// in the middle of a service's work, as they do on a real machine.
    pub poll_cost_max_ns: u64,
    /// What `SystemTime::now()` reads at virtual time zero, in nanoseconds
    /// since the Unix epoch.
    pub epoch_unix_ns: u64,
    /// Whether the run may start real OS threads (an escape from the
    /// simulation; off by default).
    pub allow_threads: bool,
}

/// 2025-01-01T00:00:00Z: a fixed wall-clock origin, so `SystemTime::now()`
/// reads the same in every run of a seed.
pub const DEFAULT_EPOCH_UNIX_NS: u64 = 1_735_689_600 * 1_000_000_000;
/// A year of virtual time: generous for any test, finite for a runaway.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);
/// Two hundred million polls: several seconds of wall time at full speed.
pub const DEFAULT_STEP_LIMIT: u64 = 200_000_000;
/// Two million polls at one instant: a second or two even in a debug build,
/// and far more than a real service does between two ticks of its clock
/// (a hundred thousand tasks polled ten times each stay under it).
pub const DEFAULT_INSTANT_STEP_LIMIT: u64 = 2_000_000;

impl SimConfig {
    /// A configuration with the given seed and the default limits.
    pub fn with_seed(seed: u64) -> SimConfig {
        SimConfig {
            seed,
            time_limit: DEFAULT_TIME_LIMIT,
            step_limit: DEFAULT_STEP_LIMIT,
            instant_step_limit: DEFAULT_INSTANT_STEP_LIMIT,
            poll_cost_max_ns: 0,
            epoch_unix_ns: DEFAULT_EPOCH_UNIX_NS,
            allow_threads: false,
        }
    }

    /// Reads `SIM_SEED`, `SIM_TIME_LIMIT_S`, `SIM_STEP_LIMIT`,
    /// `SIM_EPOCH_UNIX_S` and `SIM_ALLOW_THREADS`. An unset seed draws a fresh one from the OS.
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
        let seed = match std::env::var(SEED_VAR) {
            // A sweep's seed thread takes its seed from the sweep.
            _ if crate::sweep::seed_override().is_some() => {
                crate::sweep::seed_override().expect("checked")
            }
            Ok(value) => parse_seed(&value)?,
            Err(std::env::VarError::NotPresent) => crate::interpose::real_random_u64(),
            Err(std::env::VarError::NotUnicode(value)) => {
                return Err(format!(
                    "sim: {SEED_VAR}={value:?} is not a valid seed: expected a u64, in decimal \
                     (SIM_SEED=42) or hex (SIM_SEED=0x2a)"
                ))
            }
        };
        let mut config = SimConfig::with_seed(seed);
        if let Some(value) = read_var(TIME_LIMIT_VAR)? {
            let secs: u64 = value.trim().parse().map_err(|_| {
                format!(
                    "sim: {TIME_LIMIT_VAR}={value:?} is not a valid limit: expected whole \
                     seconds of virtual time, such as {TIME_LIMIT_VAR}=3600"
                )
            })?;
            config.time_limit = Duration::from_secs(secs);
        }
        if let Some(value) = read_var(STEP_LIMIT_VAR)? {
            config.step_limit = value.trim().parse().map_err(|_| {
                format!(
                    "sim: {STEP_LIMIT_VAR}={value:?} is not a valid limit: expected a count \
                     of polls, such as {STEP_LIMIT_VAR}=1000000"
                )
            })?;
        }
        if let Some(value) = read_var(INSTANT_STEP_LIMIT_VAR)? {
            config.instant_step_limit = value.trim().parse().map_err(|_| {
                format!(
                    "sim: {INSTANT_STEP_LIMIT_VAR}={value:?} is not a valid limit: expected a \
                     count of polls, such as {INSTANT_STEP_LIMIT_VAR}=50000000"
                )
            })?;
        }
        if let Some(value) = read_var(POLL_COST_VAR)? {
            config.poll_cost_max_ns = value.trim().parse().map_err(|_| {
                format!(
                    "sim: {POLL_COST_VAR}={value:?} is not a valid cost: expected the most \
                     nanoseconds of virtual time one poll takes, such as {POLL_COST_VAR}=50000"
                )
            })?;
        }
        if let Some(value) = read_var(EPOCH_VAR)? {
            let secs: u64 = value.trim().parse().map_err(|_| {
                format!(
                    "sim: {EPOCH_VAR}={value:?} is not a valid epoch: expected whole seconds \
                     since 1970-01-01 UTC, such as {EPOCH_VAR}=1735689600"
                )
            })?;
            config.epoch_unix_ns = secs
                .checked_mul(1_000_000_000)
                .ok_or_else(|| format!("sim: {EPOCH_VAR}={value:?} is too far in the future"))?;
        }
        if let Some(value) = read_var(ALLOW_THREADS_VAR)? {
            config.allow_threads = matches!(value.trim(), "1" | "true" | "yes");
        }
        Ok(config)
    }
}

fn read_var(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(value) => Ok(Some(value)),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(value)) => {
            Err(format!("sim: {name}={value:?} is not valid unicode"))
        }
    }
}

/// Parses a seed: a u64 in decimal, or in hex with a `0x` prefix.
///
/// # Errors
/// A message that names `SIM_SEED`, the value, and the accepted forms.
pub fn parse_seed(value: &str) -> Result<u64, String> {
    let text = value.trim();
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16),
        None => text.replace('_', "").parse::<u64>(),
    };
    parsed.map_err(|_| {
        format!(
            "sim: {SEED_VAR}={value:?} is not a valid seed: expected a u64, in decimal \
             (SIM_SEED=42) or hex (SIM_SEED=0x2a). Unset it to draw a fresh seed."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("42"), Ok(42));
        assert_eq!(parse_seed("0x2a"), Ok(42));
        assert_eq!(parse_seed(" 0XFF "), Ok(255));
        assert_eq!(parse_seed("18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn a_bad_seed_names_the_variable_and_the_value() {
        let message = parse_seed("banana").unwrap_err();
        assert!(message.contains("SIM_SEED"), "{message}");
        assert!(message.contains("\"banana\""), "{message}");
        assert!(parse_seed("0xZZ").is_err());
        assert!(parse_seed("-1").is_err());
        assert!(parse_seed("18446744073709551616").is_err());
    }
}
