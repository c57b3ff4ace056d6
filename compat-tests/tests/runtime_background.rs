//! A runtime's work while the thread that built it is outside `block_on`:
//! a `multi_thread` runtime's tasks and the process's threads run while
//! that thread waits on a `std` channel, joins or blocks in a tokio
//! blocking call; a shutdown waits for the blocking pool. Each test passes
//! on real tokio and on the facade.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn tasks_of_a_multi_thread_runtime_run_while_the_builder_waits_on_a_std_channel() {
    let rt = multi_thread();
    let (tx, rx) = mpsc::channel();
    let count = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let count = count.clone();
        let tx = tx.clone();
        rt.spawn(async move {
            if count.fetch_add(1, Ordering::SeqCst) + 1 == 100 {
                tx.send(()).unwrap();
            }
        });
    }
    rx.recv().unwrap();
    assert_eq!(count.load(Ordering::SeqCst), 100);
}

#[test]
fn a_timer_fires_while_the_builder_waits_on_a_std_channel() {
    let rt = multi_thread();
    let (tx, rx) = mpsc::channel();
    rt.spawn(async move {
        let start = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(10)).await;
        tx.send(start.elapsed()).unwrap();
    });
    assert!(rx.recv().unwrap() >= Duration::from_millis(10));
}

#[test]
fn a_thread_started_before_block_on_spawns_onto_the_runtime() {
    let rt = multi_thread();
    let handle = rt.handle().clone();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let thread = std::thread::spawn(move || {
        handle.spawn(async move { tx.send(7).unwrap() });
    });
    assert_eq!(rt.block_on(rx).unwrap(), 7);
    thread.join().unwrap();
}

#[test]
fn a_blocking_recv_on_the_builder_waits_for_a_task() {
    let rt = multi_thread();
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    rt.spawn(async move { tx.send(5).await.unwrap() });
    assert_eq!(rx.blocking_recv(), Some(5));
}

#[test]
fn a_blocking_recv_on_a_std_thread_waits_for_the_sender() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u8>(1);
    let receiver = std::thread::spawn(move || rx.blocking_recv());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async move { tx.send(9).await.unwrap() });
    assert_eq!(receiver.join().unwrap(), Some(9));
}

#[test]
fn shutdown_timeout_waits_for_the_blocking_pool_and_its_output_stays() {
    let rt = multi_thread();
    let _enter = rt.enter();
    let handle = tokio::task::spawn_blocking(|| {
        std::thread::sleep(Duration::from_millis(20));
        42
    });
    rt.shutdown_timeout(Duration::from_secs(100));
    let answer = tokio::runtime::Handle::current().block_on(handle).unwrap();
    assert_eq!(answer, 42);
}

#[test]
fn spawn_blocking_after_shutdown_is_cancelled() {
    let rt = multi_thread();
    let _enter = rt.enter();
    rt.shutdown_timeout(Duration::from_secs(100));
    let err = tokio::runtime::Handle::current()
        .block_on(tokio::task::spawn_blocking(|| 1))
        .unwrap_err();
    assert!(err.is_cancelled());
}

#[test]
#[should_panic(expected = "A Tokio 1.x context was found, but it is being shutdown.")]
fn a_sleep_after_shutdown_panics() {
    let rt = multi_thread();
    let _enter = rt.enter();
    rt.shutdown_timeout(Duration::from_secs(100));
    tokio::runtime::Handle::current().block_on(tokio::time::sleep(Duration::from_millis(1)));
}

#[test]
fn a_file_operation_after_shutdown_fails() {
    let rt = multi_thread();
    let _enter = rt.enter();
    rt.shutdown_timeout(Duration::from_secs(100));
    let err = tokio::runtime::Handle::current()
        .block_on(tokio::fs::read_to_string("Cargo.toml"))
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::Other);
    assert_eq!(err.get_ref().unwrap().to_string(), "background task failed");
}

#[test]
fn block_in_place_runs_in_a_handle_block_on_of_a_current_thread_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let value = rt
        .handle()
        .block_on(async { tokio::task::block_in_place(|| 3) });
    assert_eq!(value, 3);
}

#[test]
fn a_thread_outlives_the_runtime_that_was_alive_when_it_started() {
    let rt = multi_thread();
    let thread = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(5));
        42
    });
    drop(rt);
    assert_eq!(thread.join().unwrap(), 42);
}
