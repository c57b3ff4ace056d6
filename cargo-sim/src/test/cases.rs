//! Phase 3: the tests to run, each with its seeds (the saved regressions
//! first) and the replay line its failures print.

use super::plan::Plan;
use super::{check_signal, Halt};
use crate::compile::{self, TestBinary};
use crate::runner::TestCase;
use crate::seeds::SeedList;
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
            vec![format!("({}, harness = false)", binary.file_stem())]
        } else {
            compile::list_tests(binary, &plan.selection)?
        };
        let (replay_command, replay_prefix) = crate::replay_command(binary, &plan.kept);
        for name in listed {
            let mut saved: Vec<u64> = Vec::new();
            let mut saved_branches = Vec::new();
            if saved_first {
                saved.extend(crate::regressions::load(binary, &name));
                // A saved branch run's root seed runs plain too: the
                // branch run needs its place among the seeds.
                for (seed, plan) in crate::regressions::load_branches(binary, &name) {
                    let index = saved.iter().position(|&s| s == seed).unwrap_or_else(|| {
                        saved.push(seed);
                        saved.len() - 1
                    });
                    saved_branches.push((index, plan));
                }
            }
            check_signal()?;
            cases.push(TestCase {
                binary: index,
                name,
                // Never held whole: a sweep of any size plans at once.
                seeds: SeedList::new(saved, spec.clone()),
                replay_prefix: replay_prefix.clone(),
                replay_command: replay_command.clone(),
                whole_binary,
                fresh_process_per_seed: false,
                saved_branches,
            });
        }
    }
    Ok(cases)
}
