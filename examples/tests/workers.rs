//! Simulated workers: a `multi_thread` runtime's tasks run on workers with
//! tokio's queues, the seed decides which worker polls next, and a worker
//! may stall. A race that needs one task starved while others run is found
//! on workers, and never on `current_thread` (where real tokio never hits
//! it either).
#![cfg(simulation)]

use sim_examples::race::transaction;
use sim_runtime::SimConfig;
use tokio::runtime::{Builder, Runtime};

fn runtime(multi_thread: bool, seed: u64) -> Runtime {
    let mut builder = if multi_thread {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(4);
        b
    } else {
        Builder::new_current_thread()
    };
    builder.enable_all().build_with(SimConfig::with_seed(seed))
}

fn failures(multi_thread: bool, fixed: bool, seeds: std::ops::Range<u64>) -> usize {
    seeds
        .filter(|&seed| {
            runtime(multi_thread, seed)
                .block_on(transaction(fixed))
                .is_err()
        })
        .count()
}

#[test]
fn a_worker_starvation_race_is_found_on_workers_only() {
    let found = failures(true, false, 0..200);
    assert!(found > 0, "the race was found on no seed of 200");
    assert_eq!(
        failures(false, false, 0..200),
        0,
        "current_thread keeps its guarantees"
    );
    assert_eq!(failures(true, true, 0..200), 0, "the fixed twin passes");
}

#[test]
fn a_seed_replays_the_same_schedule_on_workers() {
    let hash = |seed| {
        let rt = runtime(true, seed);
        let outcome = rt.block_on(transaction(false));
        drop(rt);
        (outcome, sim_runtime::last_run().unwrap().trace_hash)
    };
    assert_eq!(hash(11), hash(11));
    assert_ne!(hash(11).1, hash(12).1);
}

#[test]
fn a_poll_on_a_worker_names_it_and_tasks_spread_over_the_workers() {
    let rt = runtime(true, 3);
    let workers: std::collections::BTreeSet<String> = rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..16 {
            tasks.push(tokio::spawn(async {
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        sim_runtime::context::with_current(|core| core.recent_events())
            .unwrap()
            .into_iter()
            .filter(|line| line.contains(" poll task ") && !line.contains("'root'"))
            .filter_map(|line| line.split_whitespace().last().map(str::to_string))
            .collect()
    });
    assert!(
        workers.len() >= 2,
        "the last polls ran on several workers: {workers:?}"
    );
    assert!(workers
        .iter()
        .all(|w| w.parse::<u16>().is_ok_and(|w| w < 4)));
    assert_eq!(rt.metrics().num_workers(), 4);
}

#[test]
fn yield_now_lets_the_other_tasks_of_its_worker_run_first() {
    // One worker: the runtime is as a single thread's queue, and a yield
    // puts the task behind every task ready on it.
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build_with(SimConfig::with_seed(5));
    let order = rt.block_on(async {
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let first = {
            let log = log.clone();
            tokio::spawn(async move {
                tokio::task::yield_now().await;
                log.lock().unwrap().push("yielder");
            })
        };
        let mut others = Vec::new();
        for _ in 0..3 {
            let log = log.clone();
            others.push(tokio::spawn(async move {
                log.lock().unwrap().push("other");
            }));
        }
        first.await.unwrap();
        for t in others {
            t.await.unwrap();
        }
        let log = log.lock().unwrap().clone();
        log
    });
    assert_eq!(order, ["other", "other", "other", "yielder"]);
}
