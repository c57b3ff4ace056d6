//! The job queue service behind `src/bin/jobs.rs`, written against plain
//! tokio: a dispatcher hands jobs to workers over a bounded channel; each
//! worker takes a random time per job and may time out; a monitor ticks
//! every second and reports progress. Stats live in a `HashMap`, job ids
//! come from `rand::random`, and the report is stamped with
//! `SystemTime::now()`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, Mutex};
use tokio::time::{interval, sleep, timeout, Instant};

/// Workers taking jobs.
pub const WORKERS: usize = 4;
/// Jobs handed out.
pub const JOBS: usize = 40;

#[derive(Debug)]
struct Job {
    id: u32,
    work_ms: u64,
}

/// What one run of the service reports.
#[derive(Debug)]
pub struct Report {
    /// `SystemTime::now()` at the end, in seconds since 1970.
    pub unix_time_s: u64,
    /// Virtual (or real) time the run took.
    pub elapsed: Duration,
    /// The monitor's lines, one per tick.
    pub lines: Vec<String>,
    /// Jobs per worker and outcome, in the stats map's iteration order.
    pub stats: Vec<(String, u32)>,
}

/// Runs the service until every job is done or timed out.
pub async fn run() -> Report {
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

    let unix_time_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // HashMap iteration order comes from its random state: seeded too.
    let stats = stats
        .lock()
        .await
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    Report {
        unix_time_s,
        elapsed: start.elapsed(),
        lines,
        stats,
    }
}
