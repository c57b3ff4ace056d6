//! tokio::runtime: builders, block_on, handles, entering and shutdown.

use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::{Builder, Handle, Runtime, RuntimeFlavor};

#[test]
fn current_thread_block_on_runs_spawned_tasks() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let handle = rt.spawn(async { 5 });
    let value = rt.block_on(async move { handle.await.unwrap() * 2 });
    assert_eq!(value, 10);
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
}

#[test]
fn multi_thread_runtime_works_and_reports_its_flavor() {
    let rt = Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("worker")
        .enable_all()
        .build()
        .unwrap();
    let flavor = rt.block_on(async { Handle::current().runtime_flavor() });
    assert_eq!(flavor, RuntimeFlavor::MultiThread);
    let v = rt.block_on(rt.spawn_blocking(|| 4)).unwrap();
    assert_eq!(v, 4);
}

#[test]
fn runtime_new_is_multi_thread() {
    let rt = Runtime::new().unwrap();
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::MultiThread);
    assert_eq!(rt.block_on(async { 1 }), 1);
}

#[test]
fn handle_current_outside_a_runtime_fails() {
    let err = Handle::try_current().unwrap_err();
    assert!(err.is_missing_context());
    assert!(!err.is_thread_local_destroyed());
    let message = std::panic::catch_unwind(Handle::current).unwrap_err();
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("must be called from the context of a Tokio 1.x runtime"),
        "{text}"
    );
}

#[test]
fn enter_makes_the_runtime_current() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    {
        let _guard = rt.enter();
        assert!(Handle::try_current().is_ok());
        // Spawning needs only the context; the task runs in block_on.
        let h = tokio::spawn(async { 3 });
        assert_eq!(rt.block_on(h).unwrap(), 3);
    }
    assert!(Handle::try_current().is_err());
}

#[test]
fn handle_spawn_and_block_on() {
    let rt = Builder::new_multi_thread().enable_all().build().unwrap();
    let handle = rt.handle().clone();
    let h = handle.spawn(async { 8 });
    assert_eq!(handle.block_on(h).unwrap(), 8);
    assert!(handle.metrics().num_workers() >= 1);
}

#[test]
#[should_panic(expected = "Cannot start a runtime from within a runtime")]
fn nested_block_on_panics() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let inner = Builder::new_current_thread().build().unwrap();
        inner.block_on(async {});
    });
}

#[test]
fn dropping_the_runtime_cancels_pending_tasks() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(async move {
        let _keep = tx;
        std::future::pending::<()>().await;
    });
    rt.block_on(tokio::task::yield_now());
    drop(rt);
    let rt2 = Builder::new_current_thread().build().unwrap();
    assert!(rt2.block_on(rx).is_err());
}

#[test]
fn shutdown_timeout_and_background() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.spawn(std::future::pending::<()>());
    rt.shutdown_timeout(Duration::from_millis(10));
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.spawn(std::future::pending::<()>());
    rt.shutdown_background();
}

/// A runtime built inside another's `block_on` may be shut down there
/// without waiting (unlike a drop, which would block).
#[test]
fn an_inner_runtime_shuts_down_inside_block_on() {
    let outer = Builder::new_current_thread().enable_all().build().unwrap();
    outer.block_on(async {
        let inner = Builder::new_current_thread().build().unwrap();
        inner.spawn(std::future::pending::<()>());
        inner.shutdown_timeout(Duration::ZERO);
        let inner = Builder::new_current_thread().build().unwrap();
        inner.spawn(std::future::pending::<()>());
        inner.shutdown_background();
    });
}

#[test]
fn a_panic_in_the_root_future_fails_block_on() {
    let rt = Builder::new_current_thread().build().unwrap();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async { panic!("root") })
    }));
    assert!(result.is_err());
}

#[test]
fn runtime_metrics_count_alive_tasks() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let _h = rt.spawn(std::future::pending::<()>());
    assert_eq!(rt.metrics().num_alive_tasks(), 1);
    assert_eq!(rt.metrics().num_workers(), 1);
}

#[tokio::main(flavor = "current_thread")]
async fn main_style() -> u32 {
    tokio::spawn(async { 9 }).await.unwrap()
}

#[test]
fn tokio_main_builds_a_runtime() {
    assert_eq!(main_style(), 9);
}

#[test]
fn local_runtime_runs_non_send_tasks() {
    let rt = tokio::runtime::LocalRuntime::new().unwrap();
    let shared = std::rc::Rc::new(std::cell::Cell::new(1));
    let s = shared.clone();
    let h = rt.spawn_local(async move {
        s.set(s.get() + 1);
        // spawn_local works inside, without a LocalSet.
        let s2 = s.clone();
        tokio::task::spawn_local(async move { s2.set(s2.get() * 10) })
            .await
            .unwrap();
    });
    rt.block_on(h).unwrap();
    assert_eq!(shared.get(), 20);
    assert_eq!(rt.handle().runtime_flavor(), RuntimeFlavor::CurrentThread);
}

