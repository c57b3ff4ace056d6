//! Phase 1: `cargo sim test`'s options resolved into a plan: the seeds, a
//! soak run's length, the share of a partition, the jobs, and which of
//! cargo's arguments choose targets.

use crate::cli::TestOptions;
use crate::seeds::{self, Partition, SeedSpec};
use sim_runtime::settings;
use std::ffi::OsString;
use std::time::Duration;

/// A soak run with no end but Ctrl-C (`--seeds ..`) ends after this long.
const ENDLESS: Duration = Duration::from_secs(100 * 365 * 86_400);

/// What a `cargo sim test` will do, before anything is built.
pub(crate) struct Plan {
    pub(crate) options: TestOptions,
    pub(crate) cargo_args: Vec<String>,
    pub(crate) test_args: Vec<String>,
    /// The seeds every test runs (after its saved ones).
    pub(crate) seeds: SeedSpec,
    /// A soak run's length (`--for`, `--seeds ..`).
    pub(crate) soak: Option<Duration>,
    /// A decision file being replayed (`SIM_REPLAY`).
    pub(crate) replay_file: Option<OsString>,
    /// This runner's share of the seeds (`--partition K/N`).
    pub(crate) partition: Option<Partition>,
    pub(crate) jobs: usize,
    /// The test binaries' arguments that select tests.
    pub(crate) selection: Vec<String>,
    /// cargo's arguments less package and target selection (for replay
    /// lines and doc tests).
    pub(crate) kept: Vec<String>,
    /// Whether the user chose targets (`--test`, `--lib`, ...).
    pub(crate) targets_chosen: bool,
}

impl Plan {
    /// Resolves the options, and sets the settings the test processes
    /// inherit (`--swarm`, the policy portfolio).
    pub(crate) fn resolve(
        options: TestOptions,
        cargo_args: Vec<String>,
        test_args: Vec<String>,
    ) -> Result<Plan, String> {
        if options.swarm {
            // Before anything reads the settings: the test processes
            // inherit it, and the identity and every replay line carry it.
            std::env::set_var(settings::SWARM.name, "1");
        }
        let replay_file = settings::REPLAY.value_os().filter(|f| !f.is_empty());
        let soak = soak(&options)?;
        let mut seeds = seed_spec(&options, soak.is_some(), replay_file.as_ref())?;
        // A sweep of many seeds, with no policy asked for, spreads them over
        // the portfolio's policies (sim_runtime::sweep::portfolio); the test
        // processes inherit the setting, and PCT seeds' replay lines name it.
        if seeds.len() > 1 && replay_file.is_none() && !settings::POLICY.is_set() {
            std::env::set_var(settings::SWEEP_PORTFOLIO.name, "1");
        }
        let partition = options
            .partition
            .as_deref()
            .map(Partition::parse)
            .transpose()?;
        if let Some(partition) = partition {
            seeds = partition.select(&seeds);
            if seeds.is_empty() {
                return Err(format!(
                    "--partition {}/{} holds no seed of the {} asked for",
                    partition.index,
                    partition.count,
                    options.seeds.as_deref().unwrap_or("1")
                ));
            }
        }
        let jobs = jobs(&options)?;
        let selection = crate::compile::selection_args(&test_args)?;
        let (kept, targets_chosen) = crate::cli::build_args(&cargo_args);
        Ok(Plan {
            options,
            cargo_args,
            test_args,
            seeds,
            soak,
            replay_file,
            partition,
            jobs,
            selection,
            kept,
            targets_chosen,
        })
    }

    /// A replay (`--seed`, `SIM_SEED=... cargo sim test`, `SIM_REPLAY`)
    /// runs its one seed exactly, without the saved ones first.
    pub(crate) fn is_replay(&self) -> bool {
        self.options.seed.is_some()
            || (self.options.seeds.is_none()
                && (settings::SEED.is_set() || self.replay_file.is_some()))
    }

    /// How the start line names the seeds.
    pub(crate) fn seeds_said(&self) -> String {
        match (self.soak, &self.options.soak) {
            (Some(_), Some(text)) => format!("fresh seeds for {text}"),
            (Some(_), None) => "fresh seeds until Ctrl-C".to_string(),
            _ => crate::plural(self.seeds.len() as usize, "seed"),
        }
    }
}

/// `--seeds ..`: a soak run with no end but Ctrl-C.
fn endless(options: &TestOptions) -> bool {
    options.seeds.as_deref().map(str::trim) == Some("..")
}

fn soak(options: &TestOptions) -> Result<Option<Duration>, String> {
    Ok(match options.soak.as_deref() {
        Some(text) => Some(seeds::parse_duration(text)?),
        None if endless(options) => Some(ENDLESS),
        None => None,
    })
}

/// The seeds asked for: `--seed`, a soak run's fresh ones, `--seeds`, a
/// replayed decision file's, `SIM_SEED`, or one fresh seed.
fn seed_spec(
    options: &TestOptions,
    soak: bool,
    replay_file: Option<&OsString>,
) -> Result<SeedSpec, String> {
    if let Some(text) = options.seed.as_deref() {
        let seed = sim_runtime::config::parse_seed(text).map_err(|e| format!("--seed: {e}"))?;
        return Ok(SeedSpec::one(seed));
    }
    if soak {
        // Fresh seeds from a random base: each soak run tries new ones.
        return Ok(seeds::soak_seeds(sim_runtime::rng::os_random_u64() >> 2));
    }
    if let Some(spec) = options.seeds.as_ref() {
        return seeds::parse_seeds(spec);
    }
    if let Some(file) = replay_file {
        // A decision file's replay runs the seed it was recorded with.
        let seed = sim_runtime::decision::file_seed(std::path::Path::new(file))?;
        return Ok(SeedSpec::one(seed));
    }
    match settings::SEED.value() {
        Some(seed) => Ok(SeedSpec::one(sim_runtime::config::parse_seed(&seed)?)),
        None => Ok(SeedSpec::one(sim_runtime::rng::os_random_u64())),
    }
}

fn jobs(options: &TestOptions) -> Result<usize, String> {
    let jobs = options.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if jobs == 0 {
        return Err("--jobs 0 runs nothing: give at least 1".to_string());
    }
    Ok(jobs)
}
