//! The cost of a simulated thread's turn against a task switch, measured
//! in one simulation run (BENCHMARKS.md):
//!
//! ```sh
//! cargo sim run --release -p sim-examples --bin thread_switch
//! ```
//!
//! Two threads hand a token back and forth through a `std` `Mutex` and
//! `Condvar` (each handoff is two turns: a futex wake, then the other's
//! wait ending); two tasks do the same through `tokio::sync::Notify`. It
//! prints the real time per handoff of each, measured on libc's own clock
//! (the run's clocks are virtual). In a plain build (`cargo run`: real
//! tokio, real parallel threads) it prints the real runtimes' numbers.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

const HANDOFFS: u32 = 20_000;

fn threads() -> f64 {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let start = Instant::now();
    let players: Vec<_> = (0..2u32)
        .map(|me| {
            let pair = pair.clone();
            std::thread::spawn(move || {
                let (lock, turn) = &*pair;
                loop {
                    let mut n = lock.lock().unwrap();
                    while *n % 2 != me && *n < HANDOFFS {
                        n = turn.wait(n).unwrap();
                    }
                    if *n >= HANDOFFS {
                        turn.notify_all();
                        return;
                    }
                    *n += 1;
                    turn.notify_all();
                }
            })
        })
        .collect();
    for p in players {
        p.join().unwrap();
    }
    start.elapsed().as_nanos() as f64 / f64::from(HANDOFFS)
}

async fn tasks() -> f64 {
    let notifies = Arc::new([tokio::sync::Notify::new(), tokio::sync::Notify::new()]);
    let start = Instant::now();
    let players: Vec<_> = (0..2usize)
        .map(|me| {
            let notifies = notifies.clone();
            tokio::spawn(async move {
                for i in 0..HANDOFFS / 2 {
                    if me == 1 || i > 0 {
                        notifies[me].notified().await;
                    }
                    notifies[1 - me].notify_one();
                }
            })
        })
        .collect();
    for p in players {
        p.await.unwrap();
    }
    start.elapsed().as_nanos() as f64 / f64::from(HANDOFFS)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The run's clocks are virtual and stand still here: measure with the
    // real monotonic clock, libc's own (past the simulation's definition).
    let t0 = sim_examples::bench::real_now_ns();
    let _ = threads();
    let t1 = sim_examples::bench::real_now_ns();
    let _ = tasks().await;
    let t2 = sim_examples::bench::real_now_ns();
    let per_thread = (t1 - t0) / f64::from(HANDOFFS);
    let per_task = (t2 - t1) / f64::from(HANDOFFS);
    println!("thread handoff (std Mutex + Condvar): {per_thread:.0} ns");
    println!("task handoff (tokio Notify): {per_task:.0} ns");
    println!("ratio: {:.1}x", per_thread / per_task);
}
