//! tokio::sync semantics that must match tokio exactly: waiter order,
//! close behaviour, broadcast lag counts, watch versions, cancel safety.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{
    broadcast, mpsc, watch, Barrier, Mutex, Notify, OnceCell, RwLock, Semaphore, SetOnce,
};
use tokio::time::sleep;

/// Spawns `n` tasks that queue up in index order (10 ms apart) on `op`, and
/// returns the order in which they got through.
async fn arrival_order<F, Fut>(n: u64, op: F) -> Vec<u64>
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = u64> + Send + 'static,
{
    let mut handles = Vec::new();
    for i in 0..n {
        let fut = op(i);
        handles.push(tokio::spawn(async move {
            sleep(Duration::from_millis(10 * i)).await;
            fut.await
        }));
    }
    let mut done = Vec::new();
    for h in handles {
        done.push(h.await.unwrap());
    }
    done
}

#[tokio::test(start_paused = true)]
async fn semaphore_serves_in_fifo_order_and_big_requests_are_not_overtaken() {
    // Waiters keep what they get, so each added permit can go to one
    // waiter only: the order of grants is observed, not the order in which
    // woken tasks happen to run (that is the scheduler's choice).
    let sem = Arc::new(Semaphore::new(0));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut handles = Vec::new();
    for (i, n) in [(0u64, 3u32), (1, 1), (2, 1)] {
        let sem = sem.clone();
        let order = order.clone();
        handles.push(tokio::spawn(async move {
            sleep(Duration::from_millis(10 * i)).await;
            sem.acquire_many(n).await.unwrap().forget();
            order.lock().unwrap().push(i);
        }));
    }
    sleep(Duration::from_millis(100)).await;
    // Two permits: not enough for the head (3), and the small ones behind
    // it must not jump the queue.
    sem.add_permits(2);
    sleep(Duration::from_millis(10)).await;
    assert!(order.lock().unwrap().is_empty());
    for expected in [vec![0], vec![0, 1], vec![0, 1, 2]] {
        sem.add_permits(1);
        sleep(Duration::from_millis(10)).await;
        assert_eq!(*order.lock().unwrap(), expected);
    }
    for h in handles {
        h.await.unwrap();
    }
}

#[tokio::test(start_paused = true)]
async fn semaphore_permits_close_and_forget() {
    let sem = Semaphore::new(3);
    let mut a = sem.acquire_many(2).await.unwrap();
    assert_eq!(a.num_permits(), 2);
    let b = a.split(1).unwrap();
    assert_eq!((a.num_permits(), b.num_permits()), (1, 1));
    a.merge(b);
    assert_eq!(sem.available_permits(), 1);
    a.forget();
    assert_eq!(sem.available_permits(), 1);
    assert_eq!(sem.forget_permits(5), 1);
    assert_eq!(
        sem.try_acquire().unwrap_err(),
        tokio::sync::TryAcquireError::NoPermits
    );
    sem.close();
    assert!(sem.is_closed());
    assert!(sem.acquire().await.is_err());
    assert_eq!(
        sem.try_acquire().unwrap_err(),
        tokio::sync::TryAcquireError::Closed
    );

    let owned = Arc::new(Semaphore::new(1));
    let permit = owned.clone().acquire_owned().await.unwrap();
    assert!(owned.clone().try_acquire_owned().is_err());
    drop(permit);
    assert!(owned.try_acquire_owned().is_ok());
}

#[tokio::test(start_paused = true)]
async fn a_dropped_acquire_does_not_wedge_the_next_waiter() {
    let sem = Arc::new(Semaphore::new(0));
    let s1 = sem.clone();
    let quitter = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_millis(5), s1.acquire())
            .await
            .is_err()
    });
    let s2 = sem.clone();
    let stayer = tokio::spawn(async move {
        sleep(Duration::from_millis(1)).await;
        s2.acquire().await.unwrap().forget();
        true
    });
    assert!(quitter.await.unwrap(), "the first waiter timed out");
    sem.add_permits(1);
    assert!(stayer.await.unwrap());
    assert_eq!(sem.available_permits(), 0, "the permit was not lost");
}

