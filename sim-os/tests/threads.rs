//! Deterministic OS threads: `std::thread` during a run runs one thread at
//! a time, ordered by the seed. Simulation build only.
#![cfg(simulation)]

use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

#[tokio::test]
async fn a_thread_runs_and_is_joined() {
    let handle = std::thread::spawn(|| (1..=10).sum::<u32>());
    assert_eq!(handle.join().unwrap(), 55);
}

#[tokio::test]
async fn a_thread_sends_to_a_task_through_std_mpsc() {
    let (tx, rx) = mpsc::channel();
    let sender = std::thread::spawn(move || {
        for i in 0..3 {
            std::thread::sleep(Duration::from_millis(10));
            tx.send(i).unwrap();
        }
    });
    let start = tokio::time::Instant::now();
    let got: Vec<u32> = tokio::task::spawn_blocking(move || rx.iter().collect())
        .await
        .unwrap();
    assert_eq!(got, [0, 1, 2]);
    assert!(
        start.elapsed() >= Duration::from_millis(30),
        "slept in virtual time"
    );
    sender.join().unwrap();
}

/// A timed std wait on the runtime's own thread (a test's `Drop` waiting
/// for its server thread, as reqwest's tests do) ends at its timeout in
/// virtual time, not at whatever event comes after it, while the thread it
/// waits on keeps running a runtime of its own.
#[tokio::test]
async fn a_timed_wait_on_the_runtimes_thread_ends_at_its_timeout() {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            // Ticks every 700 ms: none falls on the waiter's timeout.
            let mut tick = tokio::time::interval(Duration::from_millis(700));
            for _ in 0..10 {
                tick.tick().await;
            }
        });
        drop(done_tx);
    });
    let start = tokio::time::Instant::now();
    let got = done_rx.recv_timeout(Duration::from_secs(3));
    assert_eq!(got, Err(mpsc::RecvTimeoutError::Timeout));
    // At its timeout (and the work before the call), not at the tick after
    // it (3.5 s).
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited < Duration::from_millis(3_001),
        "{waited:?}"
    );
    // The server's last tick is at 6.3 s; then it drops its sender.
    assert_eq!(
        done_rx.recv_timeout(Duration::from_secs(10)),
        Err(mpsc::RecvTimeoutError::Disconnected)
    );
    server.join().unwrap();
}

#[tokio::test]
async fn a_mutex_and_condvar_hand_off_between_two_threads() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let mut threads = Vec::new();
    for me in 0..2u32 {
        let pair = pair.clone();
        threads.push(std::thread::spawn(move || {
            let (lock, turn) = &*pair;
            for _ in 0..5 {
                let mut n = lock.lock().unwrap();
                while *n % 2 != me {
                    n = turn.wait(n).unwrap();
                }
                *n += 1;
                turn.notify_all();
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*pair.0.lock().unwrap(), 10);
}

#[tokio::test]
async fn a_panic_on_a_thread_reaches_its_join_handle() {
    let handle = std::thread::spawn(|| panic!("boom on a thread"));
    assert!(handle.join().is_err());
}

#[tokio::test]
async fn the_seed_orders_the_threads() {
    // Which of four threads takes the lock first depends on the seed only.
    let order = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let order = order.clone();
            std::thread::spawn(move || order.lock().unwrap().push(i))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let order = order.lock().unwrap().clone();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, [0, 1, 2, 3]);
    println!("order {order:?}");
}

/// Two threads take two locks in opposite orders: the join that waits for
/// them fails, and the report names both threads and what they wait on.
#[tokio::test]
#[should_panic(expected = "failed to join thread")]
async fn two_threads_in_a_lock_order_deadlock() {
    let accounts = Arc::new(Mutex::new(0u64));
    let ledger = Arc::new(Mutex::new(0u64));
    let (a, l) = (accounts.clone(), ledger.clone());
    let transfer = std::thread::Builder::new()
        .name("transfer".into())
        .spawn(move || {
            let _accounts = a.lock().unwrap();
            std::thread::sleep(Duration::from_millis(10));
            let _ledger = l.lock().unwrap();
        })
        .unwrap();
    let audit = std::thread::Builder::new()
        .name("audit".into())
        .spawn(move || {
            let _ledger = ledger.lock().unwrap();
            std::thread::sleep(Duration::from_millis(10));
            let _accounts = accounts.lock().unwrap();
        })
        .unwrap();
    transfer.join().unwrap();
    audit.join().unwrap();
}

#[test]
fn the_deadlock_report_names_both_threads() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "two_threads_in_a_lock_order_deadlock",
            "--exact",
            "--nocapture",
        ])
        .env("SIM_SEED", "5")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("sim: deadlock: the simulator's thread waits on a thread's end (join)"),
        "{stderr}"
    );
    assert!(stderr.contains("thread 'transfer'"), "{stderr}");
    assert!(stderr.contains("thread 'audit'"), "{stderr}");
    assert!(
        stderr.contains("waits on a std lock or channel"),
        "{stderr}"
    );
}

