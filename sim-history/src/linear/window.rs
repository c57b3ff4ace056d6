//! An illegal partition cut down to the smallest window of operations
//! that still cannot be linearized.
//!
//! Two cuts keep a history illegal: ending it early (every operation
//! still open at the cut becomes unknown, which only frees it), and
//! making an operation that returned unknown (it may then take effect
//! later, or never). So the window is found in two passes: the earliest
//! cut that is still illegal, by bisection; then, greedily, in halving
//! chunks, each operation before the cut made unknown while the rest stays
//! illegal. What stays known is the window: those operations alone admit
//! no order.

use super::model::Model;
use super::search::Found;
use super::{decide, Illegal};
use crate::history::{Operation, Outcome};
use crate::value::Value;

/// The least budget of one trial, in model steps.
const TRIAL_STEPS_MIN: u64 = 20_000;
/// The least budget of the whole search for the window.
const WINDOW_STEPS_MIN: u64 = 1_000_000;

/// The smallest window of `ops` (an illegal partition) that is still
/// illegal, within `steps_max` more model steps.
pub(super) fn smallest<M: Model>(
    model: &M,
    partition: Value,
    ops: &[Operation],
    decided_steps: u64,
    steps: &mut u64,
    steps_max: u64,
) -> Illegal {
    // A trial that frees many operations can take far longer than the
    // search that found the history illegal: each gets a bounded share.
    let mut budget = Trial {
        model,
        steps,
        steps_max: steps_max.min(decided_steps.saturating_mul(50).max(WINDOW_STEPS_MIN)),
        trial_steps_max: (decided_steps * 4).clamp(TRIAL_STEPS_MIN, steps_max),
        incomplete: false,
    };
    let cut = budget.earliest_illegal_cut(ops);
    let mut window = prefix(ops, cut);
    let minimal = budget.relax(&mut window, cut);
    let mut window: Vec<Operation> = window.into_iter().filter(Operation::is_ok).collect();
    window.sort_by_key(|op| op.invoke_index);
    let culprit_at = window
        .iter()
        .position(|op| op.complete.map(|(index, _)| index) == Some(cut))
        .expect("the cut is a completion in the window");
    // Once more, on the window alone, for the states that refused it.
    let mut probe_steps = 0;
    let refused = match decide(
        model,
        &window,
        &mut probe_steps,
        steps_max,
        Some(culprit_at),
    ) {
        Found::Illegal { refused, .. } => refused,
        _ => Vec::new(),
    };
    Illegal {
        partition,
        culprit: window[culprit_at].clone(),
        window,
        refused,
        minimal: minimal && !budget.incomplete,
    }
}

/// The operations as they stood when the history had reached index
/// `cut`: later ones left out, open ones unknown.
fn prefix(ops: &[Operation], cut: u64) -> Vec<Operation> {
    ops.iter()
        .filter(|op| op.invoke_index <= cut)
        .map(|op| {
            let completed = op.complete.is_some_and(|(index, _)| index <= cut);
            let mut op = op.clone();
            if !completed {
                op.outcome = Outcome::Info;
                op.complete = None;
            }
            op
        })
        .collect()
}

/// Searches under a budget per trial and one for them all. A trial that
/// runs out counts as legal: the cut is not taken, and the window is not
/// known to be minimal.
struct Trial<'a, M: Model> {
    model: &'a M,
    steps: &'a mut u64,
    steps_max: u64,
    trial_steps_max: u64,
    /// A trial ran out: the window may not be minimal.
    incomplete: bool,
}

impl<M: Model> Trial<'_, M> {
    fn illegal(&mut self, ops: &[Operation]) -> bool {
        if *self.steps > self.steps_max {
            self.incomplete = true;
            return false;
        }
        let mut trial_steps = 0;
        let found = decide(
            self.model,
            ops,
            &mut trial_steps,
            self.trial_steps_max,
            None,
        );
        *self.steps += trial_steps;
        match found {
            Found::Illegal { .. } => true,
            Found::Linearizable => false,
            Found::OutOfBudget => {
                self.incomplete = true;
                false
            }
        }
    }

    /// The earliest completion index at which the history is already
    /// illegal (illegality only grows with the history), by bisection over
    /// the completions.
    fn earliest_illegal_cut(&mut self, ops: &[Operation]) -> u64 {
        let mut cuts: Vec<u64> = ops
            .iter()
            .filter(|op| op.is_ok())
            .filter_map(|op| op.complete.map(|(index, _)| index))
            .collect();
        cuts.sort_unstable();
        assert!(
            !cuts.is_empty(),
            "sim-history: an illegal partition has a completion"
        );
        // The whole partition is illegal: cuts[hi] is; find the first.
        let (mut lo, mut hi) = (0, cuts.len() - 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.illegal(&prefix(ops, cuts[mid])) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        cuts[hi]
    }

    /// Makes each known operation but the one completing at `cut` unknown
    /// while the window stays illegal: in halving chunks, then one by one.
    /// True when it got down to single operations.
    fn relax(&mut self, window: &mut [Operation], cut: u64) -> bool {
        let candidates: Vec<usize> = (0..window.len())
            .filter(|&i| {
                window[i].is_ok() && window[i].complete.map(|(index, _)| index) != Some(cut)
            })
            .collect();
        let mut chunk = candidates.len().div_ceil(2).max(1);
        loop {
            for part in candidates.chunks(chunk) {
                let saved: Vec<(usize, Operation)> =
                    part.iter().map(|&i| (i, window[i].clone())).collect();
                let mut changed = false;
                for &i in part {
                    if window[i].is_ok() {
                        window[i].outcome = Outcome::Info;
                        window[i].complete = None;
                        changed = true;
                    }
                }
                if changed && !self.illegal(window) {
                    for (i, op) in saved {
                        window[i] = op;
                    }
                }
            }
            if chunk == 1 {
                return true;
            }
            chunk = chunk.div_ceil(2);
        }
    }
}