#[tokio::test(start_paused = true)]
async fn rwlock_a_waiting_writer_blocks_later_readers() {
    let lock = Arc::new(RwLock::new(0));
    let first_reader = lock.clone().read_owned().await;
    let l = lock.clone();
    let writer = tokio::spawn(async move {
        sleep(Duration::from_millis(1)).await;
        *l.write().await += 1;
    });
    sleep(Duration::from_millis(5)).await;
    // The writer waits behind the first reader; a new reader waits behind
    // the writer, so it sees the write.
    assert!(lock.try_read().is_err());
    let l = lock.clone();
    let late_reader = tokio::spawn(async move { *l.read().await });
    sleep(Duration::from_millis(5)).await;
    drop(first_reader);
    writer.await.unwrap();
    assert_eq!(late_reader.await.unwrap(), 1);
}

#[tokio::test]
async fn rwlock_guards_map_and_downgrade() {
    let lock = RwLock::new((1, String::from("a")));
    {
        let mut w = lock.write().await;
        w.0 = 2;
        let r = tokio::sync::RwLockWriteGuard::downgrade(w);
        assert_eq!(r.0, 2);
        assert!(lock.try_write().is_err(), "the downgraded read still holds");
    }
    let mapped = tokio::sync::RwLockReadGuard::map(lock.read().await, |v| &v.1);
    assert_eq!(&*mapped, "a");
    drop(mapped);
    let mut w = tokio::sync::RwLockWriteGuard::map(lock.write().await, |v| &mut v.1);
    w.push('b');
    drop(w);
    assert_eq!(lock.read().await.1, "ab");
    let limited = RwLock::with_max_readers(0, 2);
    let _r1 = limited.read().await;
    let _r2 = limited.read().await;
    assert!(limited.try_read().is_err(), "at most two readers");
    assert_eq!(lock.into_inner().0, 2);
}

#[tokio::test]
async fn mutex_owned_and_mapped_guards() {
    let m = Arc::new(Mutex::new(vec![1, 2, 3]));
    let guard = m.clone().lock_owned().await;
    assert!(m.try_lock().is_err());
    let mut first = tokio::sync::OwnedMutexGuard::map(guard, |v| &mut v[0]);
    *first = 10;
    drop(first);
    let g = m.lock().await;
    assert!(tokio::sync::MutexGuard::try_map(g, |v| v.get_mut(7)).is_err());
    assert_eq!(*m.lock().await, vec![10, 2, 3]);
    assert!(m.clone().try_lock_owned().is_ok());
}

#[tokio::test(start_paused = true)]
async fn bounded_mpsc_senders_wait_in_fifo_order() {
    let (tx, mut rx) = mpsc::channel::<u64>(1);
    tx.send(100).await.unwrap(); // full
    let order = arrival_order(4, |i| {
        let tx = tx.clone();
        async move {
            tx.send(i).await.unwrap();
            i
        }
    });
    let receiver = tokio::spawn(async move {
        sleep(Duration::from_millis(100)).await;
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(rx.recv().await.unwrap());
        }
        got
    });
    order.await;
    assert_eq!(receiver.await.unwrap(), vec![100, 0, 1, 2, 3]);
}

#[tokio::test(start_paused = true)]
async fn mpsc_close_keeps_queued_values_and_outstanding_permits() {
    let (tx, mut rx) = mpsc::channel(4);
    tx.send(1).await.unwrap();
    let permit = tx.reserve().await.unwrap();
    rx.close();
    assert!(tx.send(2).await.is_err(), "closed: no new sends");
    permit.send(3); // a permit taken before close still sends
    assert_eq!(rx.recv().await, Some(1));
    assert_eq!(rx.recv().await, Some(3));
    assert_eq!(rx.recv().await, None);
}

#[tokio::test]
async fn mpsc_weak_senders_do_not_keep_the_channel_open() {
    let (tx, mut rx) = mpsc::channel::<u8>(2);
    let weak = tx.downgrade();
    assert_eq!((tx.strong_count(), tx.weak_count()), (1, 1));
    let upgraded = weak.upgrade().unwrap();
    drop(upgraded);
    drop(tx);
    assert!(weak.upgrade().is_none());
    assert_eq!(rx.recv().await, None);
}

