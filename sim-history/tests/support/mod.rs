//! Histories made by running a sequential model under concurrent
//! clients: each operation takes effect at one point between its
//! invocation and its completion, or, if lost, maybe never. Shared by the
//! checkers' self-tests and their benchmark (`examples/bench.rs`).

#![allow(dead_code)]

use sim_history::elle::Workload as TxnWorkload;
use sim_history::{History, Kind, Mop, MopKind, Op, Value};
use std::collections::BTreeSet;

/// A deterministic generator (xorshift64*), so a failure names its seed.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Which built-in model a history exercises.
#[derive(Clone, Copy, Debug)]
pub enum Workload {
    Register,
    KeyValue,
    Set,
    Queue,
    Counter,
}

/// The true state of a run, per key, as the model sees it.
#[derive(Clone, Default)]
struct Truth {
    register: std::collections::BTreeMap<Value, Value>,
    set: std::collections::BTreeMap<Value, BTreeSet<Value>>,
    queue: std::collections::BTreeMap<Value, std::collections::VecDeque<Value>>,
    counter: std::collections::BTreeMap<Value, i64>,
}

/// An operation to invoke: unique values for writes, adds and enqueues.
fn next_op(kind: Workload, rng: &mut Rng, unique: &mut i64, keys: u64) -> Op {
    *unique += 1;
    let key = match kind {
        Workload::Register => Value::from("x"),
        _ => Value::Int(rng.below(keys) as i64),
    };
    match (kind, rng.below(3)) {
        (Workload::Register | Workload::KeyValue, 0) => Op::read(key),
        (Workload::Register | Workload::KeyValue, 1) => Op::write(key, *unique),
        (Workload::Register | Workload::KeyValue, _) => {
            let from = if rng.chance(50) {
                *unique - 1
            } else {
                *unique - 2
            };
            Op::cas(key, from, *unique)
        }
        (Workload::Set, 0) => Op::read(key),
        (Workload::Set, _) => Op::add(key, *unique),
        (Workload::Queue, 0) => Op::dequeue(key),
        (Workload::Queue, _) => Op::enqueue(key, *unique),
        (Workload::Counter, 0) => Op::read(key),
        (Workload::Counter, _) => Op::add(key, 1 + rng.below(5) as i64),
    }
}

/// Applies `op` to the truth at its linearization point: its result.
fn apply(kind: Workload, truth: &mut Truth, op: &Op) -> Value {
    let key = op.key.clone();
    match (kind, op.f.as_ref()) {
        (Workload::Register | Workload::KeyValue, "read") => {
            truth.register.get(&key).cloned().unwrap_or_default()
        }
        (Workload::Register | Workload::KeyValue, "write") => {
            truth.register.insert(key, op.value.clone());
            Value::Nil
        }
        (Workload::Register | Workload::KeyValue, "cas") => {
            let [from, to] = op.value.as_list().unwrap() else {
                unreachable!()
            };
            let current = truth.register.get(&key).cloned().unwrap_or_default();
            if &current == from {
                truth.register.insert(key, to.clone());
                Value::Bool(true)
            } else {
                Value::Bool(false)
            }
        }
        (Workload::Set, "add") => {
            truth.set.entry(key).or_default().insert(op.value.clone());
            Value::Nil
        }
        (Workload::Set, "read") => Value::List(
            truth
                .set
                .get(&key)
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
        ),
        (Workload::Queue, "enqueue") => {
            truth
                .queue
                .entry(key)
                .or_default()
                .push_back(op.value.clone());
            Value::Nil
        }
        (Workload::Queue, "dequeue") => truth
            .queue
            .entry(key)
            .or_default()
            .pop_front()
            .unwrap_or_default(),
        (Workload::Counter, "add") => {
            *truth.counter.entry(key).or_default() += op.value.as_int().unwrap();
            Value::Nil
        }
        (Workload::Counter, "read") => Value::Int(*truth.counter.get(&key).unwrap_or(&0)),
        other => panic!("no op {other:?}"),
    }
}

/// A history of `clients` clients running `ops` operations against the
/// true state: each operation takes effect at one point between its
/// invocation and its completion (or, if unknown, maybe never).
pub fn generate(
    kind: Workload,
    seed: u64,
    clients: usize,
    ops: usize,
    info_percent: u64,
) -> History {
    generate_over(kind, seed, clients, ops, info_percent, 3)
}

