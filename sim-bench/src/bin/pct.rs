//! `cargo run --release -p sim-bench --bin pct`: how often the random and
//! the PCT schedulers, and the portfolio a default sweep uses (each seed's
//! policy drawn from it), hit four planted concurrency bugs, over the same
//! seeds. Each seed runs on a fresh runtime (and thread); PCT's horizon is
//! measured as a sweep measures it (seed 0 under the random schedule, its
//! scheduling decisions x 1.5, at least 100).
//!
//! - shallow: a lost update (read, pause, write) between two tasks;
//! - ordered: four tasks of 20 steps must run one after another, in the
//!   reverse of their spawn order (three ordering constraints);
//! - preempted: one task must run all of its 20 steps between the 10th and
//!   the 11th of another's (a preemption in a long run);
//! - starved: on a `multi_thread` runtime of 4 workers, a transaction's
//!   `write` (5 yields) runs before its `begin` (2 yields) beside 24 busy
//!   tasks: a worker falls behind.

use sim_runtime::config::Policy;
use sim_runtime::SimConfig;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

const SEEDS: u64 = 10_000;

/// A point where another task may run first, or not: the task wakes
/// itself, and the scheduler picks what runs next. (`yield_now` would let
/// every ready task go first, as tokio documents, leaving no choice.)
async fn pause() {
    let mut paused = false;
    std::future::poll_fn(|cx| {
        if paused {
            return std::task::Poll::Ready(());
        }
        paused = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}
const DEPTH: u32 = 3;

/// A lost update: both tasks read, pause, then write what they read + 1.
async fn shallow() -> bool {
    let counter = Rc::new(Cell::new(0u32));
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let counter = counter.clone();
        tasks.push(sim::task::spawn_local(async move {
            let read = counter.get();
            pause().await;
            counter.set(read + 1);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    counter.get() != 2
}

/// Four tasks of 20 steps; the bug needs them to run whole, one after the
/// other, in the reverse of their spawn order.
async fn ordered() -> bool {
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut tasks = Vec::new();
    for id in 0..4u8 {
        let log = log.clone();
        tasks.push(sim::task::spawn_local(async move {
            for _ in 0..20 {
                log.borrow_mut().push(id);
                pause().await;
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let log = log.borrow();
    let mut expected = Vec::new();
    for id in (0..4u8).rev() {
        expected.extend(std::iter::repeat_n(id, 20));
    }
    *log == expected
}

/// Task B must run all 20 of its steps between A's 10th and 11th.
async fn preempted() -> bool {
    let log = Rc::new(RefCell::new(Vec::new()));
    let (la, lb) = (log.clone(), log.clone());
    let a = sim::task::spawn_local(async move {
        for step in 0..20u8 {
            la.borrow_mut().push(('a', step));
            pause().await;
        }
    });
    let b = sim::task::spawn_local(async move {
        for step in 0..20u8 {
            lb.borrow_mut().push(('b', step));
            pause().await;
        }
    });
    a.await.unwrap();
    b.await.unwrap();
    let log = log.borrow();
    let first_b = log.iter().position(|(t, _)| *t == 'b').unwrap();
    let last_b = log.iter().rposition(|(t, _)| *t == 'b').unwrap();
    first_b == 10 && last_b == 29
}

/// A worker-starvation race: `write` trusts that `begin`, with fewer
/// yields, ran first; 24 busy tasks keep the 4 workers' queues long.
async fn starved() -> bool {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::Arc;
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..24)
        .map(|_| {
            let stop = stop.clone();
            sim::spawn(async move {
                for _ in 0..100_000 {
                    if stop.load(Relaxed) {
                        break;
                    }
                    sim::task::yield_now().await;
                }
            })
        })
        .collect();
    let open = Arc::new(AtomicBool::new(false));
    let begin = {
        let open = open.clone();
        sim::spawn(async move {
            for _ in 0..2 {
                sim::task::yield_now().await;
            }
            open.store(true, Relaxed);
        })
    };
    let write = sim::spawn(async move {
        for _ in 0..5 {
            sim::task::yield_now().await;
        }
        open.load(Relaxed)
    });
    begin.await.unwrap();
    let ok = write.await.unwrap();
    stop.store(true, Relaxed);
    for task in busy {
        task.await.unwrap();
    }
    !ok
}

/// Runs `bug` once with `config`; true if the bug showed. Also the
/// scheduling decisions the run made. The starved bug runs on 4 workers.
fn run_once(
    config: SimConfig,
    bug: fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = bool>>>,
    workers: bool,
) -> (bool, u64) {
    std::thread::spawn(move || {
        let rt = if workers {
            sim::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build_with(config)
        } else {
            sim::runtime::Builder::new_current_thread()
                .enable_all()
                .build_with(config)
        };
        let local = sim::task::LocalSet::new();
        let hit = if workers {
            rt.block_on(bug())
        } else {
            local.block_on(&rt, bug())
        };
        drop(rt);
        let decisions = sim_runtime::last_run().map_or(0, |r| r.decisions);
        (hit, decisions)
    })
    .join()
    .expect("the run's thread")
}

fn stats(name: &str, policy: &str, hits: &[u64], elapsed: std::time::Duration) {
    let first = hits.first().map_or("none".to_string(), |s| s.to_string());
    let mean_gap = if hits.is_empty() {
        "-".to_string()
    } else {
        format!("{:.1}", SEEDS as f64 / hits.len() as f64)
    };
    println!(
        "{name:<10} {policy:<28} {:>5} / {SEEDS}   first failing seed {first:>5}   seeds per failure {mean_gap:>7}   {:>6.2}s",
        hits.len(),
        elapsed.as_secs_f64()
    );
}

type Bug = fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = bool>>>;

fn main() {
    let bugs: [(&str, Bug, bool); 4] = [
        ("shallow", || Box::pin(shallow()), false),
        ("ordered", || Box::pin(ordered()), false),
        ("preempted", || Box::pin(preempted()), false),
        ("starved", || Box::pin(starved()), true),
    ];
    println!("bug        policy                       failing seeds   ...");
    for (name, bug, workers) in bugs {
        // The horizon, as a sweep measures it.
        let (_, decisions) = run_once(SimConfig::with_seed(0), bug, workers);
        let horizon = sim_runtime::config::pct_horizon(decisions, DEPTH);
        let policies: [(String, Option<Policy>); 3] = [
            ("random".to_string(), Some(Policy::Random)),
            (
                format!("pct depth {DEPTH} horizon {horizon}"),
                Some(Policy::Pct {
                    depth: DEPTH,
                    horizon,
                }),
            ),
            // `None`: each seed's policy from the portfolio.
            ("portfolio".to_string(), None),
        ];
        for (label, policy) in policies {
            let start = Instant::now();
            let hits: Vec<u64> = (0..SEEDS)
                .filter(|&seed| {
                    let mut config = SimConfig::with_seed(seed);
                    config.policy =
                        policy.unwrap_or_else(|| sim_runtime::sweep::portfolio::policy(seed));
                    run_once(config, bug, workers).0
                })
                .collect();
            stats(name, &label, &hits, start.elapsed());
        }
    }
}
