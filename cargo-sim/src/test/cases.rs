//! Phase 3: the tests to run, each with its seeds (the saved regressions
//! first) and the replay line its failures print.

use super::plan::Plan;
use super::{check_signal, Halt};
use crate::compile::{self, TestBinary};
use crate::runner::TestCase;
use crate::seeds::SeedList;
use sim_runtime::property::branch::Plan as BranchPlan;
use std::sync::Arc;

/// Every selected test of every binary.
pub(crate) fn cases(plan: &Plan, binaries: &[TestBinary]) -> Result<Vec<TestCase>, Halt> {
    let spec = Arc::new(plan.seeds.clone());
    // A replay runs its one seed, exactly; a sweep or a plain run starts
    // with the saved ones (on the first share only).
    let saved_first = !plan.is_replay() && plan.partition.is_none_or(|p| p.index == 1);
    let mut cases = Vec::new();
    for (index, binary) in binaries.iter().enumerate() {
        // Not libtest's harness (`harness = false`): the binary is one
        // test, run whole with SIM_SEED.
        let whole_binary = compile::without_harness(binary);
        let listed = if whole_binary {
            vec![compile::Listed {
                name: format!("({}, harness = false)", binary.file_stem()),
                ignored: false,
            }]
        } else {
            compile::list_tests(binary, &plan.selection)?
        };
        let (replay_command, replay_prefix) = crate::replay_command(binary, &plan.kept);
        for compile::Listed { name, ignored } in listed {
            let saved = match saved_first {
                true => saved_seeds(binary, &name),
                false => Saved::default(),
            };
            check_signal()?;
            cases.push(TestCase {
                binary: index,
                name,
                // Never held whole: a sweep of any size plans at once.
                seeds: SeedList::new(saved.seeds, spec.clone()),
                replay_prefix: replay_prefix.clone(),
                replay_command: replay_command.clone(),
                whole_binary,
                ignored,
                fresh_process_per_seed: false,
                saved_branches: saved.branches,
                pinned: saved.pinned,
            });
        }
    }
    Ok(cases)
}

/// A test's saved lines as the sweep runs them.
#[derive(Default)]
struct Saved {
    /// The seeds, those pinned to their own settings first.
    seeds: Vec<u64>,
    /// Saved branch runs: the root seed's index, the plan.
    branches: Vec<(usize, BranchPlan)>,
    /// The seeds (by index) that run with their saved settings.
    pinned: Vec<(usize, Vec<String>)>,
}

/// The saved lines of `test` (`crate::regressions`): each seed once (a
/// saved branch run's root seed runs plain too: the branch run needs its
/// place among the seeds), first those this sweep would run otherwise than
/// they were saved.
fn saved_seeds(binary: &TestBinary, test: &str) -> Saved {
    let entries = crate::regressions::load(binary, test);
    let mut seeds: Vec<(u64, Option<Vec<String>>)> = Vec::new();
    for entry in &entries {
        if seeds.iter().all(|(s, _)| *s != entry.seed) {
            let differs = entry
                .settings
                .clone()
                .filter(|s| *s != crate::regressions::run_settings(entry.seed));
            seeds.push((entry.seed, differs));
        }
    }
    // Stable: file order within each group.
    seeds.sort_by_key(|(_, pinned)| pinned.is_none());
    let mut saved = Saved::default();
    for (index, (seed, pinned)) in seeds.into_iter().enumerate() {
        saved.seeds.push(seed);
        if let Some(settings) = pinned {
            saved.pinned.push((index, settings));
        }
    }
    for entry in entries {
        if let Some(plan) = entry.plan {
            let index = saved.seeds.iter().position(|&s| s == entry.seed);
            saved
                .branches
                .push((index.expect("every seed is listed"), plan));
        }
    }
    saved
}
