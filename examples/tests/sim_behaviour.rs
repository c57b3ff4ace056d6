//! What only the simulator does: deadlock reports, run limits, refusing real
//! threads, and making std's clock and randomness repeat with the seed.
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::runtime::{Builder, Runtime};

fn runtime(config: SimConfig) -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .build_with(config)
}

fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the run must fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_deadlock_fails_with_the_pending_tasks() {
    let rt = runtime(SimConfig::with_seed(7));
    let message = panic_message(|| {
        rt.block_on(async {
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            let (_keep_tx, stuck_rx) = tokio::sync::oneshot::channel::<()>();
            let _waiter = tokio::task::Builder::new()
                .name("stuck-waiter")
                .spawn(async move {
                    let _ = stuck_rx.await;
                })
                .unwrap();
            let _keep = tx;
            let _ = rx.await;
        })
    });
    assert!(message.contains("sim: deadlock"), "{message}");
    assert!(message.contains("task 1 'stuck-waiter'"), "{message}");
    assert!(
        message.contains("examples/tests/sim_behaviour.rs"),
        "{message}"
    );
    assert!(message.contains("SIM_SEED=0x7"), "{message}");
}

#[test]
fn the_time_limit_stops_a_run_that_waits_too_long() {
    let mut config = SimConfig::with_seed(1);
    config.time_limit = Duration::from_secs(60);
    let rt = runtime(config);
    let message = panic_message(|| {
        rt.block_on(async { tokio::time::sleep(Duration::from_secs(3600)).await });
    });
    assert!(message.contains("sim: time limit"), "{message}");
    assert!(message.contains("SIM_TIME_LIMIT_S"), "{message}");
}

#[test]
fn the_step_limit_stops_a_spinning_run() {
    let mut config = SimConfig::with_seed(1);
    config.step_limit = 10_000;
    let rt = runtime(config);
    let message = panic_message(|| {
        rt.block_on(async {
            loop {
                tokio::task::yield_now().await;
            }
        })
    });
    assert!(message.contains("sim: step limit"), "{message}");
    assert!(message.contains("SIM_STEP_LIMIT"), "{message}");
}

#[test]
fn threads_are_simulated_during_a_run_only() {
    let rt = runtime(SimConfig::with_seed(3));
    let inside = rt.block_on(async {
        let t = std::thread::Builder::new().spawn(|| 7).unwrap();
        t.join().unwrap()
    });
    assert_eq!(inside, 7, "a simulated thread runs and is joined");
    let outside = std::thread::Builder::new()
        .spawn(|| 5)
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(outside, 5, "outside a run, threads are real");
}

/// A workload that touches everything a seed must pin down. It runs on a
/// fresh thread, as each test does: std's `HashMap` keys and rand's
/// `ThreadRng` are seeded once per thread, by the first run on it.
fn workload(seed: u64) -> (Vec<String>, String) {
    std::thread::spawn(move || workload_on_this_thread(seed))
        .join()
        .expect("the workload ran")
}

fn workload_on_this_thread(seed: u64) -> (Vec<String>, String) {
    let rt = runtime(SimConfig::with_seed(seed));
    let out = rt.block_on(async {
        let mut out = Vec::new();
        let start = std::time::Instant::now();
        let mut handles = Vec::new();
        for i in 0..8u64 {
            handles.push(tokio::spawn(async move {
                let jitter: u64 = rand::random::<u64>() % 50;
                tokio::time::sleep(Duration::from_millis(jitter)).await;
                tokio::select! {
                    _ = tokio::task::yield_now() => i * 2,
                    _ = tokio::time::sleep(Duration::from_millis(1)) => i * 2 + 1,
                }
            }));
        }
        for h in handles {
            out.push(h.await.unwrap().to_string());
        }
        let map: HashMap<u32, u32> = (0..16).map(|i| (i, i * i)).collect();
        out.push(format!("{:?}", map.keys().collect::<Vec<_>>()));
        out.push(format!(
            "{:?}",
            SystemTime::now().duration_since(UNIX_EPOCH).unwrap()
        ));
        out.push(format!("{:?}", start.elapsed()));
        out.push(format!("{:x}", rand::random::<u128>()));
        out
    });
    drop(rt);
    let hash = sim_runtime::last_run()
        .expect("the run reported")
        .trace_hash;
    (out, hash)
}

#[test]
fn one_seed_repeats_everything_and_another_differs() {
    let (out_a, hash_a) = workload(11);
    let (out_b, hash_b) = workload(11);
    assert_eq!(out_a, out_b);
    assert_eq!(hash_a, hash_b);
    let (out_c, hash_c) = workload(12);
    assert_ne!(hash_a, hash_c);
    assert_ne!(out_a, out_c);
}

#[test]
fn std_clocks_read_virtual_time_during_a_run() {
    let rt = runtime(SimConfig::with_seed(5));
    let (wall, elapsed) = rt.block_on(async {
        let start = std::time::Instant::now();
        tokio::time::sleep(Duration::from_secs(86_400)).await;
        (SystemTime::now(), start.elapsed())
    });
    // A day, and the little the polls and reads around the sleep took (the
    // clock is not paused), with the sleep's round up to the millisecond.
    let day = Duration::from_secs(86_400);
    assert!(
        elapsed > day && elapsed < day + Duration::from_millis(2),
        "{elapsed:?}"
    );
    let since_epoch = wall.duration_since(UNIX_EPOCH).unwrap();
    let epoch = Duration::from_secs(1_735_689_600);
    assert!(since_epoch >= epoch + elapsed && since_epoch < epoch + day + Duration::from_millis(2));
}

#[test]
fn a_spent_budget_lets_the_other_tasks_run_under_pct_too() {
    // tokio's cooperative budget makes a task that keeps finding ready
    // resources yield, behind every ready task: PCT's priorities must not
    // pick it again at once.
    for seed in 0..20 {
        let mut config = SimConfig::with_seed(seed);
        config.policy = sim_runtime::config::Policy::Pct {
            depth: 3,
            horizon: 10_000,
        };
        let ran_first = runtime(config).block_on(async {
            let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = ran.clone();
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            for i in 0..1_000 {
                tx.send(i).unwrap();
            }
            let other = tokio::spawn(async move {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let mut received = 0;
            while received < 1_000 && !ran.load(std::sync::atomic::Ordering::Relaxed) {
                rx.recv().await.unwrap();
                received += 1;
            }
            other.await.unwrap();
            received < 1_000
        });
        assert!(
            ran_first,
            "seed {seed}: the other task waited out 1,000 ready receives"
        );
    }
}
