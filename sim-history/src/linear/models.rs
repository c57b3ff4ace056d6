//! The built-in models: a register, a key-value map, a set, a FIFO queue
//! and a counter. Each reads the operations [`Op`]'s constructors write
//! (`Op::read`, `Op::write`, `Op::cas`, `Op::add`, `Op::enqueue`,
//! `Op::dequeue`); an operation of another function is refused.

use super::model::Model;
use crate::op::Op;
use crate::value::Value;
use std::collections::{BTreeSet, HashSet, VecDeque};

/// A register step: `read` sees the value, `write` sets it, `cas` sets
/// `to` where it holds `from` (its result `false`: it held something
/// else).
fn register_step(value: &Value, op: &Op, output: Option<&Value>) -> Option<Value> {
    match op.f.as_ref() {
        "read" => match output {
            None => Some(value.clone()),
            Some(seen) => (seen == value).then(|| value.clone()),
        },
        "write" => Some(op.value.clone()),
        "cas" => {
            let [from, to] = op.value.as_list()? else {
                return None;
            };
            match output {
                Some(Value::Bool(false)) => (value != from).then(|| value.clone()),
                Some(_) => (value == from).then(|| to.clone()),
                None if value == from => Some(to.clone()),
                None => Some(value.clone()),
            }
        }
        _ => None,
    }
}

/// What a register's unknown write of a value no completed operation saw
/// becomes: one value for all of them. No read returned any of them and
/// no compare-and-set named one, so every operation treats them alike,
/// and the search then sees one operation where there were many.
fn unseen_marker() -> Value {
    Value::Str("sim-history: a value nobody saw".to_string())
}

/// A register's unknown writes, and compare-and-sets to a value, that no
/// completed operation saw (read, or named as a compare-and-set's
/// `from`), rewritten to the marker.
fn register_reduce(unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
    let mut seen: HashSet<Value> = HashSet::new();
    for (op, output) in completed {
        match (op.f.as_ref(), op.value.as_list()) {
            ("read", _) => {
                seen.insert((*output).clone());
            }
            ("cas", Some([from, _])) => {
                seen.insert(from.clone());
            }
            _ => {}
        }
    }
    for op in unknown.iter() {
        if let ("cas", Some([from, _])) = (op.f.as_ref(), op.value.as_list()) {
            seen.insert(from.clone());
        }
    }
    for op in unknown.iter_mut() {
        match op.f.as_ref() {
            "write" if !seen.contains(&op.value) => op.value = unseen_marker(),
            "cas" => {
                if let Value::List(pair) = &mut op.value {
                    if pair.len() == 2 && !seen.contains(&pair[1]) {
                        pair[1] = unseen_marker();
                    }
                }
            }
            _ => {}
        }
    }
    vec![false; unknown.len()]
}

/// One register, whatever the keys: `read`, `write`, `cas`.
///
/// ```
/// use sim_history::linear::{check, models::Register, Budget};
/// use sim_history::{History, Kind, Op, Value};
///
/// let mut h = History::new();
/// let w = h.invoke("a", 0, Op::write("x", 1));
/// let r = h.invoke("b", 1, Op::read("x"));
/// h.complete(r, Kind::Ok, 2, Value::Int(1)); // concurrent with the write: fine
/// h.complete(w, Kind::Ok, 3, Value::Nil);
/// assert!(check(&Register::new(), &h, Budget::default()).verdict.is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Register {
    initial: Value,
}

impl Register {
    /// A register that starts as `Nil`.
    pub fn new() -> Register {
        Register::default()
    }

    /// A register that starts as `initial`.
    pub fn starting_at(initial: impl Into<Value>) -> Register {
        Register {
            initial: initial.into(),
        }
    }
}

impl Model for Register {
    type State = Value;

    fn name(&self) -> String {
        "register".to_string()
    }

    fn init(&self) -> Value {
        self.initial.clone()
    }