#[test]
fn worker_index_is_some_inside_a_runtime() {
    assert_eq!(tokio::runtime::worker_index(), None);
    let rt = Builder::new_current_thread().build().unwrap();
    let index = rt.block_on(async { tokio::spawn(async { tokio::runtime::worker_index() }).await });
    assert_eq!(index.unwrap(), Some(0));
}

#[test]
fn local_set_ids_differ() {
    let a = tokio::task::LocalSet::new();
    let b = tokio::task::LocalSet::new();
    assert_ne!(a.id(), b.id());
}

#[test]
fn a_park_hook_runs_when_the_thread_has_nothing_to_do() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    // The only thing that can wake the test is the park hook: it runs each
    // time the thread parks, in the runtime's context.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(8);
    let parks = Arc::new(AtomicUsize::new(0));
    let unparks = Arc::new(AtomicUsize::new(0));
    let (p, u) = (parks.clone(), unparks.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(move || {
            let n = p.fetch_add(1, Ordering::SeqCst) as u32;
            let _ = tx.try_send(n);
        })
        .on_thread_unpark(move || {
            u.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let got = rt.block_on(async { rx.recv().await.unwrap() });
    assert_eq!(got, 0);
    assert!(parks.load(Ordering::SeqCst) >= 1);
    assert!(unparks.load(Ordering::SeqCst) >= 1);
}

#[test]
fn thread_start_and_stop_hooks_run_once_for_one_worker() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let starts = Arc::new(AtomicUsize::new(0));
    let stops = Arc::new(AtomicUsize::new(0));
    let (a, b) = (starts.clone(), stops.clone());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .on_thread_start(move || {
            a.fetch_add(1, Ordering::SeqCst);
        })
        .on_thread_stop(move || {
            b.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::spawn(async {}).await.unwrap();
    });
    assert_eq!(starts.load(Ordering::SeqCst), 1);
    drop(rt);
    assert_eq!(stops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_handle_outlives_its_runtime_as_in_tokio() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let handle = rt.handle().clone();
    drop(rt);
    // A future that needs no driver still runs.
    assert_eq!(handle.block_on(async { 5 }), 5);
    let (tx, rx) = tokio::sync::oneshot::channel();
    tx.send(6).unwrap();
    assert_eq!(handle.block_on(rx).unwrap(), 6);
    // A task spawned now is cancelled at once.
    let task = handle.spawn(async { 1 });
    assert!(handle.block_on(task).unwrap_err().is_cancelled());
    // Metrics still answer.
    assert_eq!(handle.metrics().num_alive_tasks(), 0);
    assert_eq!(handle.metrics().num_workers(), 1);
}

#[test]
#[should_panic(expected = "timers are disabled")]
fn a_timer_without_enable_time_panics() {
    let rt = Builder::new_current_thread().build().unwrap();
    rt.block_on(async { tokio::time::sleep(Duration::from_millis(1)).await });
}

#[test]
#[should_panic(expected = "IO is disabled")]
fn a_socket_without_enable_io_panics() {
    let rt = Builder::new_current_thread().enable_time().build().unwrap();
    rt.block_on(async {
        let _ = tokio::net::TcpListener::bind("127.0.0.1:0").await;
    });
}

#[test]
#[should_panic(expected = "dropped out of order")]
fn enter_guards_dropped_out_of_order_panic() {
    let a = Builder::new_current_thread().build().unwrap();
    let b = Builder::new_current_thread().build().unwrap();
    let first = a.enter();
    let second = b.enter();
    drop(first);
    drop(second);
}

#[test]
#[should_panic(expected = "event_interval must be greater than 0")]
fn an_event_interval_of_zero_panics() {
    Builder::new_current_thread().event_interval(0);
}

#[test]
#[should_panic(expected = "Cannot drop a runtime in a context where blocking is not allowed")]
fn dropping_a_runtime_inside_a_runtime_panics() {
    let outer = Builder::new_current_thread().build().unwrap();
    let inner = Builder::new_current_thread().build().unwrap();
    outer.block_on(async move { drop(inner) });
}

#[test]
#[should_panic(expected = "can call blocking only when running on the multi-threaded runtime")]
fn block_in_place_inside_a_local_set_panics() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async {
        tokio::task::spawn_local(async { tokio::task::block_in_place(|| ()) })
            .await
            .unwrap();
    });
}

#[test]
fn block_on_inside_block_in_place_and_spawn_blocking_works() {
    let rt = Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(async {
        let handle = Handle::current();
        // The same runtime, from a blocking section of one of its tasks.
        let value = tokio::spawn(async move {
            tokio::task::block_in_place(|| {
                handle.block_on(async {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    3
                })
            })
        })
        .await
        .unwrap();
        // A runtime of its own, inside a blocking section.
        let other = tokio::task::block_in_place(|| {
            let inner = Builder::new_current_thread().enable_all().build().unwrap();
            let got = inner.block_on(async { 4 });
            drop(inner);
            got
        });
        // And from spawn_blocking.
        let handle = Handle::current();
        let blocking = tokio::task::spawn_blocking(move || handle.block_on(async { 5 }))
            .await
            .unwrap();
        value + other + blocking
    });
    assert_eq!(out, 12);
}