#[tokio::test]
async fn mpsc_reserve_many_recv_many_and_owned_permits() {
    let (tx, mut rx) = mpsc::channel(4);
    let permits = tx.reserve_many(3).await.unwrap();
    assert_eq!(permits.len(), 3);
    for (i, p) in permits.enumerate() {
        p.send(i);
    }
    assert!(tx.reserve_many(5).await.is_err(), "more than the capacity");
    let owned = tx.clone().reserve_owned().await.unwrap();
    assert!(owned.same_channel_as_sender(&tx));
    let tx2 = owned.send(3);
    assert!(tx2.same_channel(&tx));
    let mut buf = Vec::new();
    assert_eq!(rx.recv_many(&mut buf, 10).await, 4);
    assert_eq!(buf, vec![0, 1, 2, 3]);
    assert_eq!(rx.capacity(), 4);
    assert_eq!(rx.max_capacity(), 4);
}

#[tokio::test(start_paused = true)]
async fn mpsc_send_timeout_times_out_in_virtual_time() {
    let (tx, _rx) = mpsc::channel(1);
    tx.send(1).await.unwrap();
    let start = tokio::time::Instant::now();
    let err = tx
        .send_timeout(2, Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(matches!(err, mpsc::error::SendTimeoutError::Timeout(2)));
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn a_dropped_recv_loses_nothing() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let timed_out = tokio::time::timeout(Duration::from_millis(5), rx.recv()).await;
    assert!(timed_out.is_err());
    tx.send(7).unwrap();
    assert_eq!(rx.recv().await, Some(7));
}

#[tokio::test]
async fn broadcast_delivers_to_every_receiver() {
    let (tx, mut rx1) = broadcast::channel(4);
    let mut rx2 = tx.subscribe();
    assert_eq!(tx.send(1).unwrap(), 2);
    assert_eq!(tx.receiver_count(), 2);
    assert_eq!(rx1.recv().await.unwrap(), 1);
    assert_eq!(rx2.recv().await.unwrap(), 1);
    drop(tx);
    assert_eq!(rx1.recv().await, Err(broadcast::error::RecvError::Closed));
}

#[tokio::test]
async fn broadcast_lag_counts_match_tokio() {
    let (tx, mut rx) = broadcast::channel(2);
    for i in 0..5 {
        tx.send(i).unwrap();
    }
    assert_eq!(rx.len(), 5);
    // Capacity 2: values 0, 1 and 2 were overwritten.
    assert_eq!(rx.recv().await, Err(broadcast::error::RecvError::Lagged(3)));
    assert_eq!(rx.recv().await.unwrap(), 3);
    assert_eq!(rx.recv().await.unwrap(), 4);
    assert_eq!(rx.try_recv(), Err(broadcast::error::TryRecvError::Empty));

    // A capacity of 3 holds 4 (the next power of two).
    let (tx, mut rx) = broadcast::channel(3);
    for i in 0..6 {
        tx.send(i).unwrap();
    }
    assert_eq!(
        rx.try_recv(),
        Err(broadcast::error::TryRecvError::Lagged(2))
    );
    assert_eq!(rx.try_recv(), Ok(2));
}

#[tokio::test]
async fn broadcast_send_without_receivers_fails_and_resubscribe_starts_fresh() {
    let (tx, rx) = broadcast::channel::<u8>(2);
    drop(rx);
    assert_eq!(tx.send(1).unwrap_err().0, 1);
    let mut rx = tx.subscribe();
    tx.send(2).unwrap();
    let mut fresh = rx.resubscribe();
    tx.send(3).unwrap();
    assert_eq!(rx.recv().await.unwrap(), 2);
    assert_eq!(fresh.recv().await.unwrap(), 3);
    let weak = tx.downgrade();
    assert_eq!(weak.strong_count(), 1);
    drop(tx);
    assert!(weak.upgrade().is_none());
}

#[tokio::test]
async fn watch_versions_changed_and_borrow_and_update() {
    let (tx, mut rx) = watch::channel("a");
    assert!(!rx.has_changed().unwrap());
    tx.send("b").unwrap();
    assert!(rx.has_changed().unwrap());
    assert!(rx.borrow().has_changed());
    assert!(rx.has_changed().unwrap(), "borrow() does not mark seen");
    assert_eq!(*rx.borrow_and_update(), "b");
    assert!(!rx.has_changed().unwrap());
    // Two sends before a look: one change.
    tx.send("c").unwrap();
    tx.send("d").unwrap();
    rx.changed().await.unwrap();
    assert_eq!(*rx.borrow(), "d");
    assert!(!rx.has_changed().unwrap());
    rx.mark_changed();
    assert!(rx.has_changed().unwrap());
    rx.mark_unchanged();
    assert!(!rx.has_changed().unwrap());
}

#[tokio::test]
async fn watch_send_variants_and_close() {
    let (tx, mut rx) = watch::channel(1);
    assert!(!tx.send_if_modified(|v| {
        *v += 0;
        false
    }));
    assert!(!rx.has_changed().unwrap(), "unmodified: no notification");
    tx.send_modify(|v| *v += 1);
    assert_eq!(tx.send_replace(5), 2);
    assert_eq!(*rx.borrow_and_update(), 5);
    let rx2 = rx.clone();
    assert_eq!(tx.receiver_count(), 2);
    drop(rx2);
    tx.send(6).unwrap();
    drop(tx);
    // A change sent before close is seen first, then the close.
    assert!(rx.changed().await.is_ok());
    assert!(rx.changed().await.is_err());
    assert!(rx.has_changed().is_err());

    let (tx, rx) = watch::channel(0);
    drop(rx);
    assert!(tx.send(1).is_err(), "no receiver");
    assert_eq!(
        tx.send_replace(2),
        0,
        "send_replace works without receivers"
    );
    assert!(tx.is_closed());
}

#[tokio::test]
async fn watch_wait_for_checks_the_current_value_first() {
    let (tx, mut rx) = watch::channel(0);
    let h = tokio::spawn(async move {
        for i in 1..=5 {
            tx.send(i).unwrap();
            tokio::task::yield_now().await;
        }
    });
    let v = *rx.wait_for(|v| *v >= 3).await.unwrap();
    assert!(v >= 3);
    h.await.unwrap();
    assert_eq!(*rx.wait_for(|v| *v == 5).await.unwrap(), 5);
    assert!(
        rx.wait_for(|v| *v == 99).await.is_err(),
        "closed before it held"
    );
}

#[tokio::test]
async fn barrier_releases_all_and_names_one_leader() {
    let barrier = Arc::new(Barrier::new(3));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let b = barrier.clone();
            tokio::spawn(async move { b.wait().await.is_leader() })
        })
        .collect();
    let mut leaders = 0;
    for h in handles {
        if h.await.unwrap() {
            leaders += 1;
        }
    }
    assert_eq!(leaders, 1);
}