    fn step(&self, state: &Value, op: &Op, output: Option<&Value>) -> Option<Value> {
        register_step(state, op, output)
    }

    fn partition(&self, _op: &Op) -> Value {
        Value::Nil
    }

    fn read_only(&self, op: &Op) -> bool {
        op.f == "read"
    }

    fn reduce_unknown(&self, unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
        register_reduce(unknown, completed)
    }

    fn blind(&self, op: &Op) -> bool {
        op.f == "write"
    }

    fn describe_state(&self, state: &Value) -> String {
        format!("the register held {state}")
    }
}

/// A key-value map: a register per key, each checked on its own. An
/// absent key reads as `Nil`.
#[derive(Clone, Debug, Default)]
pub struct KeyValue;

impl KeyValue {
    /// A map whose keys all start absent.
    pub fn new() -> KeyValue {
        KeyValue
    }
}

impl Model for KeyValue {
    type State = Value;

    fn name(&self) -> String {
        "key-value map".to_string()
    }

    fn init(&self) -> Value {
        Value::Nil
    }

    fn step(&self, state: &Value, op: &Op, output: Option<&Value>) -> Option<Value> {
        register_step(state, op, output)
    }

    fn read_only(&self, op: &Op) -> bool {
        op.f == "read"
    }

    fn reduce_unknown(&self, unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
        register_reduce(unknown, completed)
    }

    fn blind(&self, op: &Op) -> bool {
        op.f == "write"
    }

    fn describe_state(&self, state: &Value) -> String {
        if state.is_nil() {
            "the key was absent".to_string()
        } else {
            format!("the key held {state}")
        }
    }
}

/// A set per key: `add` an element; `read` returns every element (a list,
/// in any order).
#[derive(Clone, Debug, Default)]
pub struct Set;

impl Set {
    /// Empty sets.
    pub fn new() -> Set {
        Set
    }
}

impl Model for Set {
    type State = BTreeSet<Value>;

    fn name(&self) -> String {
        "set".to_string()
    }

    fn init(&self) -> BTreeSet<Value> {
        BTreeSet::new()
    }

    fn step(
        &self,
        set: &BTreeSet<Value>,
        op: &Op,
        output: Option<&Value>,
    ) -> Option<BTreeSet<Value>> {
        match op.f.as_ref() {
            "add" => {
                let mut next = set.clone();
                next.insert(op.value.clone());
                Some(next)
            }
            "read" => match output {
                None => Some(set.clone()),
                Some(seen) => {
                    let seen: BTreeSet<Value> = seen.as_list()?.iter().cloned().collect();
                    (&seen == set).then(|| set.clone())
                }
            },
            _ => None,
        }
    }

    fn read_only(&self, op: &Op) -> bool {
        op.f == "read"
    }

    /// An unknown add of an element no read returned: sets only grow, so
    /// once in, it would be in every later read; it can only come after
    /// the last, which is as if never.
    fn reduce_unknown(&self, unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
        let seen: HashSet<&Value> = completed
            .iter()
            .filter(|(op, _)| op.f == "read")
            .flat_map(|(_, output)| output.as_list().unwrap_or(&[]))
            .collect();
        unknown
            .iter()
            .map(|op| op.f == "add" && !seen.contains(&op.value))
            .collect()
    }

    fn describe_state(&self, set: &BTreeSet<Value>) -> String {
        let items: Vec<String> = set.iter().map(Value::to_string).collect();
        format!("the set held {{{}}}", items.join(" "))
    }
}

/// A FIFO queue per key: `enqueue` at the back; `dequeue` takes the front
/// and returns it, or `Nil` when the queue is empty.
#[derive(Clone, Debug, Default)]
pub struct Queue;

impl Queue {
    /// Empty queues.
    pub fn new() -> Queue {
        Queue
    }
}

impl Model for Queue {
    type State = VecDeque<Value>;

    fn name(&self) -> String {
        "FIFO queue".to_string()
    }

