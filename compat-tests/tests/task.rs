//! tokio::task: spawning, joining, cancelling, local sets and task-locals.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::{self, JoinSet, LocalSet};

#[tokio::test]
async fn spawn_and_join() {
    let handle = tokio::spawn(async { 40 + 2 });
    assert_eq!(handle.await.unwrap(), 42);
}

#[tokio::test]
async fn many_tasks_all_complete() {
    let counter = Arc::new(AtomicUsize::new(0));
    let handles: Vec<_> = (0..100)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                task::yield_now().await;
                counter.fetch_add(1, Ordering::SeqCst);
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(counter.load(Ordering::SeqCst), 100);
}

#[tokio::test]
async fn a_panic_reaches_the_join_handle() {
    let handle = tokio::spawn(async {
        panic!("boom");
    });
    let err = handle.await.unwrap_err();
    assert!(err.is_panic());
    assert!(!err.is_cancelled());
    let id = err.id();
    let payload = err.into_panic();
    assert_eq!(*payload.downcast_ref::<&str>().unwrap(), "boom");
    let _ = id;
}

#[tokio::test(start_paused = true)]
async fn abort_cancels_a_pending_task() {
    let handle = tokio::spawn(async {
        tokio::time::sleep(Duration::from_secs(60)).await;
        1
    });
    let abort = handle.abort_handle();
    assert!(!abort.is_finished());
    abort.abort();
    let err = handle.await.unwrap_err();
    assert!(err.is_cancelled());
    assert!(!err.is_panic());
    assert!(err.to_string().contains("was cancelled"), "{err}");
    assert!(err.try_into_panic().is_err());
}

#[tokio::test]
async fn abort_after_completion_keeps_the_output() {
    let handle = tokio::spawn(async { 7 });
    while !handle.is_finished() {
        task::yield_now().await;
    }
    handle.abort();
    assert_eq!(handle.await.unwrap(), 7);
}

#[tokio::test]
async fn dropping_a_join_handle_detaches_the_task() {
    let (tx, rx) = tokio::sync::oneshot::channel();
    drop(tokio::spawn(async move {
        task::yield_now().await;
        tx.send(5).unwrap();
    }));
    assert_eq!(rx.await.unwrap(), 5);
}

#[tokio::test]
async fn task_ids_are_distinct_and_visible_inside() {
    let a = tokio::spawn(async { task::id() });
    let b = tokio::spawn(async { task::try_id() });
    let (a_id, b_id) = (a.id(), b.id());
    assert_ne!(a_id, b_id);
    assert_eq!(a.await.unwrap(), a_id);
    assert_eq!(b.await.unwrap(), Some(b_id));
}

#[test]
fn try_id_is_none_outside_a_task() {
    assert!(task::try_id().is_none());
}

