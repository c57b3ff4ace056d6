//! Phase 6: failures that need an order of tasks tokio's `current_thread`
//! runtime never gives.
//!
//! The seed picks among the ready tasks; tokio's `current_thread` runtime
//! (what `#[tokio::test]` runs on) runs them in the order they became
//! ready. A test written against it may lean on that order without saying
//! so (a pool's size counted before its refill ran, a publish before the
//! subscription it races): it never fails on tokio and fails here. So a
//! failing test's first failing seed runs once more in that order
//! (`SIM_POLICY=fifo`, the same seed: the same latencies, faults and
//! randomness). When it passes, the report says that the failure needs
//! another order of ready tasks, one a `multi_thread` runtime can give,
//! and how to run the test in tokio's order if it means to rely on it.

use super::sweep::Swept;
use crate::compile::TestBinary;
use crate::runner::{self, Outcome};
use sim_runtime::sweep::FailureClass;

/// The most failing tests whose seed runs again in FIFO order (one run
/// each): a sweep of many failures is not held up by them.
pub(crate) const FIFO_CHECKS_MAX: usize = 32;

/// Runs each failing test's first failing seed in FIFO order, and notes in
/// `swept.fifo_passes` those that pass there.
pub(crate) fn check(binaries: &[TestBinary], swept: &mut Swept) {
    if fifo_already() {
        return;
    }
    let mut checked = 0;
    for index in 0..swept.results.len() {
        if checked == FIFO_CHECKS_MAX || crate::signals::received().is_some() {
            return;
        }
        let Some(seed) = first_order_failure(&swept.results[index]) else {
            continue;
        };
        checked += 1;
        let case = &swept.results[index].case;
        let run = runner::run_one_in_fifo_order(&swept.config, binaries, case, seed);
        if matches!(run, Ok(ref run) if run.failure.is_none()) {
            swept.fifo_passes.insert(index, seed);
        }
    }
}

/// Whether the sweep ran in FIFO order already (`SIM_POLICY=fifo`).
fn fifo_already() -> bool {
    sim_runtime::settings::POLICY
        .value()
        .is_some_and(|policy| policy.trim() == "fifo")
}

/// The first failing seed of `result`, when its failure is one an order of
/// tasks can make (a panic, a deadlock, a broken property...), not one of
/// the process or the machine (a crash, a hang, an escape, two runs that
/// differ).
fn first_order_failure(result: &runner::TestResult) -> Option<u64> {
    let (index, outcome) = result.failures().into_iter().next()?;
    let Outcome::Fail { class, .. } = outcome else {
        return None;
    };
    let of_an_order = !matches!(
        class,
        FailureClass::Crash
            | FailureClass::Hang
            | FailureClass::Escape
            | FailureClass::Nondeterminism
    );
    of_an_order.then(|| result.case.seeds.get(index))
}