/// What `the_seed_orders_the_threads` printed for `seed`, in a fresh
/// process.
fn order_for(seed: &str) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["the_seed_orders_the_threads", "--exact", "--nocapture"])
        .env("SIM_SEED", seed)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find(|l| l.starts_with("order "))
        .expect("the test prints its order")
        .to_string()
}

#[test]
fn the_seed_decides_the_interleaving_and_replays_it() {
    let orders: Vec<String> = ["1", "2", "3", "4", "5", "6"].map(order_for).into();
    let mut distinct = orders.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() > 1, "every seed gave one order: {orders:?}");
    assert_eq!(order_for("3"), orders[2], "a seed replays its order");
    // The whole run, event for event, in two processes.
    let a = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "a_mutex_and_condvar_hand_off_between_two_threads",
        "9",
        "threads-a",
    );
    let b = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "a_mutex_and_condvar_hand_off_between_two_threads",
        "9",
        "threads-b",
    );
    assert!(a == b, "one seed, two processes, two traces");
}

/// The same for a real socket (made before any runtime: one made in the
/// simulation is simulated): a thread's blocking `recv` is refused.
#[test]
fn a_thread_blocking_on_a_real_socket_is_refused() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build_with(sim_runtime::SimConfig::with_seed(2));
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            let listener = std::thread::Builder::new()
                .name("listener".into())
                .spawn(move || socket.recv(&mut [0u8; 8]))
                .unwrap();
            let got = listener.join().unwrap();
            assert_eq!(
                got.unwrap_err().kind(),
                std::io::ErrorKind::PermissionDenied
            );
            tokio::task::yield_now().await;
        })
    }))
    .expect_err("the run fails");
    let message = sim_test_support::panic_text(failure);
    assert!(message.contains("thread 'listener'"), "{message}");
    assert!(
        message.contains("called recv on a real socket"),
        "{message}"
    );
}

/// A thread that would block on a real pipe stops the run with an escape
/// that names the call, instead of hanging it.
#[test]
fn a_thread_blocking_on_a_real_pipe_is_refused() {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // Made before the simulation, so a real pipe (in one, `pipe` gives a
    // simulated one).
    let mut fds = [0i32; 2];
    // SAFETY: room for two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build_with(sim_runtime::SimConfig::with_seed(2));
    let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            let reader = std::thread::Builder::new()
                .name("reader".into())
                .spawn(move || {
                    // SAFETY: the pipe's read end, owned from here.
                    let mut end = unsafe { std::fs::File::from_raw_fd(fds[0]) };
                    end.read(&mut [0u8; 1])
                })
                .unwrap();
            let read = reader.join().unwrap();
            assert_eq!(
                read.unwrap_err().kind(),
                std::io::ErrorKind::PermissionDenied
            );
            tokio::task::yield_now().await;
        })
    }))
    .expect_err("the run fails");
    let message = sim_test_support::panic_text(failure);
    assert!(
        message.contains("sim: escape refused: thread 'reader'"),
        "{message}"
    );
    assert!(message.contains("called read on a real pipe"), "{message}");
}

/// A report on a std thread's task names where the code spawned the
/// thread, not the simulator's own spawn of it.
#[test]
fn a_report_names_where_a_std_thread_was_spawned() {
    let config = sim_runtime::SimConfig {
        instant_step_limit: 20_000,
        ..sim_runtime::SimConfig::with_seed(1)
    };
    let payload = std::panic::catch_unwind(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build_with(config)
            .block_on(async {
                // A paused clock with a busy task: a livelock, whose report lists the
                // pending thread.
                let _sleeper = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(1))); // spawns the sleeper
                loop {
                    tokio::task::yield_now().await;
                }
            })
    })
    .unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    let source =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/threads.rs")).unwrap();
    let line = source
        .lines()
        .position(|l| l.ends_with("// spawns the sleeper"))
        .unwrap()
        + 1;
    assert!(message.contains("sim: livelock"), "{message}");
    assert!(
        message.contains("(a std thread) spawned at ")
            && message.contains(&format!("tests/threads.rs:{line}:")),
        "{message}"
    );
    assert!(!message.contains("sim-os/src/threads.rs"), "{message}");
}