#[tokio::test]
async fn spawn_blocking_returns_its_value() {
    let v = task::spawn_blocking(|| (1..=10).sum::<u32>())
        .await
        .unwrap();
    assert_eq!(v, 55);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_in_place_runs_on_multi_thread() {
    let v = task::block_in_place(|| 3 * 3);
    assert_eq!(v, 9);
}

#[tokio::test]
#[should_panic(expected = "can call blocking only when running on the multi-threaded runtime")]
async fn block_in_place_panics_on_current_thread() {
    task::block_in_place(|| ());
}

#[tokio::test]
async fn yield_now_lets_other_tasks_run() {
    let flag = Arc::new(AtomicUsize::new(0));
    let f = flag.clone();
    let handle = tokio::spawn(async move {
        f.store(1, Ordering::SeqCst);
    });
    // Yield until the spawned task has run (bounded).
    for _ in 0..1000 {
        if flag.load(Ordering::SeqCst) == 1 {
            break;
        }
        task::yield_now().await;
    }
    assert_eq!(flag.load(Ordering::SeqCst), 1);
    handle.await.unwrap();
}

#[tokio::test]
async fn yield_now_goes_behind_every_task_that_was_ready() {
    // Four tasks are ready when the test yields: all run before it resumes.
    let ran = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..4 {
        let ran = ran.clone();
        handles.push(tokio::spawn(async move {
            ran.fetch_add(1, Ordering::SeqCst);
        }));
    }
    task::yield_now().await;
    assert_eq!(ran.load(Ordering::SeqCst), 4);
    // A task that yields resumes after the tasks ready when it did.
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for name in ["a", "b", "c"] {
        let order = order.clone();
        handles.push(tokio::spawn(async move {
            order.lock().unwrap().push(format!("{name}1"));
            task::yield_now().await;
            order.lock().unwrap().push(format!("{name}2"));
        }));
    }
    for handle in handles {
        handle.await.unwrap();
    }
    let order = order.lock().unwrap();
    let firsts = order.iter().take(3).filter(|s| s.ends_with('1')).count();
    assert_eq!(
        firsts, 3,
        "each task yielded after every first step: {order:?}"
    );
}

#[tokio::test]
async fn join_set_joins_everything() {
    let mut set = JoinSet::new();
    for i in 0..10u32 {
        set.spawn(async move {
            task::yield_now().await;
            i
        });
    }
    assert_eq!(set.len(), 10);
    let mut seen = Vec::new();
    while let Some(result) = set.join_next().await {
        seen.push(result.unwrap());
    }
    seen.sort();
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
    assert!(set.is_empty());
    assert!(set.join_next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn join_set_returns_in_completion_order() {
    let mut set = JoinSet::new();
    for secs in [3u64, 1, 2] {
        set.spawn(async move {
            tokio::time::sleep(Duration::from_secs(secs)).await;
            secs
        });
    }
    let mut order = Vec::new();
    while let Some(r) = set.join_next_with_id().await {
        order.push(r.unwrap().1);
    }
    assert_eq!(order, vec![1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn join_set_abort_all_and_shutdown() {
    let mut set = JoinSet::new();
    for _ in 0..5 {
        set.spawn(async {
            tokio::time::sleep(Duration::from_secs(100)).await;
        });
    }
    set.abort_all();
    let mut cancelled = 0;
    while let Some(r) = set.join_next().await {
        assert!(r.unwrap_err().is_cancelled());
        cancelled += 1;
    }
    assert_eq!(cancelled, 5);

    set.spawn(std::future::pending::<()>());
    set.shutdown().await;
    assert!(set.is_empty());
}

#[tokio::test]
async fn join_set_try_join_next_and_join_all() {
    let mut set = JoinSet::new();
    assert!(set.try_join_next().is_none());
    set.spawn(async { 1 });
    set.spawn_blocking(|| 2);
    let mut all = set.join_all().await;
    all.sort();
    assert_eq!(all, vec![1, 2]);

    let set: JoinSet<u8> = (0..3u8).map(|i| async move { i }).collect();
    assert_eq!(set.len(), 3);
}

#[tokio::test]
async fn join_set_drop_aborts_its_tasks() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let mut set = JoinSet::new();
    set.spawn(async move {
        let _keep = tx;
        std::future::pending::<()>().await;
    });
    drop(set);
    // The task was aborted, so its sender was dropped.
    assert!(rx.await.is_err());
}

#[tokio::test]
async fn local_set_runs_non_send_tasks() {
    let local = LocalSet::new();
    let out = local
        .run_until(async {
            let rc = std::rc::Rc::new(5);
            let rc2 = rc.clone();
            let h = task::spawn_local(async move { *rc2 + 1 });
            h.await.unwrap() + *rc
        })
        .await;
    assert_eq!(out, 11);
}

#[test]
fn local_set_block_on_and_await() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = LocalSet::new();
    let count = std::rc::Rc::new(std::cell::Cell::new(0));
    local.block_on(&rt, async {
        let c = count.clone();
        task::spawn_local(async move { c.set(c.get() + 1) });
    });
    let c = count.clone();
    rt.block_on(async {
        local.spawn_local(async move {
            c.set(c.get() + 10);
        });
        local.await;
    });
    assert_eq!(count.get(), 11);
}

#[test]
#[should_panic(expected = "`spawn_local` called from outside of a `task::LocalSet`")]
fn spawn_local_outside_a_local_set_panics() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        task::spawn_local(async {});
    });
}

tokio::task_local! {
    static REQUEST_ID: u32;
    static NAME: String;
}

#[tokio::test]
async fn task_locals_are_scoped() {
    assert!(REQUEST_ID.try_with(|v| *v).is_err());
    let inner = REQUEST_ID
        .scope(7, async {
            task::yield_now().await;
            REQUEST_ID.get()
        })
        .await;
    assert_eq!(inner, 7);
    let nested = NAME
        .scope("a".to_string(), async {
            let outer = NAME.with(|n| n.clone());
            let inner = NAME.sync_scope("b".to_string(), || NAME.get());
            (outer, inner, NAME.get())
        })
        .await;
    assert_eq!(nested, ("a".into(), "b".into(), "a".into()));
    assert!(REQUEST_ID.try_get().is_err());
}

#[tokio::test]
async fn task_locals_follow_their_task() {
    let a = tokio::spawn(REQUEST_ID.scope(1, async {
        task::yield_now().await;
        REQUEST_ID.get()
    }));
    let b = tokio::spawn(REQUEST_ID.scope(2, async {
        task::yield_now().await;
        REQUEST_ID.get()
    }));
    assert_eq!(a.await.unwrap(), 1);
    assert_eq!(b.await.unwrap(), 2);
}

#[tokio::test]
async fn consume_budget_and_unconstrained() {
    for _ in 0..300 {
        task::consume_budget().await;
    }
    let v = task::unconstrained(async { 3 }).await;
    assert_eq!(v, 3);
}

#[tokio::test]
async fn join_error_converts_to_io_error() {
    let err = tokio::spawn(async { panic!("x") }).await.unwrap_err();
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::Other);
}

