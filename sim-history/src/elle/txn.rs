//! A history's transactions, as the inference reads them.

use crate::history::{History, Operation, Outcome};
use crate::op::{Mop, MopKind};
use crate::value::Value;

/// One transaction: its operation, and its steps as they ran (a
/// completed one's reads filled in).
#[derive(Clone, Debug)]
pub(crate) struct Txn {
    pub operation: Operation,
    pub mops: Vec<Mop>,
}

impl Txn {
    pub fn committed(&self) -> bool {
        self.operation.is_ok()
    }

    pub fn failed(&self) -> bool {
        self.operation.outcome == Outcome::Fail
    }

    /// `T12`.
    pub fn name(&self) -> String {
        format!("T{}", self.operation.id)
    }

    /// The first read of `key` before the transaction's own writes to it:
    /// what it saw of the others (`None`: no such read, or unknown).
    pub fn external_read(&self, key: &Value) -> Option<&Value> {
        if !self.committed() {
            return None;
        }
        for mop in &self.mops {
            if &mop.key != key {
                continue;
            }
            match mop.kind {
                MopKind::Read => return Some(&mop.value),
                MopKind::Append | MopKind::Write => return None,
            }
        }
        None
    }

    /// Every key the transaction read externally, with what it saw.
    pub fn external_reads(&self) -> Vec<(&Value, &Value)> {
        let mut keys: Vec<&Value> = Vec::new();
        for mop in &self.mops {
            if !keys.contains(&&mop.key) {
                keys.push(&mop.key);
            }
        }
        keys.into_iter()
            .filter_map(|k| self.external_read(k).map(|v| (k, v)))
            .collect()
    }

    /// Whether the transaction writes (or appends to) `key`.
    pub fn writes(&self, key: &Value) -> bool {
        self.mops
            .iter()
            .any(|m| &m.key == key && m.kind != MopKind::Read)
    }

    /// `T12 (c3: [r "x" [1 2]] [append "y" 3])`.
    pub fn describe(&self) -> String {
        let steps: Vec<String> = self.mops.iter().map(Mop::to_string).collect();
        let state = match self.operation.outcome {
            Outcome::Ok(_) => "",
            Outcome::Fail => ", failed",
            Outcome::Info => ", unknown",
        };
        format!(
            "{} ({}{state}: {})",
            self.name(),
            self.operation.client,
            steps.join(" ")
        )
    }
}

/// The history's transactions (operations of function `txn`), in the
/// order of their invocations.
pub(crate) fn transactions(history: &History) -> Vec<Txn> {
    history
        .operations()
        .into_iter()
        .filter(|op| op.op.f == "txn")
        .map(|mut operation| {
            // A completed transaction's steps are its result, moved out of
            // it rather than copied.
            let mops = match &mut operation.outcome {
                Outcome::Ok(result @ Value::List(_)) => match std::mem::take(result) {
                    Value::List(items) => items.into_iter().filter_map(Mop::from_owned).collect(),
                    _ => Vec::new(),
                },
                _ => operation.op.mops(),
            };
            Txn { operation, mops }
        })
        .collect()
}
