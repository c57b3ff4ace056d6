//! Linearizability: is there an order of the operations, each taking
//! effect at one point between its invocation and its completion, that a
//! sequential [`Model`] accepts?
//!
//! - `search.rs`: Wing & Gong's search as Lowe improved it, with the
//!   states ruled out remembered (porcupine's algorithm), and unknown
//!   operations tried only where the others are stuck;
//! - this file: P-compositionality (each partition, a key of a map, on its
//!   own), the budget and the verdict;
//! - `window.rs`: an illegal history cut down to the smallest window of
//!   operations that still cannot be linearized;
//! - [`models`]: register, key-value map, set, FIFO queue, counter.
//!
//! # Examples
//!
//! A stale read: `b` reads 1 after `a`'s write of 2 completed.
//!
//! ```
//! use sim_history::linear::{check, models::KeyValue, Budget, Verdict};
//! use sim_history::{History, Kind, Op, Value};
//!
//! let mut h = History::new();
//! let w1 = h.invoke("a", 0, Op::write("x", 1));
//! h.complete(w1, Kind::Ok, 10, Value::Nil);
//! let w2 = h.invoke("a", 20, Op::write("x", 2));
//! h.complete(w2, Kind::Ok, 30, Value::Nil);
//! let r = h.invoke("b", 40, Op::read("x"));
//! h.complete(r, Kind::Ok, 50, Value::Int(1));
//!
//! let report = check(&KeyValue::new(), &h, Budget::default());
//! let Verdict::Illegal(illegal) = report.verdict else { panic!("a stale read passed") };
//! assert_eq!(illegal.window.len(), 3); // both writes, and the read of 1
//! assert_eq!(illegal.culprit.describe(), "read \"x\" -> 1");
//! ```

mod bits;
pub mod model;
pub mod models;
mod search;
mod window;

pub use model::Model;

use crate::history::{History, Operation, Outcome};
use crate::value::Value;
use search::{Found, Input};
use std::collections::BTreeMap;

/// How much a check may search: a count of the model's steps, so a check
/// that runs out does so at the same point on every machine (a run's
/// verdict replays with its seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The most model steps, over every partition (and the search for the
    /// smallest window of an illegal history, which gets as many again).
    pub steps_max: u64,
}

impl Default for Budget {
    /// Ten million steps: about a second of CPU for most models.
    fn default() -> Budget {
        Budget {
            steps_max: 10_000_000,
        }
    }
}

/// What a check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every partition has an order the model accepts.
    Ok,
    /// One partition has none.
    Illegal(Box<Illegal>),
    /// The budget ran out before a partition was decided (and no other
    /// partition was illegal): not a pass.
    Unknown {
        /// The partition (key) left undecided.
        partition: Value,
    },
}

impl Verdict {
    /// Whether the history was found linearizable.
    pub fn is_ok(&self) -> bool {
        matches!(self, Verdict::Ok)
    }
}

/// The report of an illegal history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Illegal {
    /// The partition (key) that cannot be linearized.
    pub partition: Value,
    /// The smallest window found: operations that completed, which no
    /// order makes legal on their own, in the order of invocation.
    pub window: Vec<Operation>,
    /// The window's last operation to complete: the one no order could
    /// place before it returned.
    pub culprit: Operation,
    /// The states (in words) in which the model refused the culprit.
    pub refused: Vec<String>,
    /// Whether the window is minimal (no single operation of it can be
    /// dropped); false when the budget ran out while cutting it down.
    pub minimal: bool,
}

impl Illegal {
    /// The window as a table of clients by time, the culprit marked, and
    /// what went wrong, in words.
    pub fn explain(&self) -> String {
        let mut out = crate::table::operations(&self.window, &[self.culprit.id]);
        let states = if self.refused.is_empty() {
            String::new()
        } else {
            format!(
                " (where the orders that got that far placed it, {})",
                self.refused.join(", or ")
            )
        };
        out.push_str(&format!(
            "{} by {} cannot take effect between its invocation and its return in any order that also \
             explains the other operations{states}.",
            self.culprit.describe(),
            self.culprit.client,
        ));
        out
    }
}

/// The outcome of a check, with what it looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The model's name.
    pub model: String,
    /// Linearizable, illegal or unknown.
    pub verdict: Verdict,
    /// The operations checked (failed ones, and unknown reads, are left
    /// out: they constrain nothing).
    pub operations: usize,
    /// The partitions they fell into.
    pub partitions: usize,
    /// The model steps the check took.
    pub steps: u64,
}

/// Checks `history` against `model`.
pub fn check<M: Model>(model: &M, history: &History, budget: Budget) -> Report {
    check_operations(model, &history.operations(), budget)
}

/// Checks operations (a history's [`History::operations`]) against
/// `model`, each partition on its own.
pub fn check_operations<M: Model>(model: &M, operations: &[Operation], budget: Budget) -> Report {
    let partitions = partition(model, operations);
    let mut report = Report {
        model: model.name(),
        verdict: Verdict::Ok,
        operations: partitions.values().map(Vec::len).sum(),
        partitions: partitions.len(),
        steps: 0,
    };
    match decide_all(model, partitions, budget, &mut report.steps) {
        Decided::Linearizable => {}
        Decided::Unknown(partition) => report.verdict = Verdict::Unknown { partition },
        Decided::Illegal { key, ops, steps } => {
            let mut window_steps = 0;
            let illegal =
                window::smallest(model, key, &ops, steps, &mut window_steps, budget.steps_max);
            report.verdict = Verdict::Illegal(Box::new(illegal));
        }
    }
    report
}