#[tokio::test]
async fn cooperative_futures_and_poll_proceed() {
    let v = task::coop::cooperative(async { 2 }).await;
    assert_eq!(v, 2);
    let mut progressed = 0;
    for _ in 0..200 {
        std::future::poll_fn(|cx| {
            let guard = std::task::ready!(task::coop::poll_proceed(cx));
            guard.made_progress();
            std::task::Poll::Ready(())
        })
        .await;
        progressed += 1;
    }
    assert_eq!(progressed, 200);
    assert!(task::coop::has_budget_remaining());
}

/// Runs `$step` in a loop until a task spawned first has run: the loop
/// must yield through the cooperative budget, as in tokio. Fails (instead
/// of hanging) if it never does.
macro_rules! yields_through_the_budget {
    ($step:expr) => {{
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let r = ran.clone();
        tokio::spawn(async move { r.store(true, Ordering::SeqCst) });
        let mut turns = 0;
        while !ran.load(Ordering::SeqCst) {
            $step;
            turns += 1;
            assert!(turns < 100_000, "the loop never yielded to the other task");
        }
    }};
}

#[tokio::test]
async fn copying_ready_streams_in_a_loop_yields() {
    yields_through_the_budget!({
        let mut src: &[u8] = b"abc";
        let mut dst = Vec::new();
        tokio::io::copy(&mut src, &mut dst).await.unwrap();
        assert_eq!(dst, b"abc");
    });
}

#[tokio::test]
async fn reading_io_empty_in_a_loop_yields() {
    use tokio::io::AsyncReadExt;
    yields_through_the_budget!({
        let mut buf = [0u8; 4];
        assert_eq!(tokio::io::empty().read(&mut buf).await.unwrap(), 0);
    });
}