#[tokio::test(start_paused = true)]
async fn once_cell_initializes_once_and_set_reports_why() {
    // One cell per run (a static would carry the value from one seed of a
    // sweep to the next, in one process).
    let cell_of_run: &'static OnceCell<u32> = Box::leak(Box::new(OnceCell::const_new()));
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut handles = Vec::new();
    for _ in 0..3 {
        let calls = calls.clone();
        handles.push(tokio::spawn(async move {
            *cell_of_run
                .get_or_init(|| async {
                    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    sleep(Duration::from_millis(10)).await;
                    42
                })
                .await
        }));
    }
    for h in handles {
        assert_eq!(h.await.unwrap(), 42);
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(cell_of_run.set(1).unwrap_err().is_already_init_err());

    let cell = OnceCell::new();
    let failed: Result<&u32, &str> = cell.get_or_try_init(|| async { Err("no") }).await;
    assert!(failed.is_err());
    assert!(!cell.initialized());
    assert_eq!(
        cell.get_or_try_init(|| async { Ok::<_, ()>(7) }).await,
        Ok(&7)
    );
    assert_eq!(cell.into_inner(), Some(7));
}

#[tokio::test]
async fn set_once_wakes_waiters() {
    let once = Arc::new(SetOnce::new());
    let o = once.clone();
    let waiter = tokio::spawn(async move { *o.wait().await });
    tokio::task::yield_now().await;
    once.set(9).unwrap();
    assert_eq!(once.set(10).unwrap_err().0, 10);
    assert_eq!(waiter.await.unwrap(), 9);
    assert_eq!(once.get(), Some(&9));
}

#[tokio::test]
async fn notify_notified_owned_and_notify_last() {
    let notify = Arc::new(Notify::new());
    let owned = notify.clone().notified_owned();
    notify.notify_waiters();
    owned.await;
    notify.notify_last();
    notify.notified().await;
}

#[tokio::test(start_paused = true)]
async fn a_dropped_notified_passes_its_notification_on() {
    let notify = Arc::new(Notify::new());
    let n1 = notify.clone();
    let first = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_millis(10), n1.notified())
            .await
            .is_ok()
    });
    let n2 = notify.clone();
    let second = tokio::spawn(async move {
        sleep(Duration::from_millis(1)).await;
        n2.notified().await;
    });
    sleep(Duration::from_millis(5)).await;
    notify.notify_one(); // goes to the first waiter...
    assert!(first.await.unwrap());
    notify.notify_one();
    second.await.unwrap();
}

