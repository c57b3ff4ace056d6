//! The linearizability checker tests itself:
//!
//! - histories made by running a sequential model under concurrent
//!   clients (overlapping operations, unknown and failed ones) are never
//!   flagged, for every built-in model;
//! - the same histories, mutated so that they surely are illegal (a stale
//!   read, a value never written, an element that vanished, a total too
//!   large), are always flagged;
//! - on small random histories, the checker agrees with a brute-force
//!   search over every order.

mod support;

use sim_history::linear::{check, models, Budget, Model, Verdict};
use sim_history::{History, Kind, Op, Operation, Outcome, Value};
use support::{generate, Rng, Workload};

fn verdict<M: Model>(model: &M, history: &History) -> Verdict {
    check(
        model,
        history,
        Budget {
            steps_max: 50_000_000,
        },
    )
    .verdict
}

fn check_kind(kind: Workload, history: &History) -> Verdict {
    match kind {
        Workload::Register => verdict(&models::Register::new(), history),
        Workload::KeyValue => verdict(&models::KeyValue::new(), history),
        Workload::Set => verdict(&models::Set::new(), history),
        Workload::Queue => verdict(&models::Queue::new(), history),
        Workload::Counter => verdict(&models::Counter::new(), history),
    }
}

const KINDS: [Workload; 5] = [
    Workload::Register,
    Workload::KeyValue,
    Workload::Set,
    Workload::Queue,
    Workload::Counter,
];

