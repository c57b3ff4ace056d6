//! A small job queue service, written against plain tokio.
//!
//! A dispatcher hands jobs to workers over a bounded channel; each worker
//! takes a random time per job and may time out; a monitor ticks every
//! second and reports progress. Stats live in a `HashMap`, job ids come from
//! `rand::random`, and the report is stamped with `SystemTime::now()`.
//!
//! On real tokio (`cargo run -p sim-examples --bin jobs`) it takes a few
//! seconds of wall time and differs from run to run. On the simulator
//! (`cargo sim run -p sim-examples --bin jobs`) it takes milliseconds, and
//! with the same `SIM_SEED` prints the same report and writes the same
//! `SIM_TRACE`, event for event.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, Mutex};
use tokio::time::{interval, sleep, timeout, Instant};

const WORKERS: usize = 4;
const JOBS: usize = 40;

#[derive(Debug)]
struct Job {
    id: u32,
    work_ms: u64,
}

#[tokio::main]
async fn main() {
    let start = Instant::now();
    let (tx, rx) = mpsc::channel::<Job>(8);
    let rx = Arc::new(Mutex::new(rx));
    let stats: Arc<Mutex<HashMap<String, u32>>> = Arc::default();

    let mut workers = Vec::new();
    for w in 0..WORKERS {
        let rx = rx.clone();
        let stats = stats.clone();
        workers.push(tokio::spawn(async move {
            loop {
                let job = { rx.lock().await.recv().await };
                let Some(job) = job else { break };
                let outcome = match timeout(
                    Duration::from_millis(250),
                    sleep(Duration::from_millis(job.work_ms)),
                )
                .await
                {
                    Ok(()) => "done",
                    Err(_) => "timed out",
                };
                *stats
                    .lock()
                    .await
                    .entry(format!("worker {w} {outcome}"))
                    .or_default() += 1;
                let _ = job.id;
            }
        }));
    }

    let monitor_stats = stats.clone();
    let monitor = tokio::spawn(async move {
        let mut tick = interval(Duration::from_secs(1));
        let mut lines = Vec::new();
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let finished: u32 = monitor_stats.lock().await.values().sum();
                    lines.push(format!("t={:?} finished={finished}", start.elapsed()));
                    if finished as usize == JOBS {
                        break lines;
                    }
                }
            }
        }
    });

    for _ in 0..JOBS {
        let job = Job {
            id: rand::random(),
            work_ms: rand::random::<u64>() % 300,
        };
        tx.send(job).await.expect("workers are running");
    }
    drop(tx);
    for worker in workers {
        worker.await.expect("a worker panicked");
    }
    let lines = monitor.await.expect("the monitor panicked");

    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    println!("report at unix time {stamp}, after {:?}", start.elapsed());
    for line in lines {
        println!("  {line}");
    }
    // HashMap iteration order comes from its random state: seeded too.
    for (key, count) in stats.lock().await.iter() {
        println!("  {key}: {count}");
    }
}
