//! [`Model`]: the sequential specification a history is checked against.

use crate::op::Op;
use crate::value::Value;
use std::fmt::Debug;
use std::hash::Hash;

/// A sequential specification: what one operation at a time does to a
/// state. The checker looks for an order of the history's operations,
/// each at a point between its invocation and its completion, that this
/// model accepts step by step.
///
/// # Examples
///
/// A bank account that refuses to go below zero:
///
/// ```
/// use sim_history::linear::{check, Budget, Model, Verdict};
/// use sim_history::{History, Kind, Op, Value};
///
/// struct Account;
///
/// impl Model for Account {
///     type State = i64;
///     fn name(&self) -> String {
///         "account".into()
///     }
///     fn init(&self) -> i64 {
///         0
///     }
///     fn step(&self, balance: &i64, op: &Op, output: Option<&Value>) -> Option<i64> {
///         let amount = op.value.as_int().unwrap_or(0);
///         match (op.f.as_ref(), output) {
///             ("deposit", _) => Some(balance + amount),
///             // Refused withdrawals are recorded as `fail` and never reach
///             // the model; an unknown one happened only if it could.
///             ("withdraw", _) if *balance >= amount => Some(balance - amount),
///             ("balance", None) => Some(*balance),
///             ("balance", Some(seen)) => (seen.as_int() == Some(*balance)).then_some(*balance),
///             _ => None,
///         }
///     }
///     fn read_only(&self, op: &Op) -> bool {
///         op.f == "balance"
///     }
/// }
///
/// let mut history = History::new();
/// let deposit = history.invoke("a", 0, Op::new("deposit", (), 10));
/// history.complete(deposit, Kind::Ok, 1, Value::Nil);
/// let withdraw = history.invoke("b", 2, Op::new("withdraw", (), 7));
/// history.complete(withdraw, Kind::Ok, 3, Value::Nil);
/// let balance = history.invoke("a", 4, Op::new("balance", (), ()));
/// history.complete(balance, Kind::Ok, 5, Value::Int(10)); // stale
///
/// let report = check(&Account, &history, Budget::default());
/// assert!(matches!(report.verdict, Verdict::Illegal(_)));
/// ```
pub trait Model {
    /// The state between operations. Equal states are one state to the
    /// search (it remembers the states it has ruled out), so keep it
    /// small and canonical.
    type State: Clone + Eq + Hash + Debug;

    /// The model's name in reports (`register`, `key-value map`).
    fn name(&self) -> String;

    /// The state before any operation.
    fn init(&self) -> Self::State;

    /// The state after `op`, applied to `state`, returned `output`; `None`
    /// when it could not have (a read that saw another value). `output`
    /// is `None` for an operation whose result nobody knows (`info`): the
    /// step applies its effect as it would have happened from `state`.
    fn step(&self, state: &Self::State, op: &Op, output: Option<&Value>) -> Option<Self::State>;

    /// Which independent part of the state `op` acts on: the checker
    /// checks each part on its own (P-compositionality), which is what
    /// makes a history over many keys cheap. Default: the op's key.
    fn partition(&self, op: &Op) -> Value {
        op.key.clone()
    }

    /// Whether `op` never changes the state. Such an operation whose
    /// result is unknown constrains nothing, so the checker leaves it out.
    fn read_only(&self, _op: &Op) -> bool {
        false
    }

    /// Whether `op`'s effect is the same from every state (a register's
    /// write): after any other operations, it leads where it leads from
    /// the start, so the search never tries it after another unknown one.
    /// Default: false.
    fn blind(&self, _op: &Op) -> bool {
        false
    }

    /// Makes a partition's unknown operations cheaper to search, keeping
    /// the verdict: returns which of them no order needs (each one whose
    /// effect no completed operation could have seen, so that an order
    /// using it works as well without it), and may rewrite the others into
    /// operations no completed one can tell apart from them (a write of a
    /// value nobody read becomes a write of one marker value, so they are
    /// all one operation to the search). Unknown operations may take
    /// effect at any point or never, so each one kept multiplies the
    /// search. Default: none dropped, none rewritten.
    ///
    /// `unknown` are the partition's unknown operations; `completed` its
    /// completed ones with their results.
    fn reduce_unknown(&self, unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
        let _ = completed;
        vec![false; unknown.len()]
    }

    /// A state in words, for reports.
    fn describe_state(&self, state: &Self::State) -> String {
        format!("{state:?}")
    }
}