#[test]
fn histories_of_a_sequential_model_are_never_flagged() {
    let mut checked = 0;
    for kind in KINDS {
        for seed in 0..600 {
            let clients = 1 + (seed % 5) as usize;
            let ops = 5 + (seed % 40) as usize;
            let history = generate(kind, seed, clients, ops, 20);
            let v = check_kind(kind, &history);
            assert!(
                v.is_ok(),
                "{kind:?} seed {seed} flagged: {v:?}\n{}",
                history.to_jsonl()
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 3_000);
}

/// Rewrites one completed operation's result so that no order can explain
/// it; `None` when this history offers no such operation.
fn mutate(kind: Workload, history: &History, rng: &mut Rng) -> Option<History> {
    let ops = history.operations();
    let ok: Vec<&Operation> = ops.iter().filter(|o| o.is_ok()).collect();
    let completed_before =
        |a: &Operation, b: &Operation| a.complete.is_some_and(|(at, _)| at < b.invoke_index);
    let (target, output) = match kind {
        Workload::Register | Workload::KeyValue => {
            let reads: Vec<&&Operation> = ok.iter().filter(|o| o.op.f == "read").collect();
            if reads.is_empty() {
                return None;
            }
            let read = reads[rng.below(reads.len() as u64) as usize];
            // A stale read: the value of a write w that a later write w2
            // overwrote, w before w2 before the read, all on its key.
            let writes: Vec<&&Operation> = ok
                .iter()
                .filter(|o| o.op.key == read.op.key && o.op.f == "write")
                .collect();
            let stale = writes.iter().find(|w| {
                writes
                    .iter()
                    .any(|w2| completed_before(w, w2) && completed_before(w2, read))
                    && !ops
                        .iter()
                        .any(|o| o.op.key == read.op.key && o.op.f == "cas")
            });
            match stale {
                Some(w) if rng.chance(70) => (read.id, w.op.value.clone()),
                _ => (read.id, Value::Int(-7)), // never written
            }
        }
        Workload::Set => {
            let reads: Vec<&&Operation> = ok.iter().filter(|o| o.op.f == "read").collect();
            let read = reads.get(rng.below(reads.len().max(1) as u64) as usize)?;
            let mut seen: Vec<Value> = read.output().unwrap().as_list().unwrap().to_vec();
            if seen.is_empty() || rng.chance(50) {
                seen.push(Value::Int(-7)); // never added
            } else {
                // An element whose add completed before the read began can
                // only vanish if it never was: drop one that did.
                let must: Vec<Value> = ok
                    .iter()
                    .filter(|a| {
                        a.op.f == "add" && a.op.key == read.op.key && completed_before(a, read)
                    })
                    .map(|a| a.op.value.clone())
                    .collect();
                let gone = must.first()?;
                seen.retain(|v| v != gone);
            }
            (read.id, Value::List(seen))
        }
        Workload::Queue => {
            let dequeues: Vec<&&Operation> = ok.iter().filter(|o| o.op.f == "dequeue").collect();
            let d = dequeues.get(rng.below(dequeues.len().max(1) as u64) as usize)?;
            (d.id, Value::Int(-7)) // never enqueued
        }
        Workload::Counter => {
            let reads: Vec<&&Operation> = ok.iter().filter(|o| o.op.f == "read").collect();
            let read = reads.get(rng.below(reads.len().max(1) as u64) as usize)?;
            // More than every add of its key invoked before it returned.
            let most: i64 = ops
                .iter()
                .filter(|a| {
                    a.op.f == "add" && a.op.key == read.op.key && a.outcome != Outcome::Fail
                })
                .map(|a| a.op.value.as_int().unwrap())
                .sum();
            (read.id, Value::Int(most + 1))
        }
    };
    let mut mutated = History::new();
    for event in history.events() {
        let mut event = event.clone();
        if event.id == target && event.kind == Kind::Ok {
            event.op.value = output.clone();
        }
        mutated.push(event).unwrap();
    }
    Some(mutated)
}

#[test]
fn the_same_histories_mutated_to_be_illegal_are_always_flagged() {
    let mut flagged = 0;
    for kind in KINDS {
        let mut rng = Rng(0x5eed ^ kind as u64);
        for seed in 0..600 {
            let clients = 1 + (seed % 5) as usize;
            let history = generate(kind, seed, clients, 5 + (seed % 40) as usize, 20);
            let Some(mutated) = mutate(kind, &history, &mut rng) else {
                continue;
            };
            match check_kind(kind, &mutated) {
                Verdict::Illegal(illegal) => {
                    assert!(!illegal.window.is_empty());
                    // The window alone is illegal too.
                    let mut window = History::new();
                    for op in &illegal.window {
                        let id = window.invoke(&op.client, op.invoke_ns, op.op.clone());
                        window.complete(
                            id,
                            Kind::Ok,
                            op.complete.unwrap().1,
                            op.output().unwrap().clone(),
                        );
                    }
                    assert!(
                        !check_kind(kind, &window).is_ok(),
                        "{kind:?} seed {seed}: a window that is legal"
                    );
                    flagged += 1;
                }
                other => panic!(
                    "{kind:?} seed {seed}: a mutated history passed ({other:?})\n{}",
                    mutated.to_jsonl()
                ),
            }
        }
    }
    assert!(flagged > 2_000, "only {flagged} histories could be mutated");
}

/// Whether some order of the operations (each known one between its
/// invocation and completion, each unknown one after its invocation or
/// never) is accepted by `model`: every order tried.
fn brute_force<M: Model>(model: &M, ops: &[Operation]) -> bool {
    fn go<M: Model>(model: &M, ops: &[&Operation], left: &mut Vec<bool>, state: &M::State) -> bool {
        let pending_known: Vec<usize> = (0..ops.len())
            .filter(|&i| left[i] && ops[i].is_ok())
            .collect();
        if pending_known.is_empty() {
            return true;
        }
        for i in 0..ops.len() {
            if !left[i] {
                continue;
            }
            // It can go next only if nothing left returned before it began.
            let blocked = pending_known
                .iter()
                .any(|&p| p != i && ops[p].complete.unwrap().0 < ops[i].invoke_index);
            if blocked {
                continue;
            }
            if let Some(next) = model.step(state, &ops[i].op, ops[i].output()) {
                left[i] = false;
                let found = go(model, ops, left, &next);
                left[i] = true;
                if found {
                    return true;
                }
            }
        }
        false
    }
    let kept: Vec<&Operation> = ops.iter().filter(|o| o.outcome != Outcome::Fail).collect();
    let mut left = vec![true; kept.len()];
    go(model, &kept, &mut left, &model.init())
}

#[test]
fn small_random_histories_get_the_verdict_of_a_brute_force_search() {
    let model = models::Register::new();
    let (mut legal, mut illegal) = (0, 0);
    for seed in 0..4_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_f491) | 1);
        // Random results, not a model's: about half are illegal.
        let mut history = History::new();
        let mut open: Vec<u64> = Vec::new();
        let count = 2 + rng.below(6);
        let mut invoked = 0;
        let mut time = 0;
        while invoked < count || !open.is_empty() {
            time += 1;
            if invoked < count && (open.is_empty() || rng.chance(50)) {
                let op = match rng.below(3) {
                    0 => Op::read("x"),
                    1 => Op::write("x", rng.below(3) as i64),
                    _ => Op::cas("x", rng.below(3) as i64, rng.below(3) as i64),
                };
                open.push(history.invoke(&format!("c{invoked}"), time, op));
                invoked += 1;
            } else {
                let id = open.remove(rng.below(open.len() as u64) as usize);
                let is_read = history
                    .events()
                    .iter()
                    .any(|e| e.id == id && e.op.f == "read");
                let is_cas = history
                    .events()
                    .iter()
                    .any(|e| e.id == id && e.op.f == "cas");
                let (kind, output) = match rng.below(10) {
                    0 => (Kind::Info, Value::Nil),
                    1 => (Kind::Fail, Value::Nil),
                    _ if is_read => (
                        Kind::Ok,
                        if rng.chance(20) {
                            Value::Nil
                        } else {
                            Value::Int(rng.below(3) as i64)
                        },
                    ),
                    _ if is_cas => (Kind::Ok, Value::Bool(rng.chance(50))),
                    _ => (Kind::Ok, Value::Nil),
                };
                history.complete(id, kind, time, output);
            }
        }
        let expected = brute_force(&model, &history.operations());
        let got = verdict(&model, &history);
        assert_eq!(
            got.is_ok(),
            expected,
            "seed {seed}: {got:?}\n{}",
            history.to_jsonl()
        );
        if expected {
            legal += 1;
        } else {
            illegal += 1;
        }
    }
    assert!(
        legal > 500 && illegal > 500,
        "{legal} legal, {illegal} illegal"
    );
}
