//! Deadlock reports that name the cause: a cycle of tasks waiting on each
//! other's locks is reported when it forms, even while other tasks and
//! timers run, naming each task, the lock it waits for, where, and who
//! holds it. Simulation build only.
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Builder;
use tokio::sync::{Mutex, RwLock};

fn panic_message(f: impl FnOnce()) -> String {
    sim_test_support::panic_text(catch_unwind(AssertUnwindSafe(f)).expect_err("the run must fail"))
}

fn run(seed: u64, body: impl std::future::Future<Output = ()>) {
    Builder::new_current_thread()
        .enable_all()
        .build_with(SimConfig::with_seed(seed))
        .block_on(body);
}

/// Two tasks take two locks in opposite orders; a ticker ticks forever.
async fn lock_order_deadlock() {
    let accounts = Arc::new(Mutex::new(0u64));
    let ledger = Arc::new(Mutex::new(0u64));
    tokio::task::Builder::new()
        .name("ticker")
        .spawn(async {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
        .unwrap();
    let (a, l) = (accounts.clone(), ledger.clone());
    let transfer = tokio::task::Builder::new()
        .name("transfer")
        .spawn(async move {
            let _accounts = a.lock().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _ledger = l.lock().await; // transfer waits here
        })
        .unwrap();
    let audit = tokio::task::Builder::new()
        .name("audit")
        .spawn(async move {
            let _ledger = ledger.lock().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _accounts = accounts.lock().await; // audit waits here
        })
        .unwrap();
    let _ = transfer.await;
    let _ = audit.await;
}

#[test]
fn a_lock_order_deadlock_is_reported_when_it_forms_despite_a_live_ticker() {
    let message = panic_message(|| run(1, lock_order_deadlock()));
    // The cycle forms when both 10 ms sleeps end: at 11 ms, since they
    // start a little after zero (polls take time on a clock that is not
    // paused) and a deadline rounds up to the next millisecond, as tokio's do.
    assert!(
        message.starts_with(
            "sim: deadlock: tasks wait for each other's locks, so none of them can ever go on \
             (virtual time 11."
        ),
        "{message}"
    );
    let this = file!();
    // The lines of the two second `lock().await`s, found in this file.
    let waits = [
        ("transfer", line_of("// transfer waits here")),
        ("audit", line_of("// audit waits here")),
    ];
    for (task, line) in waits {
        assert!(
            message.contains(&format!("'{task}' spawned at {this}")),
            "{message}"
        );
        // Where it waits: the line of its second `lock().await`.
        let at = format!("tests/deadlock_reports.rs:{line}:");
        assert!(message.contains(&at), "{line}: {message}");
    }
    // Both locks, by type and number, and who holds each.
    assert!(message.contains("waits for Mutex<u64> #1"), "{message}");
    assert!(message.contains("waits for Mutex<u64> #2"), "{message}");
    assert_eq!(
        message.matches(", held (or next in line) by task ").count(),
        2,
        "{message}"
    );
}

#[test]
fn a_lock_wait_beside_a_timeout_is_no_deadlock() {
    // The same cycle, but one side gives up after 1 s: no failure.
    run(2, async {
        let a = Arc::new(Mutex::new(()));
        let b = Arc::new(Mutex::new(()));
        let (a2, b2) = (a.clone(), b.clone());
        let one = tokio::spawn(async move {
            let _a = a2.lock().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _ = tokio::time::timeout(Duration::from_secs(1), b2.lock()).await;
        });
        let two = tokio::spawn(async move {
            let _b = b.lock().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _a = a.lock().await;
        });
        one.await.unwrap();
        two.await.unwrap();
    });
}

#[test]
fn readers_holding_a_rwlock_against_a_writer_that_holds_their_mutex() {
    // The reader holds the RwLock for reading and waits for the Mutex; the
    // writer holds the Mutex and waits to write.
    let message = panic_message(|| {
        run(3, async {
            let table = Arc::new(RwLock::new(0u8));
            let log = Arc::new(Mutex::new(0u8));
            let (t, l) = (table.clone(), log.clone());
            let reader = tokio::spawn(async move {
                let _r = t.read().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
                let _l = l.lock().await;
            });
            let writer = tokio::spawn(async move {
                let _l = log.lock().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
                let _w = table.write().await;
            });
            let _ = reader.await;
            let _ = writer.await;
        })
    });
    assert!(message.contains("waits for RwLock<u8> #"), "{message}");
    assert!(message.contains("(to write)"), "{message}");
    assert!(message.contains("waits for Mutex<u8> #"), "{message}");
}

#[test]
fn the_end_of_run_report_says_what_each_task_waits_for() {
    // A task waits for a lock whose holder waits for a oneshot nobody
    // will send: no cycle of locks, so the end-of-run report speaks.
    let message = panic_message(|| {
        run(4, async {
            let lock = Arc::new(Mutex::new(()));
            let (_keep, rx) = tokio::sync::oneshot::channel::<()>();
            let held = lock.clone();
            let holder = tokio::spawn(async move {
                let _g = held.lock().await;
                let _ = rx.await;
            });
            tokio::time::sleep(Duration::from_millis(1)).await;
            let waiter = tokio::spawn(async move {
                let _g = lock.lock().await;
            });
            let _ = waiter.await;
            let _ = holder.await;
        })
    });
    assert!(
        message.starts_with("sim: deadlock: the root future is waiting"),
        "{message}"
    );
    assert!(message.contains("waits for Mutex<()> #1 at"), "{message}");
}

#[test]
fn the_time_limit_report_lists_the_tasks_and_their_lock_waits() {
    let mut config = SimConfig::with_seed(5);
    config.time_limit = Duration::from_secs(60);
    let message = panic_message(|| {
        Builder::new_current_thread()
            .enable_all()
            .build_with(config)
            .block_on(async {
                let lock = Arc::new(Mutex::new(()));
                let held = lock.clone();
                // The holder keeps the lock and ticks forever: no deadlock,
                // but the waiter never gets it.
                let _holder = tokio::spawn(async move {
                    let _g = held.lock().await;
                    loop {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                });
                tokio::time::sleep(Duration::from_millis(1)).await;
                let waiter = tokio::spawn(async move {
                    let _g = lock.lock().await;
                });
                let _ = waiter.await;
            })
    });
    assert!(message.starts_with("sim: time limit"), "{message}");
    assert!(message.contains("Pending tasks (2):"), "{message}");
    assert!(message.contains("waits for Mutex<()> #1 at"), "{message}");
    assert!(
        message.contains("held (or next in line) by task 1"),
        "{message}"
    );
    // The holder sleeps in its loop: until when, and where the sleep is.
    assert!(message.contains("waits on sleep until 60."), "{message}");
}

#[test]
fn the_report_names_each_primitive_a_task_waits_on_and_where_it_was_made() {
    let message = panic_message(|| {
        run(6, async {
            let (_tx, rx) = tokio::sync::oneshot::channel::<()>(); // the oneshot
            let (_mtx, mut mrx) = tokio::sync::mpsc::channel::<()>(1); // the mpsc
            let notify = Arc::new(tokio::sync::Notify::new());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let named =
                |name: &str, f: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>| {
                    tokio::task::Builder::new()
                        .name(name)
                        .spawn_local(f)
                        .unwrap()
                };
            let local = tokio::task::LocalSet::new();
            local
                .run_until(async move {
                    let first = named(
                        "oneshot",
                        Box::pin(async move {
                            let _ = rx.await;
                        }),
                    );
                    let _mpsc = named(
                        "mpsc",
                        Box::pin(async move {
                            let _ = mrx.recv().await;
                        }),
                    );
                    let n = notify.clone();
                    let _notify = named(
                        "notify",
                        Box::pin(async move {
                            n.notified().await; // the notified
                        }),
                    );
                    let _reader = named(
                        "reader",
                        Box::pin(async move {
                            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
                            let mut buf = [0u8; 4];
                            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut buf).await;
                        }),
                    );
                    let (_accepted, _) = listener.accept().await.unwrap();
                    let joiner = named(
                        "joiner",
                        Box::pin(async move {
                            let _ = first.await;
                        }),
                    );
                    let _ = joiner.await;
                })
                .await;
        })
    });
    assert!(message.starts_with("sim: deadlock"), "{message}");
    let this = file!();
    for (what, marker) in [
        ("oneshot::Receiver", "// the oneshot"),
        ("mpsc::Receiver::recv", "// the mpsc"),
        ("Notify::notified", "// the notified"),
    ] {
        let wanted = format!("waits on {what} ({this}:{}:", line_of(marker));
        assert!(message.contains(&wanted), "{wanted}: {message}");
    }
    assert!(
        message.contains("waits on JoinHandle of task "),
        "{message}"
    );
    assert!(
        message.contains("waits on TcpStream read on 127.0.0.1:"),
        "{message}"
    );
}

/// The line of this file that ends with `marker`.
fn line_of(marker: &str) -> usize {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/deadlock_reports.rs"
    ))
    .unwrap();
    source
        .lines()
        .position(|l| l.ends_with(marker))
        .map(|i| i + 1)
        .unwrap()
}

// Last, so that the lines above (spawn sites in traces and reports) keep
// their numbers.
