//! Run configuration: the seed and the limits of one simulation.
//!
//! Every knob lives here, in one struct, so that a run is described by a
//! value that can be printed, compared and replayed. This is data at the
//! bottom of the crate: it parses settings from any source it is given
//! ([`SimConfig::with_settings`]) and knows nothing of where they come
//! from. The launch layer (`launch.rs`) reads them from the environment, a sweep and a
//! replayed decision file.

use std::time::Duration;

/// The environment variable that chooses the seed of every run in a process.
pub const SEED_VAR: &str = crate::settings::SEED.name;
/// The environment variable that names the trace file (see [`crate::trace`]).
pub const TRACE_VAR: &str = crate::settings::TRACE.name;
/// The environment variable that overrides the virtual-time limit, in seconds.
pub const TIME_LIMIT_VAR: &str = crate::settings::TIME_LIMIT_S.name;
/// The environment variable that overrides the step limit (task polls).
pub const STEP_LIMIT_VAR: &str = crate::settings::STEP_LIMIT.name;
/// The environment variable that sets what `SystemTime::now()` reads at
/// virtual time zero, in whole seconds since the Unix epoch.
pub const EPOCH_VAR: &str = crate::settings::EPOCH_UNIX_S.name;
/// The environment variable that overrides the livelock limit: polls at one
/// virtual instant.
pub const INSTANT_STEP_LIMIT_VAR: &str = crate::settings::INSTANT_STEP_LIMIT.name;
/// The environment variable that gives each poll a cost in virtual time:
/// the most nanoseconds one poll takes (drawn per poll; default 0, free).
pub const POLL_COST_VAR: &str = crate::settings::POLL_COST_MAX_NS.name;
/// The environment variable that lets a run start real OS threads.
pub const ALLOW_THREADS_VAR: &str = crate::settings::ALLOW_THREADS.name;
/// Set to `1` to let a run start real processes (an escape).
pub const ALLOW_PROCESSES_VAR: &str = crate::settings::ALLOW_PROCESSES.name;
/// The scheduling policy: `random` (the default) or `pct`.
pub const POLICY_VAR: &str = crate::settings::POLICY.name;
/// PCT's depth: how many ordering constraints it aims at (default 3).
pub const PCT_DEPTH_VAR: &str = crate::settings::PCT_DEPTH.name;
/// PCT's horizon: the scheduling decisions its change points are spread
/// over (a sweep measures it; see `Policy::Pct`).
pub const PCT_HORIZON_VAR: &str = crate::settings::PCT_HORIZON.name;

/// PCT's depth when none is given.
pub const PCT_DEPTH_DEFAULT: u32 = 3;
/// PCT's horizon when none is given or measured.
pub const PCT_HORIZON_DEFAULT: u64 = 10_000;

/// PCT's horizon for a run whose random-schedule twin made `decisions`
/// scheduling decisions: 1.5 times as many, at least 100 and at least room
/// for the change points (the reference harness's measure).
pub fn pct_horizon(decisions: u64, depth: u32) -> u64 {
    (decisions.saturating_mul(3) / 2)
        .max(100)
        .max(u64::from(depth) * 2)
}

/// How the scheduler picks the next task among the ready ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// Every ready task is equally likely (drawn from the seed).
    #[default]
    Random,
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010):
    /// each task draws a priority when first seen, the highest-priority
    /// ready task always runs, and at `depth - 1` decisions drawn in
    /// `1..=horizon` the running task drops below every first-drawn
    /// priority. A bug that needs `depth` orderings is hit with probability
    /// at least `1 / (n * horizon^(depth - 1))` per run, for `n` tasks.
    /// Past the horizon, picks are uniform (no task starves for good).
    Pct {
        /// The ordering constraints aimed at (at least 1).
        depth: u32,
        /// The scheduling decisions (picks among two or more ready tasks)
        /// the change points are spread over.
        horizon: u64,
    },
    /// The task that became ready first runs first, as on tokio's
    /// `current_thread` runtime: a suite that assumes tokio's order of
    /// tasks runs in it, and the seed still draws everything else
    /// (latencies, faults, randomness).
    Fifo,
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Policy::Random => write!(f, "random"),
            Policy::Pct { depth, horizon } => write!(f, "pct (depth {depth}, horizon {horizon})"),
            Policy::Fifo => write!(f, "fifo"),
        }
    }
}

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
    /// Whether the run may start real processes (`std::process::Command`;
    /// an escape from the simulation; off by default).
    pub allow_processes: bool,
    /// How the scheduler picks among ready tasks.
    pub policy: Policy,
}