    fn init(&self) -> VecDeque<Value> {
        VecDeque::new()
    }

    fn step(
        &self,
        queue: &VecDeque<Value>,
        op: &Op,
        output: Option<&Value>,
    ) -> Option<VecDeque<Value>> {
        match op.f.as_ref() {
            "enqueue" => {
                let mut next = queue.clone();
                next.push_back(op.value.clone());
                Some(next)
            }
            "dequeue" => {
                let front = queue.front();
                match output {
                    None | Some(Value::Nil) if front.is_none() => Some(queue.clone()),
                    Some(seen) if Some(seen) != front => None,
                    _ => {
                        let mut next = queue.clone();
                        next.pop_front();
                        Some(next)
                    }
                }
            }
            _ => None,
        }
    }

    /// An unknown enqueue of a value no dequeue returned: at the front it
    /// would have been returned, so it was taken (if ever) only by an
    /// unknown dequeue, and leaving both out changes no other result.
    fn reduce_unknown(&self, unknown: &mut [Op], completed: &[(&Op, &Value)]) -> Vec<bool> {
        let seen: HashSet<&Value> = completed
            .iter()
            .filter(|(op, _)| op.f == "dequeue")
            .map(|(_, output)| *output)
            .collect();
        unknown
            .iter()
            .map(|op| op.f == "enqueue" && !seen.contains(&op.value))
            .collect()
    }

    fn describe_state(&self, queue: &VecDeque<Value>) -> String {
        let items: Vec<String> = queue.iter().map(Value::to_string).collect();
        format!("the queue held [{}] (front first)", items.join(" "))
    }
}

/// A counter per key: `add` an amount; `read` returns the total.
#[derive(Clone, Debug, Default)]
pub struct Counter;

impl Counter {
    /// Counters at zero.
    pub fn new() -> Counter {
        Counter
    }
}

impl Model for Counter {
    type State = i64;

    fn name(&self) -> String {
        "counter".to_string()
    }

    fn init(&self) -> i64 {
        0
    }

    fn step(&self, total: &i64, op: &Op, output: Option<&Value>) -> Option<i64> {
        match op.f.as_ref() {
            "add" => total.checked_add(op.value.as_int()?),
            "read" => match output {
                None => Some(*total),
                Some(seen) => (seen.as_int() == Some(*total)).then_some(*total),
            },
            _ => None,
        }
    }

    fn read_only(&self, op: &Op) -> bool {
        op.f == "read"
    }

    fn describe_state(&self, total: &i64) -> String {
        format!("the counter was at {total}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cas_that_returned_false_needs_another_value() {
        let cas = Op::cas("x", 1, 2);
        assert_eq!(
            register_step(&Value::Int(1), &cas, Some(&Value::Bool(true))),
            Some(Value::Int(2))
        );
        assert_eq!(
            register_step(&Value::Int(1), &cas, Some(&Value::Bool(false))),
            None
        );
        assert_eq!(
            register_step(&Value::Int(3), &cas, Some(&Value::Bool(false))),
            Some(Value::Int(3))
        );
        assert_eq!(
            register_step(&Value::Int(3), &cas, None),
            Some(Value::Int(3))
        );
    }

    #[test]
    fn a_dequeue_takes_the_front_or_sees_an_empty_queue() {
        let q: VecDeque<Value> = [Value::Int(1), Value::Int(2)].into_iter().collect();
        let dequeue = Op::dequeue("q");
        assert_eq!(Queue.step(&q, &dequeue, Some(&Value::Int(2))), None);
        assert_eq!(
            Queue
                .step(&q, &dequeue, Some(&Value::Int(1)))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            Queue.step(&VecDeque::new(), &dequeue, Some(&Value::Nil)),
            Some(VecDeque::new())
        );
        assert_eq!(Queue.step(&q, &dequeue, Some(&Value::Nil)), None);
    }
}