/// A waker that does nothing, counted by its `Arc`.
struct Quiet;

impl std::task::Wake for Quiet {
    fn wake(self: Arc<Self>) {}
}

/// Polls `fut` once with `waker`.
fn poll_once<F: std::future::Future>(
    fut: std::pin::Pin<&mut F>,
    waker: &std::task::Waker,
) -> std::task::Poll<F::Output> {
    fut.poll(&mut std::task::Context::from_waker(waker))
}

#[tokio::test]
async fn mpsc_reserve_and_closed_wake_when_the_receiver_closes() {
    let (tx, mut rx) = mpsc::channel::<u8>(1);
    tx.send(1).await.unwrap();
    let t = tx.clone();
    let waiting = tokio::spawn(async move { t.reserve().await.map(|_| ()) });
    let t = tx.clone();
    let closed = tokio::spawn(async move { t.closed().await });
    sleep(Duration::from_millis(1)).await;
    rx.close();
    // The sender waiting for a slot learns the channel closed.
    assert!(waiting.await.unwrap().is_err());
    closed.await.unwrap();
    // The value sent before the close is still there.
    assert_eq!(rx.recv().await, Some(1));
    assert_eq!(rx.recv().await, None);
}

#[tokio::test]
async fn dropping_a_permit_iterator_frees_its_unused_slots() {
    let (tx, mut rx) = mpsc::channel::<u8>(3);
    let mut permits = tx.reserve_many(3).await.unwrap();
    permits.next().unwrap().send(1);
    let t = tx.clone();
    // Two slots are still held: this waits until the iterator drops.
    let waiting = tokio::spawn(async move { t.reserve_many(2).await.map(|p| p.count()) });
    sleep(Duration::from_millis(1)).await;
    assert!(!waiting.is_finished());
    drop(permits);
    assert_eq!(waiting.await.unwrap().unwrap(), 2);
    assert_eq!(rx.recv().await, Some(1));
}

#[tokio::test]
async fn a_dropped_receiver_lets_go_of_its_waker() {
    let (tx, mut rx) = mpsc::channel::<u8>(1);
    let quiet = Arc::new(Quiet);
    let waker = std::task::Waker::from(quiet.clone());
    {
        let mut recv = std::pin::pin!(rx.recv());
        assert!(poll_once(recv.as_mut(), &waker).is_pending());
    }
    drop(rx);
    drop(waker);
    // The sender keeps the channel alive, but not the receiver's waker.
    assert_eq!(Arc::strong_count(&quiet), 1);
    assert!(tx.is_closed());
}

#[tokio::test]
async fn a_notify_last_whose_waiter_drops_goes_to_the_one_before() {
    let notify = Notify::new();
    let waker = std::task::Waker::from(Arc::new(Quiet));
    let mut first = std::pin::pin!(notify.notified());
    let mut second = std::pin::pin!(notify.notified());
    let mut third = Box::pin(notify.notified());
    assert!(poll_once(first.as_mut(), &waker).is_pending());
    assert!(poll_once(second.as_mut(), &waker).is_pending());
    assert!(poll_once(third.as_mut(), &waker).is_pending());
    notify.notify_last();
    drop(third);
    assert!(poll_once(second.as_mut(), &waker).is_ready());
    assert!(poll_once(first.as_mut(), &waker).is_pending());
}