/// 2025-01-01T00:00:00Z: a fixed wall-clock origin, so `SystemTime::now()`
/// reads the same in every run of a seed.
pub const DEFAULT_EPOCH_UNIX_NS: u64 = 1_735_689_600 * 1_000_000_000;
/// No limit on virtual time: paused tokio lets a test sleep for years, so
/// a limit would fail correct tests. A runaway run is the step limit's and
/// the hang watchdog's to end.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::MAX;
/// Two hundred million polls: several seconds of wall time at full speed.
pub const DEFAULT_STEP_LIMIT: u64 = 200_000_000;
/// Two million polls at one instant: a second or two even in a debug build,
/// and far more than a real service does between two ticks of its clock
/// (a hundred thousand tasks polled ten times each stay under it).
pub const DEFAULT_INSTANT_STEP_LIMIT: u64 = 2_000_000;

impl SimConfig {
    /// The settings that differ from the defaults, as the variables that
    /// ask for them (what a decision file records).
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        match self.policy {
            Policy::Random => out.push((POLICY_VAR, "random".to_string())),
            Policy::Pct { depth, horizon } => {
                out.push((POLICY_VAR, "pct".to_string()));
                out.push((PCT_DEPTH_VAR, depth.to_string()));
                out.push((PCT_HORIZON_VAR, horizon.to_string()));
            }
            Policy::Fifo => out.push((POLICY_VAR, "fifo".to_string())),
        }
        if self.time_limit != DEFAULT_TIME_LIMIT {
            out.push((TIME_LIMIT_VAR, self.time_limit.as_secs().to_string()));
        }
        if self.step_limit != DEFAULT_STEP_LIMIT {
            out.push((STEP_LIMIT_VAR, self.step_limit.to_string()));
        }
        if self.instant_step_limit != DEFAULT_INSTANT_STEP_LIMIT {
            out.push((INSTANT_STEP_LIMIT_VAR, self.instant_step_limit.to_string()));
        }
        if self.poll_cost_max_ns != 0 {
            out.push((POLL_COST_VAR, self.poll_cost_max_ns.to_string()));
        }
        if self.epoch_unix_ns != DEFAULT_EPOCH_UNIX_NS {
            out.push((EPOCH_VAR, (self.epoch_unix_ns / 1_000_000_000).to_string()));
        }
        out
    }

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
            allow_processes: false,
            policy: Policy::Random,
        }
    }

    /// The configuration of a run with `seed` and the settings `read`
    /// gives (by variable name: `SIM_TIME_LIMIT_S`, `SIM_STEP_LIMIT`, ...);
    /// the policy stays the default (see [`policy_from`]).
    ///
    /// # Errors
    /// A message naming the variable, its value and the expected form.
    pub fn with_settings(seed: u64, read: &dyn Fn(&str) -> Setting) -> Result<SimConfig, String> {
        let read_var = |name: &str| read(name);
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
        if let Some(value) = read_var(ALLOW_PROCESSES_VAR)? {
            config.allow_processes = matches!(value.trim(), "1" | "true" | "yes");
        }
        Ok(config)
    }
}

/// A setting's value, if set, or why it cannot be read.
pub type Setting = Result<Option<String>, String>;

