//! The store of lists of `src/txn_store.rs` on the simulator, its
//! clients' transactions checked for anomalies as Elle checks them: each
//! transaction is recorded with `history::op`, as a list-append `Op::txn`.
//!
//! Without conflict checks, two transactions that read a list and append
//! to it each miss the other's append: the check names the anomaly
//! (G-single) and its cycle. With them, 200 seeds pass.
//!
//! Simulation build only.
#![cfg(simulation)]

use sim_examples::txn_store::{serve, Client, Step};
use sim_runtime::SimConfig;
use sim_test_support::panic_text;
use tokio::sim::history::{self, Completion, Mop, Op, Transactional, Value};
use tokio::sim::Sim;

/// Each client's transactions.
const TXNS_PER_CLIENT: i64 = 8;

/// A transaction's steps as the history records them.
fn mops(steps: &[Step]) -> Vec<Mop> {
    steps
        .iter()
        .map(|step| match step {
            Step::Read(key, seen) if seen.is_empty() => Mop::read(key.as_str()),
            Step::Read(key, seen) => Mop::read_of(key.as_str(), seen.clone()),
            Step::Append(key, value) => Mop::append(key.as_str(), *value),
        })
        .collect()
}

fn store(seed: u64, check_conflicts: bool) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    sim.check_history(Transactional::list_append());
    sim.host("store", move || async move {
        serve(check_conflicts).await.unwrap()
    });
    for c in 0..3i64 {
        sim.client(&format!("client{c}"), async move {
            let mut client = Client::connect("store").await.unwrap();
            for n in 0..TXNS_PER_CLIENT {
                // Read a list, then append to it (a read-modify-write), or
                // read two.
                let key = ["x", "y"][rand::random_range(0..2)].to_string();
                let steps = match rand::random_range(0..3) {
                    0 => vec![
                        Step::Read("x".into(), vec![]),
                        Step::Read("y".into(), vec![]),
                    ],
                    _ => vec![
                        Step::Read(key.clone(), vec![]),
                        Step::Append(key, c * 100 + n),
                    ],
                };
                let recorded = Op::txn(mops(&steps));
                history::op(recorded, async {
                    match client.txn(&steps).await {
                        Ok(done) => {
                            let done: Vec<Value> = mops(&done)
                                .into_iter()
                                .map(|mop| match mop.kind {
                                    // A read that saw nothing saw [].
                                    history::MopKind::Read if mop.value.is_nil() => {
                                        Mop::read_of(mop.key, Vec::<i64>::new()).into()
                                    }
                                    _ => mop.into(),
                                })
                                .collect();
                            Completion::Ok(Value::List(done))
                        }
                        Err(_) => Completion::Info,
                    }
                })
                .await;
            }
        });
    }
    sim
}

/// One seed's failure, if it fails, on a thread of its own (as `cargo sim
/// test` runs a seed: `rand`'s generator is seeded once per thread).
fn run(seed: u64, check_conflicts: bool) -> Option<String> {
    std::thread::spawn(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            store(seed, check_conflicts).run();
        }))
        .err()
        .map(panic_text)
    })
    .join()
    .unwrap()
}

#[test]
fn read_modify_writes_without_conflict_checks_are_named_g_single() {
    let (seed, text) = (0..100)
        .find_map(|seed| run(seed, false).map(|text| (seed, text)))
        .expect("an anomaly within 100 seeds");
    assert!(
        text.starts_with("sim: consistency: history `ops` shows anomalies Serializable forbids"),
        "seed {seed}: {text}"
    );
    assert!(
        text.contains("G-single (read skew: a cycle with one anti-dependency):"),
        "{text}"
    );
    // The cycle, edge by edge: a read that missed an append (rw), and the
    // order of the appends (ww).
    assert!(text.contains("(rw): T"), "{text}");
    assert!(text.contains("the next element"), "{text}");
    assert_eq!(run(seed, false).as_deref(), Some(text.as_str()));
}

#[test]
fn one_transaction_at_a_time_passes_200_seeds() {
    for seed in 0..200 {
        if let Some(text) = run(seed, true) {
            panic!("seed {seed}: a false failure:\n{text}");
        }
    }
}