/// Whether `history` is linearizable against `model`: `Some(true)` or
/// `Some(false)`, `None` when the budget ran out first. The verdict of
/// [`check`] without the search for the smallest illegal window (what
/// porcupine's check answers).
pub fn is_linearizable<M: Model>(model: &M, history: &History, budget: Budget) -> Option<bool> {
    let partitions = partition(model, &history.operations());
    match decide_all(model, partitions, budget, &mut 0) {
        Decided::Linearizable => Some(true),
        Decided::Illegal { .. } => Some(false),
        Decided::Unknown(_) => None,
    }
}

/// What the search of every partition came to.
enum Decided {
    Linearizable,
    /// The first illegal partition found, and the steps its search took.
    Illegal {
        key: Value,
        ops: Vec<Operation>,
        steps: u64,
    },
    /// The budget ran out with this partition undecided.
    Unknown(Value),
}

/// Searches the partitions in rounds of growing budgets: one partition
/// that is hard to decide does not keep an easy illegal one from being
/// found (as a check of them all at once would not), and a re-search costs
/// at most a third more than searching each partition once with its final
/// budget.
fn decide_all<M: Model>(
    model: &M,
    partitions: BTreeMap<Value, Vec<Operation>>,
    budget: Budget,
    spent: &mut u64,
) -> Decided {
    let mut undecided: Vec<(Value, Vec<Operation>)> = partitions.into_iter().collect();
    let mut round_steps = ROUND_STEPS_FIRST;
    while !undecided.is_empty() {
        let mut next = Vec::new();
        for (key, ops) in undecided {
            let allowed = round_steps.min(budget.steps_max.saturating_sub(*spent));
            let mut steps = 0;
            let found = decide(model, &ops, &mut steps, allowed, None);
            *spent += steps.min(allowed);
            match found {
                Found::Linearizable => {}
                Found::OutOfBudget => next.push((key, ops)),
                Found::Illegal { .. } => return Decided::Illegal { key, ops, steps },
            }
        }
        if *spent >= budget.steps_max {
            if let Some((partition, _)) = next.into_iter().next() {
                return Decided::Unknown(partition);
            }
            return Decided::Linearizable;
        }
        undecided = next;
        round_steps = round_steps.saturating_mul(4);
    }
    Decided::Linearizable
}

/// The first round's budget per partition, in model steps.
const ROUND_STEPS_FIRST: u64 = 10_000;

/// The operations that constrain the model, by partition: failed ones
/// never happened, and an unknown one that changes nothing, or whose
/// effect nobody saw ([`Model::reduce_unknown`]), cannot matter.
fn partition<M: Model>(model: &M, operations: &[Operation]) -> BTreeMap<Value, Vec<Operation>> {
    let mut partitions: BTreeMap<Value, Vec<Operation>> = BTreeMap::new();
    for op in operations {
        let keep = match op.outcome {
            Outcome::Ok(_) => true,
            Outcome::Fail => false,
            Outcome::Info => !model.read_only(&op.op),
        };
        if keep {
            partitions
                .entry(model.partition(&op.op))
                .or_default()
                .push(op.clone());
        }
    }
    for ops in partitions.values_mut() {
        reduce_unknown(model, ops);
    }
    partitions.retain(|_, ops| !ops.is_empty());
    partitions
}

/// Applies [`Model::reduce_unknown`] to a partition's unknown operations.
fn reduce_unknown<M: Model>(model: &M, ops: &mut Vec<Operation>) {
    let unknown_at: Vec<usize> = (0..ops.len()).filter(|&i| !ops[i].is_ok()).collect();
    if unknown_at.is_empty() {
        return;
    }
    let mut unknown: Vec<crate::op::Op> = unknown_at.iter().map(|&i| ops[i].op.clone()).collect();
    let completed: Vec<(&crate::op::Op, &Value)> = ops
        .iter()
        .filter_map(|op| op.output().map(|out| (&op.op, out)))
        .collect();
    let dropped = model.reduce_unknown(&mut unknown, &completed);
    assert_eq!(
        dropped.len(),
        unknown.len(),
        "Model::reduce_unknown: one answer per unknown operation"
    );
    let mut drop_ids = Vec::new();
    for ((i, op), drop) in unknown_at.into_iter().zip(unknown).zip(dropped) {
        if drop {
            drop_ids.push(ops[i].id);
        } else {
            ops[i].op = op;
        }
    }
    ops.retain(|op| !drop_ids.contains(&op.id));
}

/// Searches one partition.
fn decide<M: Model>(
    model: &M,
    ops: &[Operation],
    steps: &mut u64,
    steps_max: u64,
    probe: Option<usize>,
) -> Found {
    let inputs: Vec<Input<'_>> = ops
        .iter()
        .map(|op| Input {
            op: &op.op,
            output: op.output(),
            call: op.invoke_index,
            ret: if op.is_ok() {
                op.complete.map(|(index, _)| index)
            } else {
                None
            },
        })
        .collect();
    search::search(model, &inputs, steps, steps_max, probe)
}