/// The policy that `SIM_POLICY`, `SIM_PCT_DEPTH` and `SIM_PCT_HORIZON` ask
/// for, as `read` gives them.
///
/// # Errors
/// A message naming the variable, its value and the accepted forms.
pub fn policy_from(read: &dyn Fn(&str) -> Setting) -> Result<Policy, String> {
    parse_policy(
        read(POLICY_VAR)?,
        read(PCT_DEPTH_VAR)?,
        read(PCT_HORIZON_VAR)?,
    )
}

/// The policy of these values of `SIM_POLICY`, `SIM_PCT_DEPTH` and
/// `SIM_PCT_HORIZON`.
fn parse_policy(
    policy: Option<String>,
    depth: Option<String>,
    horizon: Option<String>,
) -> Result<Policy, String> {
    match policy.as_deref().map(str::trim) {
        policy @ (None | Some("random") | Some("fifo")) => {
            if let Some(name) = [(PCT_DEPTH_VAR, &depth), (PCT_HORIZON_VAR, &horizon)]
                .iter()
                .find(|(_, v)| v.is_some())
                .map(|(n, _)| n)
            {
                return Err(format!(
                    "sim: {name} is set, but {POLICY_VAR} is not pct: set {POLICY_VAR}=pct to \
                     use it, or unset {name}"
                ));
            }
            match policy {
                Some("fifo") => Ok(Policy::Fifo),
                _ => Ok(Policy::Random),
            }
        }
        Some("pct") => {
            let depth = match depth {
                None => PCT_DEPTH_DEFAULT,
                Some(v) => v.trim().parse().ok().filter(|d| *d >= 1).ok_or_else(|| {
                    format!(
                        "sim: {PCT_DEPTH_VAR}={v:?} is not a valid depth: expected a count of \
                         ordering constraints, 1 or more, such as {PCT_DEPTH_VAR}=3"
                    )
                })?,
            };
            let horizon = match horizon {
                None => PCT_HORIZON_DEFAULT,
                Some(v) => v.trim().parse().ok().filter(|h| *h >= 1).ok_or_else(|| {
                    format!(
                        "sim: {PCT_HORIZON_VAR}={v:?} is not a valid horizon: expected a count \
                         of scheduling decisions, 1 or more, such as {PCT_HORIZON_VAR}=5000"
                    )
                })?,
            };
            Ok(Policy::Pct { depth, horizon })
        }
        Some(other) => Err(format!(
            "sim: {POLICY_VAR}={other:?} is not a policy: expected {POLICY_VAR}=random (the \
             default), {POLICY_VAR}=pct or {POLICY_VAR}=fifo"
        )),
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
    fn policies_parse_and_bad_ones_name_their_variable() {
        let s = |v: &str| Some(v.to_string());
        assert_eq!(parse_policy(None, None, None), Ok(Policy::Random));
        assert_eq!(parse_policy(s("fifo"), None, None), Ok(Policy::Fifo));
        assert!(parse_policy(s("fifo"), s("2"), None)
            .unwrap_err()
            .contains("SIM_PCT_DEPTH is set, but SIM_POLICY is not pct"));
        assert_eq!(
            parse_policy(s("pct"), None, None),
            Ok(Policy::Pct {
                depth: PCT_DEPTH_DEFAULT,
                horizon: PCT_HORIZON_DEFAULT
            })
        );
        assert_eq!(
            parse_policy(s("pct"), s("2"), s("500")),
            Ok(Policy::Pct {
                depth: 2,
                horizon: 500
            })
        );
        let bad = parse_policy(s("lifo"), None, None).unwrap_err();
        assert!(bad.contains("SIM_POLICY=\"lifo\" is not a policy"), "{bad}");
        let bad = parse_policy(s("pct"), s("0"), None).unwrap_err();
        assert!(bad.contains("SIM_PCT_DEPTH=\"0\""), "{bad}");
        let bad = parse_policy(None, s("3"), None).unwrap_err();
        assert!(
            bad.contains("SIM_PCT_DEPTH is set, but SIM_POLICY is not pct"),
            "{bad}"
        );
    }

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