#[tokio::test]
async fn invalid_signal_numbers_are_refused() {
    use tokio::signal::unix::{signal, SignalKind};
    for signum in [0, -1, libc::SIGKILL, libc::SIGSTOP, libc::SIGSEGV] {
        let error = signal(SignalKind::from_raw(signum)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("Refusing to register signal {signum}")
        );
    }
    for signum in [libc::SIGRTMAX() + 1, 1000] {
        let error = signal(SignalKind::from_raw(signum)).unwrap_err();
        assert_eq!(error.to_string(), "signal too large");
    }
    assert!(signal(SignalKind::from_raw(libc::SIGRTMAX())).is_ok());
}

#[tokio::test]
async fn a_signal_the_process_sends_itself_reaches_its_handler() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
    // SAFETY: kill and raise of the process's own pid, with a handled signal.
    assert_eq!(unsafe { libc::kill(libc::getpid(), libc::SIGUSR1) }, 0);
    tokio::time::timeout(Duration::from_secs(5), usr1.recv())
        .await
        .expect("the signal arrives")
        .unwrap();
    // SAFETY: as above: a handled signal raised in this process.
    assert_eq!(unsafe { libc::raise(libc::SIGUSR1) }, 0);
    tokio::time::timeout(Duration::from_secs(5), usr1.recv())
        .await
        .expect("the raised signal arrives")
        .unwrap();
}

/// A realtime signal the process sends itself reaches its stream.
#[tokio::test]
async fn a_realtime_signal_reaches_its_stream() {
    use tokio::signal::unix::{signal, SignalKind};
    let signum = libc::SIGRTMIN() + 3;
    let mut rt = signal(SignalKind::from_raw(signum)).unwrap();
    // SAFETY: kill of the process's own pid with a signal it handles.
    assert_eq!(unsafe { libc::kill(libc::getpid(), signum) }, 0);
    tokio::time::timeout(Duration::from_secs(5), rt.recv())
        .await
        .expect("the realtime signal arrives")
        .unwrap();
}

/// A signal sent from outside any `block_on` reaches the streams of the
/// thread's runtimes.
#[test]
fn a_signal_sent_between_block_ons_reaches_the_runtime() {
    use tokio::signal::unix::{signal, SignalKind};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let signum = libc::SIGRTMIN() + 4;
    let mut stream = rt.block_on(async { signal(SignalKind::from_raw(signum)).unwrap() });
    // SAFETY: kill of the process's own pid with a signal it handles.
    assert_eq!(unsafe { libc::kill(libc::getpid(), signum) }, 0);
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), stream.recv())
            .await
            .expect("the signal arrives")
            .unwrap();
    });
}

/// `EnterGuard` has no `Drop` of its own, as in tokio: the runtime it
/// borrows can be moved while the guard is still in scope (tokio's
/// `rt_handle_block_on` does this).
#[test]
fn a_runtime_moves_while_its_enter_guard_is_in_scope() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _enter = rt.enter();
    let handle = tokio::runtime::Handle::current();
    let moved = rt;
    assert_eq!(moved.block_on(async { 5 }), 5);
    drop(handle);
}

#[test]
fn park_counts_outlive_the_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let metrics = rt.metrics();
    rt.block_on(async { tokio::time::sleep(std::time::Duration::from_millis(1)).await });
    drop(rt);
    assert!(metrics.worker_park_count(0) >= 1);
    // Each park ended: parks and unparks pair up.
    assert_eq!(metrics.worker_park_unpark_count(0) % 2, 0);
}

#[test]
fn a_worker_is_busy_while_it_polls_and_its_busy_time_outlives_the_runtime() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let metrics = rt.metrics();
    rt.block_on(async {
        for _ in 0..5 {
            tokio::spawn(async { tokio::task::yield_now().await })
                .await
                .unwrap();
        }
    });
    let busy = metrics.worker_total_busy_duration(0);
    assert!(busy > std::time::Duration::ZERO);
    drop(rt);
    assert!(metrics.worker_total_busy_duration(0) >= busy);
}

#[test]
fn time_passes_between_two_reads_of_a_clock_that_is_not_paused() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let start = tokio::time::Instant::now();
        tokio::time::pause();
        let paused_at = tokio::time::Instant::now();
        assert!(paused_at > start, "pausing reads the clock a little later");
        tokio::time::advance(std::time::Duration::from_secs(1)).await;
        assert!(tokio::time::Instant::now() - start > std::time::Duration::from_secs(1));
        tokio::time::resume();
        let resumed = tokio::time::Instant::now();
        assert!(tokio::time::Instant::now() > resumed);
    });
}

#[test]
fn a_sleep_ends_after_its_deadline_on_a_clock_that_is_not_paused() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let start = std::time::Instant::now();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(start.elapsed() > std::time::Duration::from_millis(20));
    });
}

#[test]
fn a_task_spawned_outside_block_on_waits_in_the_global_queue() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let metrics = rt.metrics();
    assert_eq!(metrics.global_queue_depth(), 0);
    let task = rt.handle().spawn(async {});
    assert_eq!(metrics.global_queue_depth(), 1);
    rt.block_on(task).unwrap();
    assert_eq!(metrics.global_queue_depth(), 0);
}
