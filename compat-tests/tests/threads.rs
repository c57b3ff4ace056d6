//! `std::thread` alongside tokio: real, parallel threads in the plain
//! build; simulated threads, run one at a time in the seed's order, in the
//! simulation build. The assertions are the same.

use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_thread_sends_to_a_task_through_std_mpsc() {
    let (tx, rx) = mpsc::channel();
    let sender = std::thread::spawn(move || {
        for i in 0..3u32 {
            tx.send(i).unwrap();
        }
    });
    let got: Vec<u32> = tokio::task::spawn_blocking(move || rx.iter().collect())
        .await
        .unwrap();
    assert_eq!(got, [0, 1, 2]);
    sender.join().unwrap();
}

#[tokio::test]
async fn a_mutex_and_condvar_hand_off_between_two_threads() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let threads: Vec<_> = (0..2u32)
        .map(|me| {
            let pair = pair.clone();
            std::thread::spawn(move || {
                let (lock, turn) = &*pair;
                for _ in 0..5 {
                    let mut n = lock.lock().unwrap();
                    while *n % 2 != me {
                        n = turn.wait(n).unwrap();
                    }
                    *n += 1;
                    turn.notify_all();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(*pair.0.lock().unwrap(), 10);
}

#[tokio::test]
async fn a_thread_with_its_own_runtime_talks_tcp_to_a_task() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"ping").await.unwrap();
            let mut back = [0u8; 4];
            stream.read_exact(&mut back).await.unwrap();
            back
        })
    });
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut buf = [0u8; 4];
    stream.read_exact(&mut buf).await.unwrap();
    stream.write_all(&buf).await.unwrap();
    let back = tokio::task::spawn_blocking(move || client.join().unwrap())
        .await
        .unwrap();
    assert_eq!(&back, b"ping");
}

#[tokio::test]
async fn tasks_of_a_threads_runtime_run_on_that_thread() {
    thread_local! {
        static WHO: std::cell::Cell<&'static str> = const { std::cell::Cell::new("nobody") };
    }
    WHO.with(|w| w.set("the test's thread"));
    let (handle_tx, handle_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let worker = std::thread::spawn(move || {
        WHO.with(|w| w.set("the worker"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        handle_tx
            .send((runtime.handle().clone(), std::thread::current().id()))
            .unwrap();
        // Its tasks run while the thread blocks on the runtime.
        runtime.block_on(async {
            let _ = stop_rx.await;
        });
    });
    let (handle, worker_id) = tokio::task::spawn_blocking(move || handle_rx.recv().unwrap())
        .await
        .unwrap();
    // Spawned from the test's thread onto the worker's runtime.
    let (id, who) = handle
        .spawn(async {
            tokio::task::yield_now().await;
            (std::thread::current().id(), WHO.with(|w| w.get()))
        })
        .await
        .unwrap();
    assert_eq!(id, worker_id);
    assert_ne!(id, std::thread::current().id());
    assert_eq!(who, "the worker");
    assert_eq!(WHO.with(|w| w.get()), "the test's thread");
    stop_tx.send(()).unwrap();
    tokio::task::spawn_blocking(move || worker.join().unwrap())
        .await
        .unwrap();
}

/// A std thread that polls a future by hand in a busy loop, and a task
/// that lets it work with `std::thread::sleep` (tower's buffer tests do
/// both): the thread runs while the task sleeps, as on a real machine.
#[tokio::test]
async fn a_spinning_thread_works_while_a_task_sleeps() {
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
    let got = Arc::new(AtomicBool::new(false));
    let seen = got.clone();
    let spinner = std::thread::spawn(move || {
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        loop {
            let mut recv = std::pin::pin!(rx.recv());
            if let Poll::Ready(value) = recv.as_mut().poll(&mut cx) {
                assert_eq!(value, Some(7));
                seen.store(true, Ordering::SeqCst);
                return;
            }
        }
    });
    // Blocks the runtime's thread; the thread spins on an empty channel
    // meanwhile, and must not hold the turn for ever.
    std::thread::sleep(Duration::from_millis(20));
    assert!(!got.load(Ordering::SeqCst));
    tx.send(7).await.unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        got.load(Ordering::SeqCst),
        "the thread took the value meanwhile"
    );
    tokio::task::spawn_blocking(move || spinner.join().unwrap())
        .await
        .unwrap();
}

/// A std thread that spins on a flag of its own, only checking a
/// oneshot's `is_closed` on each turn (tower's buffer worker does, holding
/// a request while its service is not ready): nothing of the simulation
/// is ever pending for it, yet it runs while the task sleeps and gives the
/// turn back, and then sees the flag the task set.
#[tokio::test]
async fn a_thread_spinning_on_its_own_flag_gives_the_turn_back() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
    let ready = Arc::new(AtomicBool::new(false));
    let turns = Arc::new(AtomicU64::new(0));
    let spinner = std::thread::spawn({
        let ready = ready.clone();
        let turns = turns.clone();
        move || {
            while !ready.load(Ordering::SeqCst) {
                assert!(!tx.is_closed());
                turns.fetch_add(1, Ordering::Relaxed);
            }
            tx.send(7).unwrap();
        }
    });
    // Waits for the thread's first turns (bounded: about 10 s on real
    // tokio, however loaded the machine; virtual milliseconds here).
    for _ in 0..10_000 {
        if turns.load(Ordering::Relaxed) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        turns.load(Ordering::Relaxed) > 0,
        "the thread ran meanwhile"
    );
    ready.store(true, Ordering::SeqCst);
    assert_eq!(rx.await.unwrap(), 7);
    tokio::task::spawn_blocking(move || spinner.join().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_thread_sleeps_and_a_task_waits_for_it() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let sleeper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        tx.send("woke").unwrap();
    });
    assert_eq!(rx.await.unwrap(), "woke");
    tokio::task::spawn_blocking(move || sleeper.join().unwrap())
        .await
        .unwrap();
}

#[tokio::test]
async fn spawn_blocking_waits_on_a_channel_a_task_feeds() {
    let (tx, rx) = mpsc::channel::<u32>();
    let blocking = tokio::task::spawn_blocking(move || rx.recv().unwrap() * 2);
    tokio::spawn(async move {
        tokio::task::yield_now().await;
        tx.send(21).unwrap();
    });
    assert_eq!(blocking.await.unwrap(), 42);
}

#[tokio::test]
async fn a_spawn_blocking_closure_is_in_the_runtime_context() {
    let inner = tokio::task::spawn_blocking(|| {
        let handle = tokio::runtime::Handle::current();
        handle.block_on(async { tokio::spawn(async { 7 }).await.unwrap() })
    });
    assert_eq!(inner.await.unwrap(), 7);
}

/// hyper's own tests: a plain test starts a server on a thread of its own,
/// with its own runtime, and talks to it with blocking `std::net` calls and
/// `std::sync::mpsc`. On the simulator both threads are in the simulation
/// that the test's first thread starts.
#[test]
fn a_plain_tests_server_thread_answers_its_blocking_client() {
    use std::io::{Read, Write};
    let (addr_tx, addr_rx) = mpsc::channel();
    let (heard_tx, heard_rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4];
            stream.read_exact(&mut buf).await.unwrap();
            heard_tx.send(buf).unwrap();
            stream.write_all(b"pong").await.unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    let mut client = std::net::TcpStream::connect(addr).unwrap();
    client.write_all(b"ping").unwrap();
    let mut reply = [0u8; 4];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"pong");
    assert_eq!(&heard_rx.recv().unwrap(), b"ping");
    server.join().unwrap();
}
