//! Phase 5: tests that carry state from one seed to the next.
//!
//! A failing seed that passes alone failed because of the seeds before it
//! in its process (a static, a process-wide counter): the test carries
//! state, and its outcomes are not its seeds' own. Its seeds run again,
//! one process each (a bounded count), so what is reported and saved
//! reproduces.

use super::sweep::Swept;
use super::Halt;
use crate::compile::TestBinary;
use crate::runner::{self, Mode, Outcome, SweepConfig, TestCase, TestResult};
use sim_runtime::sweep::FailureClass;

/// The most seeds of a test that carries state run again, one process each.
pub(crate) const FRESH_PROCESS_SEEDS_MAX: usize = 10_000;

/// Finds the tests that carry state (`swept.carried`) and runs those with
/// few enough seeds again, one process per seed.
pub(crate) fn run_again(binaries: &[TestBinary], swept: &mut Swept) -> Result<(), Halt> {
    let config = &swept.config;
    let carried: Vec<(usize, u64)> = swept
        .results
        .iter()
        .enumerate()
        .filter_map(|(index, result)| Some((index, confirm_alone(config, binaries, result)?)))
        .collect();
    swept.carried.extend(carried);
    let again: Vec<usize> = swept
        .carried
        .keys()
        .copied()
        .filter(|&i| swept.results[i].case.seeds.len() <= FRESH_PROCESS_SEEDS_MAX)
        .collect();
    if again.is_empty() {
        return Ok(());
    }
    let cases: Vec<TestCase> = again
        .iter()
        .map(|&i| TestCase {
            fresh_process_per_seed: true,
            ..swept.results[i].case.clone()
        })
        .collect();
    let mut reporter = crate::report::Reporter::new(None);
    let rerun = runner::run(&swept.config, binaries, cases, &mut reporter);
    reporter.finish();
    let rerun = rerun.map_err(|runner::Interrupted(signal)| {
        eprintln!("sim: interrupted by signal {signal}; no test process is left running");
        Halt::Signal(signal)
    })?;
    for (i, result) in again.iter().zip(rerun) {
        swept.results[*i] = result;
    }
    Ok(())
}

/// For a test that ran its seeds in one process: its first failing seed,
/// when that seed passes run alone in a fresh process (state carried
/// between seeds made it fail).
fn confirm_alone(
    config: &SweepConfig,
    binaries: &[TestBinary],
    result: &TestResult,
) -> Option<u64> {
    if result.mode != Mode::InProcess || result.case.seeds.len() < 2 {
        return None;
    }
    let (index, outcome) = result.failures().into_iter().next()?;
    if let Outcome::Fail {
        class: FailureClass::Nondeterminism,
        ..
    } = outcome
    {
        // `--check-determinism` already compared it with a fresh process:
        // state carried between seeds is what it reports.
        return None;
    }
    if index == 0 {
        // The process's first seed: nothing ran before it.
        return None;
    }
    let seed = result.case.seeds.get(index);
    match runner::run_one(config, binaries, &result.case, seed, &[]) {
        Ok(run) if run.failure.is_none() => Some(seed),
        _ => None,
    }
}
