//! A planted worker-starvation race and its fixed twin, written against
//! plain tokio.
//!
//! A transaction is three tasks: `begin` opens it after a few awaits,
//! `write` writes into it after a few more, `commit` commits after more
//! still. The buggy version trusts the head start: `begin` has fewer
//! awaits than `write`, so on one thread, where every yield waits behind
//! the other ready tasks, `begin` always opens first. Two dozen busy tasks
//! run beside them. On a `multi_thread` runtime the three tasks land on
//! different workers, and a worker whose queue is long, or whose thread the
//! OS preempts, falls behind: `write` finds the transaction not open. The
//! fixed twin waits for each step instead.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Busy tasks beside the transaction.
pub const BUSY_TASKS: usize = 24;

/// Work between a busy task's yields: a little CPU, as a real handler has
/// (counted, so the simulator runs it the same way every time).
const BUSY_WORK: u64 = 20_000;

/// Yields before each step (`begin`, `write`, `commit`).
const STEP_YIELDS: [usize; 3] = [2, 5, 8];

#[derive(Default)]
struct Transaction {
    open: bool,
    written: bool,
    committed: bool,
}

/// Runs one transaction beside the busy tasks; `Err` names the step that
/// found the transaction in the wrong state. `fixed` chooses the twin.
pub async fn transaction(fixed: bool) -> Result<(), String> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut busy = Vec::new();
    for _ in 0..BUSY_TASKS {
        let stop = stop.clone();
        busy.push(tokio::spawn(async move {
            // Bounded: the transaction's steps end it, or the cap does.
            for _ in 0..100_000 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let mut sum = 0u64;
                for i in 0..BUSY_WORK {
                    sum = sum.wrapping_add(std::hint::black_box(i));
                }
                std::hint::black_box(sum);
                tokio::task::yield_now().await;
            }
        }));
    }
    let tx = Arc::new(Mutex::new(Transaction::default()));
    let (opened, wait_open) = tokio::sync::watch::channel(false);
    let (written, wait_written) = tokio::sync::watch::channel(false);
    let begin = {
        let tx = tx.clone();
        tokio::spawn(async move {
            for _ in 0..STEP_YIELDS[0] {
                tokio::task::yield_now().await;
            }
            tx.lock().unwrap().open = true;
            let _ = opened.send(true);
            Ok(())
        })
    };
    let write = {
        let tx = tx.clone();
        let mut wait_open = wait_open;
        tokio::spawn(async move {
            for _ in 0..STEP_YIELDS[1] {
                tokio::task::yield_now().await;
            }
            if fixed {
                let _ = wait_open.wait_for(|open| *open).await;
            }
            let mut tx = tx.lock().unwrap();
            if !tx.open {
                return Err("write: the transaction is not open".to_string());
            }
            tx.written = true;
            let _ = written.send(true);
            Ok(())
        })
    };
    let commit = {
        let tx = tx.clone();
        let mut wait_written = wait_written;
        tokio::spawn(async move {
            for _ in 0..STEP_YIELDS[2] {
                tokio::task::yield_now().await;
            }
            if fixed {
                let _ = wait_written.wait_for(|written| *written).await;
            }
            let mut tx = tx.lock().unwrap();
            if !tx.written {
                return Err("commit: nothing was written".to_string());
            }
            tx.committed = true;
            Ok(())
        })
    };
    let mut outcome = Ok(());
    for step in [begin, write, commit] {
        match step.await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if outcome.is_ok() => outcome = Err(e),
            Ok(Err(_)) => {}
            Err(e) => return Err(format!("a step panicked: {e}")),
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in busy {
        let _ = task.await;
    }
    if outcome.is_ok() && !tx.lock().unwrap().committed {
        outcome = Err("the transaction never committed".to_string());
    }
    outcome
}