/// As [`generate`], over `keys` keys.
pub fn generate_over(
    kind: Workload,
    seed: u64,
    clients: usize,
    ops: usize,
    info_percent: u64,
    keys: u64,
) -> History {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut history = History::new();
    let mut truth = Truth::default();
    let mut unique = 0;
    // Per client: its open op (id, op, result once applied).
    let mut open: Vec<Option<(u64, Op, Option<Value>)>> = vec![None; clients];
    let mut invoked = 0;
    let mut time = 0;
    while invoked < ops || open.iter().any(Option::is_some) {
        time += 1 + rng.below(10);
        let c = rng.below(clients as u64) as usize;
        match open[c].take() {
            None if invoked < ops => {
                let op = next_op(kind, &mut rng, &mut unique, keys);
                let id = history.invoke(&format!("c{c}"), time, op.clone());
                open[c] = Some((id, op, None));
                invoked += 1;
            }
            None => {}
            Some((id, op, None)) => {
                if rng.chance(info_percent / 2) {
                    // Lost before it took effect: unknown, or a sure failure.
                    let kind = if rng.chance(50) {
                        Kind::Info
                    } else {
                        Kind::Fail
                    };
                    history.complete(id, kind, time, Value::Nil);
                } else {
                    let result = apply(kind, &mut truth, &op);
                    open[c] = Some((id, op, Some(result)));
                }
            }
            Some((id, _, Some(result))) => {
                if rng.chance(info_percent / 2) {
                    history.complete(id, Kind::Info, time, Value::Nil);
                } else {
                    history.complete(id, Kind::Ok, time, result);
                }
            }
        }
    }
    history
}

/// Random transactions run by a serializable store: each takes effect at
/// one point between its invocation and completion, on the true state.
pub fn serial_history(seed: u64, workload: TxnWorkload, txns: usize) -> History {
    serial_history_over(seed, workload, txns, 3)
}

/// As [`serial_history`], over `keys` keys.
pub fn serial_history_over(seed: u64, workload: TxnWorkload, txns: usize, keys: u64) -> History {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9) | 1);
    let mut lists: std::collections::BTreeMap<i64, Vec<Value>> = Default::default();
    let mut regs: std::collections::BTreeMap<i64, Value> = Default::default();
    let mut unique = 0;
    let mut h = History::new();
    // Open per client: (id, invoked steps, steps once applied)
    type Open = Option<(u64, Vec<Mop>, Option<Vec<Mop>>)>;
    let mut open: Vec<Open> = vec![None; 4];
    let (mut started, mut time) = (0, 0);
    while started < txns || open.iter().any(Option::is_some) {
        time += 1;
        let c = rng.below(4) as usize;
        match open[c].take() {
            None if started < txns => {
                let steps: Vec<Mop> = (0..1 + rng.below(4))
                    .map(|_| {
                        let key = rng.below(keys) as i64;
                        unique += 1;
                        match (workload, rng.below(2)) {
                            (_, 0) => Mop::read(key),
                            (TxnWorkload::ListAppend, _) => Mop::append(key, unique),
                            (TxnWorkload::RwRegister, _) => Mop::write(key, unique),
                        }
                    })
                    .collect();
                let id = h.invoke(&format!("c{c}"), time, Op::txn(steps.clone()));
                open[c] = Some((id, steps, None));
                started += 1;
            }
            None => {}
            Some((id, steps, None)) => {
                let done: Vec<Mop> = steps
                    .iter()
                    .map(|m| match (m.kind, workload) {
                        (MopKind::Read, TxnWorkload::ListAppend) => Mop::read_of(
                            m.key.clone(),
                            Value::List(
                                lists
                                    .get(&m.key.as_int().unwrap())
                                    .cloned()
                                    .unwrap_or_default(),
                            ),
                        ),
                        (MopKind::Read, _) => Mop::read_of(
                            m.key.clone(),
                            regs.get(&m.key.as_int().unwrap())
                                .cloned()
                                .unwrap_or_default(),
                        ),
                        (MopKind::Append, _) => {
                            lists
                                .entry(m.key.as_int().unwrap())
                                .or_default()
                                .push(m.value.clone());
                            m.clone()
                        }
                        (MopKind::Write, _) => {
                            regs.insert(m.key.as_int().unwrap(), m.value.clone());
                            m.clone()
                        }
                    })
                    .collect();
                open[c] = Some((id, steps, Some(done)));
            }
            Some((id, _, Some(done))) => {
                h.complete(
                    id,
                    Kind::Ok,
                    time,
                    Value::from(done.into_iter().map(Value::from).collect::<Vec<_>>()),
                );
            }
        }
    }
    h
}