#[tokio::test]
async fn watch_wait_for_and_closed_in_a_loop_yield() {
    let (tx, mut rx) = tokio::sync::watch::channel(1u8);
    yields_through_the_budget!({
        assert_eq!(*rx.wait_for(|v| *v == 1).await.unwrap(), 1);
    });
    drop(rx);
    yields_through_the_budget!(tx.closed().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn block_in_place_lifts_the_budget() {
    // Spend the whole budget without yielding.
    std::future::poll_fn(|cx| loop {
        match task::coop::poll_proceed(cx) {
            std::task::Poll::Ready(guard) => guard.made_progress(),
            std::task::Poll::Pending => return std::task::Poll::Ready(()),
        }
    })
    .await;
    assert!(!task::coop::has_budget_remaining());
    assert!(task::block_in_place(task::coop::has_budget_remaining));
}

/// Sets its flag when dropped.
struct DropFlag(Arc<std::sync::atomic::AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
async fn a_panicking_tasks_future_is_dropped_at_once() {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = DropFlag(dropped.clone());
    let handle = tokio::spawn(async move {
        let _flag = flag;
        panic!("planted");
    });
    // The task ran and panicked: its future (and what it held) is gone
    // before anyone joins it.
    while !handle.is_finished() {
        task::yield_now().await;
    }
    assert!(dropped.load(Ordering::SeqCst));
    assert!(handle.await.unwrap_err().is_panic());
}

/// Panics when dropped.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic!("dropping the output panics");
    }
}

#[tokio::test]
async fn a_panic_while_dropping_a_tasks_output_stays_in_the_runtime() {
    let handle = tokio::spawn(async { PanicsOnDrop });
    while !handle.is_finished() {
        task::yield_now().await;
    }
    // Dropping the handle drops the output, whose panic does not reach here.
    drop(handle);
    task::yield_now().await;
}

/// Records the task id current when it is dropped.
struct RecordsId(Arc<std::sync::Mutex<Option<task::Id>>>);

impl Drop for RecordsId {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = task::try_id();
    }
}

#[tokio::test]
async fn task_id_is_known_while_a_detached_tasks_output_drops() {
    let seen = Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        let _ = rx.await;
        RecordsId(s)
    });
    let id = handle.id();
    // Detached: the runtime drops the output when the task ends.
    drop(handle);
    tx.send(()).unwrap();
    for _ in 0..10 {
        task::yield_now().await;
    }
    assert_eq!(*seen.lock().unwrap(), Some(id));
}

#[test]
fn a_local_set_is_made_and_spawned_on_before_any_runtime() {
    let local = LocalSet::new();
    let handle = local.spawn_local(async { 7 });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = local.block_on(&rt, async { handle.await.unwrap() });
    assert_eq!(out, 7);
}

#[tokio::test]
async fn join_polls_a_different_future_first_each_time() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let step = |x: u8, order: Arc<std::sync::Mutex<Vec<u8>>>| async move {
        for _ in 0..4 {
            order.lock().unwrap().push(x);
            task::yield_now().await;
        }
    };
    tokio::join!(
        step(1, order.clone()),
        step(2, order.clone()),
        step(3, order.clone())
    );
    assert_eq!(*order.lock().unwrap(), [1, 2, 3, 2, 3, 1, 3, 1, 2, 1, 2, 3]);
}

#[tokio::test]
#[should_panic(
    expected = "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
)]
async fn spawn_local_outside_a_local_set_panics_with_tokios_message() {
    drop(task::spawn_local(async {}));
}

/// A `LocalSet` drops its tasks inside its own context: a task's drop that
/// calls `block_in_place` is refused there, and its join handle reports
/// that panic.
#[tokio::test(flavor = "multi_thread")]
async fn a_local_sets_tasks_drop_inside_its_context() {
    struct BlockInPlaceOnDrop;
    impl std::future::Future for BlockInPlaceOnDrop {
        type Output = ();
        fn poll(
            self: std::pin::Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<()> {
            std::task::Poll::Pending
        }
    }
    impl Drop for BlockInPlaceOnDrop {
        fn drop(&mut self) {
            task::block_in_place(|| {});
        }
    }
    let local = LocalSet::new();
    let handle = local.spawn_local(BlockInPlaceOnDrop);
    local.run_until(task::yield_now()).await;
    drop(local);
    let error = handle.await.unwrap_err();
    assert!(error.is_panic());
    let payload = error.into_panic();
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        message.contains("can call blocking only when running on the multi-threaded runtime"),
        "{message}"
    );
}
