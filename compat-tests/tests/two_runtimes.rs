//! Two runtimes alive at once: a future under another runtime's handle uses
//! that runtime's drivers, each runtime keeps its own tasks, handle and
//! shutdown, and a `current_thread` runtime's tasks run only while it is
//! blocked on. In a simulation both share one clock and one event queue.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::runtime::{Builder, Handle, Runtime};
use tokio_util::context::RuntimeExt;

fn multi(enable_all: bool) -> Runtime {
    let mut builder = Builder::new_multi_thread();
    builder.worker_threads(1);
    if enable_all {
        builder.enable_all();
    }
    builder.build().unwrap()
}

fn paused() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn a_future_wrapped_in_another_runtime_uses_its_timer() {
    let without_timer = multi(false);
    let with_timer = multi(true);
    // The first runtime has no timer; the future sleeps on the second's.
    without_timer.block_on(with_timer.wrap(async {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }));
}

#[test]
fn each_runtime_has_its_own_handle() {
    let first = multi(true);
    let second = multi(true);
    let (one, two) = (first.handle().id(), second.handle().id());
    assert_ne!(one, two);
    let inside = first.block_on(second.wrap(async { Handle::current().id() }));
    assert_eq!(inside, two);
    let spawned = first.block_on(async { second.spawn(async { Handle::current().id() }).await });
    assert_eq!(spawned.unwrap(), two);
    assert_eq!(first.block_on(async { Handle::current().id() }), one);
}

#[test]
fn a_server_on_one_runtime_answers_a_client_on_another() {
    let server = multi(true);
    let listener = server
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    server.spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 5];
        stream.read_exact(&mut buf).await.unwrap();
        stream.write_all(&buf).await.unwrap();
    });
    let client = paused();
    let echoed = client.block_on(async {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        stream.read_exact(&mut buf).await.unwrap();
        buf
    });
    assert_eq!(&echoed, b"hello");
}

#[test]
fn dropping_one_runtime_cancels_only_its_tasks() {
    let staying = multi(true);
    let leaving = multi(true);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    leaving.spawn(async move {
        let _tx = tx;
        std::future::pending::<()>().await;
    });
    let survivor = staying.spawn(std::future::pending::<()>());
    assert_eq!(staying.metrics().num_alive_tasks(), 1);
    drop(leaving);
    // The task's sender went with its runtime.
    assert!(staying.block_on(rx).is_err());
    assert!(!survivor.is_finished());
    assert_eq!(staying.metrics().num_alive_tasks(), 1);
}

/// A runtime dropped on another thread shuts down as on its own: its
/// tasks are cancelled, and a wait on one of its sockets, blocked on
/// outside it, ends with the shutdown error.
#[test]
fn a_runtime_dropped_on_another_thread_shuts_down() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(async move {
        let _tx = tx;
        std::future::pending::<()>().await;
    });
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    std::thread::spawn(move || drop(rt)).join().unwrap();
    // The task's sender went with its runtime.
    assert!(futures::executor::block_on(rx).is_err());
    let error = futures::executor::block_on(listener.accept()).unwrap_err();
    assert!(tokio::runtime::is_rt_shutdown_err(&error), "{error}");
}

#[test]
fn a_current_thread_runtimes_tasks_run_only_while_it_is_blocked_on() {
    let driver = paused();
    let idle = Builder::new_current_thread().enable_all().build().unwrap();
    let ran = Arc::new(AtomicBool::new(false));
    let flag = ran.clone();
    idle.spawn(async move { flag.store(true, Ordering::SeqCst) });
    driver.block_on(async { tokio::time::sleep(Duration::from_millis(10)).await });
    assert!(
        !ran.load(Ordering::SeqCst),
        "ran while another runtime was driven"
    );
    idle.block_on(tokio::task::yield_now());
    assert!(ran.load(Ordering::SeqCst));
}

/// Runtimes alive together, blocked on one after another: each one's
/// timeout expires in its own `block_on`.
#[test]
fn timeouts_expire_on_each_of_several_live_runtimes() {
    let runtimes = [
        Builder::new_current_thread().enable_all().build().unwrap(),
        multi(true),
        Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap(),
    ];
    for rt in &runtimes {
        rt.block_on(async {
            let (_tx, rx) = tokio::sync::oneshot::channel::<()>();
            let start = tokio::time::Instant::now();
            let waited = tokio::time::timeout(Duration::from_millis(10), rx).await;
            assert!(waited.is_err());
            assert!(tokio::time::Instant::now() >= start + Duration::from_millis(10));
        });
    }
}