/// Calls `notify_waiters` when dropped.
struct NotifyOnDrop(Arc<Notify>);

impl std::task::Wake for NotifyOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_waiters();
    }
}

#[tokio::test]
async fn notify_waiters_from_a_wakers_drop_does_not_hang() {
    let notify = Arc::new(Notify::new());
    let mut fut = Box::pin(notify.notified());
    {
        let waker = std::task::Waker::from(Arc::new(NotifyOnDrop(notify.clone())));
        assert!(poll_once(fut.as_mut(), &waker).is_pending());
    }
    notify.notify_waiters();
}

/// Sends on a broadcast channel when dropped.
struct SendOnDrop(broadcast::Sender<u8>);

impl std::task::Wake for SendOnDrop {
    fn wake(self: Arc<Self>) {}
}

impl Drop for SendOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(2);
    }
}

#[tokio::test]
async fn a_broadcast_send_from_a_wakers_drop_does_not_hang() {
    let (tx, mut rx) = broadcast::channel(4);
    let mut recv = Box::pin(rx.recv());
    let waker = std::task::Waker::from(Arc::new(SendOnDrop(tx.clone())));
    assert!(poll_once(recv.as_mut(), &waker).is_pending());
    drop(waker);
    // A poll with another waker replaces (and drops) the stored one, which
    // sends from inside its drop: no deadlock, and the value arrives.
    let quiet = std::task::Waker::from(Arc::new(Quiet));
    let _ = poll_once(recv.as_mut(), &quiet);
    assert_eq!(recv.await.unwrap(), 2);
}

/// Panics when a zero is cloned.
#[derive(Debug, PartialEq)]
struct NoZeroClones(u8);

impl Clone for NoZeroClones {
    fn clone(&self) -> Self {
        assert_ne!(self.0, 0, "cloning a zero");
        NoZeroClones(self.0)
    }
}

#[tokio::test]
async fn a_broadcast_value_whose_clone_panics_is_passed_over() {
    let (tx, mut rx) = broadcast::channel(4);
    tx.send(NoZeroClones(0)).unwrap();
    tx.send(NoZeroClones(1)).unwrap();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = rx.try_recv();
    }));
    assert!(panicked.is_err());
    assert_eq!(rx.try_recv().unwrap(), NoZeroClones(1));
}

#[tokio::test]
async fn a_oneshot_receiver_is_terminated_once_it_gave_its_result() {
    let (tx, mut rx) = tokio::sync::oneshot::channel::<u8>();
    assert!(!rx.is_terminated());
    drop(tx);
    // Closed, but not yet seen by the receiver.
    assert!(!rx.is_terminated());
    assert!((&mut rx).await.is_err());
    assert!(rx.is_terminated());
    let (tx, mut rx) = tokio::sync::oneshot::channel::<u8>();
    tx.send(3).unwrap();
    assert!(!rx.is_terminated());
    assert_eq!(rx.try_recv().unwrap(), 3);
    assert!(rx.is_terminated());
}

#[test]
#[should_panic(expected = "a RwLock may not be created with 0 readers")]
fn a_rwlock_with_no_readers_panics() {
    let _ = RwLock::with_max_readers((), 0);
}

#[tokio::test]
async fn a_sender_waiting_in_reserve_owned_gets_an_error_after_close() {
    let (tx, mut rx) = mpsc::channel::<u8>(1);
    tx.send(1).await.unwrap();
    let waiting = tokio::spawn(tx.clone().reserve_owned());
    sleep(Duration::from_millis(1)).await;
    rx.close();
    // Taking the value frees its slot; the closed channel keeps it.
    assert_eq!(rx.recv().await, Some(1));
    assert!(waiting.await.unwrap().is_err());
    assert_eq!(rx.recv().await, None);
}

#[tokio::test]
#[should_panic(expected = "called after complete")]
async fn polling_a_oneshot_receiver_after_it_completed_panics() {
    let (_tx, mut rx) = tokio::sync::oneshot::channel::<u8>();
    rx.close();
    assert!((&mut rx).await.is_err(), "closed with no value: an error");
    let _ = (&mut rx).await;
}
