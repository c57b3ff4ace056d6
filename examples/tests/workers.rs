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

fn fails(multi_thread: bool, fixed: bool, seed: u64) -> bool {
    runtime(multi_thread, seed)
        .block_on(transaction(fixed))
        .is_err()
}

#[test]
fn a_worker_starvation_race_is_found_on_workers_only() {
    // The race is found on about 2 seeds in 5: the first of 50 that finds
    // it is enough. (Each run is costly in a debug build: its busy tasks'
    // CPU work is there for real tokio's threads.)
    let found = (0..50).find(|&seed| fails(true, false, seed));
    assert!(found.is_some(), "the race was found on no seed of 50");
    for seed in 0..25 {
        assert!(
            !fails(false, false, seed),
            "current_thread keeps its guarantees (seed {seed})"
        );
        assert!(
            !fails(true, true, seed),
            "the fixed twin passes (seed {seed})"
        );
    }
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

/// Spawns 16 tasks that yield 4 times each and waits for them; returns
/// what the run's last task polls name as their worker (`-`: none).
async fn yielders_name_their_workers() -> std::collections::BTreeSet<String> {
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
}

#[test]
fn a_poll_on_a_worker_names_it_and_tasks_spread_over_the_workers() {
    let rt = runtime(true, 3);
    let workers = rt.block_on(yielders_name_their_workers());
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

/// The workers named by the last polls of a harness run whose client
/// `app` spawns 16 yielding tasks, with `workers` (or none).
fn harness_workers(workers: Option<u16>) -> std::collections::BTreeSet<String> {
    let mut sim = tokio::sim::Sim::with_config(SimConfig::with_seed(4));
    let seen: std::rc::Rc<std::cell::RefCell<std::collections::BTreeSet<String>>> =
        Default::default();
    let out = seen.clone();
    sim.client("app", async move {
        *out.borrow_mut() = yielders_name_their_workers().await;
    });
    if let Some(n) = workers {
        sim.workers("app", n);
    }
    sim.run();
    let seen = seen.borrow().clone();
    seen
}

#[test]
fn a_harness_host_with_workers_runs_its_tasks_on_them() {
    let on_workers = harness_workers(Some(4));
    let numbered: Vec<&String> = on_workers.iter().filter(|w| *w != "-").collect();
    assert!(
        numbered.len() >= 2,
        "polls on several workers: {on_workers:?}"
    );
    assert!(numbered
        .iter()
        .all(|w| w.parse::<u16>().is_ok_and(|w| w < 4)));
    let on_one = harness_workers(None);
    assert_eq!(
        on_one.into_iter().collect::<Vec<_>>(),
        ["-"],
        "without workers a host's polls name none"
    );
    // The swarm draws the number when asked, and not otherwise.
    let swarm =
        tokio::sim::swarm::Swarm::new(&["app"]).workers(tokio::sim::swarm::Dim::range(1, 8));
    let drawn: Vec<Option<u16>> = (0..40).map(|seed| swarm.plan(seed).workers).collect();
    assert!(drawn.iter().any(Option::is_none) && drawn.iter().any(Option::is_some));
    assert!(drawn.iter().flatten().all(|n| (1..=8).contains(n)));
    assert_eq!(
        swarm.plan(3).describe().contains("workers per host"),
        drawn[3].is_some()
    );
    assert_eq!(
        tokio::sim::swarm::Swarm::new(&["app"]).plan(3).workers,
        None
    );
}
