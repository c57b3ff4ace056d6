//! The part of tokio::sync the first milestone needs: oneshot, mpsc, Mutex,
//! Notify.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Mutex, Notify};

#[tokio::test]
async fn oneshot_delivers_and_reports_closure() {
    let (tx, rx) = oneshot::channel();
    tx.send(3).unwrap();
    assert_eq!(rx.await.unwrap(), 3);

    let (tx, rx) = oneshot::channel::<u8>();
    drop(tx);
    assert!(rx.await.is_err());

    let (tx, mut rx) = oneshot::channel::<u8>();
    assert_eq!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty));
    rx.close();
    assert!(tx.is_closed());
    assert_eq!(tx.send(1), Err(1));
}

#[tokio::test]
async fn oneshot_sender_sees_the_receiver_go() {
    let (mut tx, rx) = oneshot::channel::<u8>();
    let waiter = tokio::spawn(async move {
        tx.closed().await;
        true
    });
    drop(rx);
    assert!(waiter.await.unwrap());
}

#[tokio::test]
async fn mpsc_bounded_orders_and_closes() {
    let (tx, mut rx) = mpsc::channel(2);
    let producer = tokio::spawn(async move {
        for i in 0..10 {
            tx.send(i).await.unwrap();
        }
    });
    let mut got = Vec::new();
    while let Some(v) = rx.recv().await {
        got.push(v);
    }
    producer.await.unwrap();
    assert_eq!(got, (0..10).collect::<Vec<_>>());
}

#[tokio::test]
async fn mpsc_try_send_reports_full_and_closed() {
    let (tx, mut rx) = mpsc::channel(1);
    tx.try_send(1).unwrap();
    assert!(matches!(
        tx.try_send(2),
        Err(mpsc::error::TrySendError::Full(2))
    ));
    assert_eq!(tx.capacity(), 0);
    assert_eq!(tx.max_capacity(), 1);
    assert_eq!(rx.recv().await, Some(1));
    rx.close();
    assert!(matches!(
        tx.try_send(3),
        Err(mpsc::error::TrySendError::Closed(3))
    ));
    assert!(tx.send(4).await.is_err());
    assert_eq!(rx.try_recv(), Err(mpsc::error::TryRecvError::Disconnected));
}

#[tokio::test]
async fn mpsc_values_sent_before_close_are_still_received() {
    let (tx, mut rx) = mpsc::channel(4);
    tx.send(1).await.unwrap();
    tx.send(2).await.unwrap();
    rx.close();
    assert_eq!(rx.recv().await, Some(1));
    assert_eq!(rx.recv().await, Some(2));
    assert_eq!(rx.recv().await, None);
}

#[tokio::test]
async fn mpsc_permit_reserves_a_slot() {
    let (tx, mut rx) = mpsc::channel(1);
    let permit = tx.reserve().await.unwrap();
    assert!(tx.try_send(9).is_err());
    permit.send(5);
    assert_eq!(rx.recv().await, Some(5));
}

#[tokio::test]
async fn unbounded_mpsc() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    for i in 0..100 {
        tx.send(i).unwrap();
    }
    drop(tx);
    let mut n = 0;
    while let Some(v) = rx.recv().await {
        assert_eq!(v, n);
        n += 1;
    }
    assert_eq!(n, 100);
}

#[tokio::test(start_paused = true)]
async fn mutex_serves_waiters_in_fifo_order() {
    let lock = Arc::new(Mutex::new(Vec::new()));
    let guard = lock.lock().await;
    let mut handles = Vec::new();
    for i in 0..5 {
        let lock = lock.clone();
        handles.push(tokio::spawn(async move {
            // Queue up in order i.
            tokio::time::sleep(Duration::from_millis(i * 10)).await;
            lock.lock().await.push(i);
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(guard);
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(*lock.lock().await, vec![0, 1, 2, 3, 4]);
}

#[tokio::test(start_paused = true)]
async fn mutex_try_lock_and_cancelled_waiter() {
    let lock = Arc::new(Mutex::new(0));
    let guard = lock.lock().await;
    assert!(lock.try_lock().is_err());
    // A waiter that gives up does not wedge the next one.
    let l2 = lock.clone();
    let quitter = tokio::spawn(async move {
        let _ = tokio::time::timeout(Duration::from_millis(5), l2.lock()).await;
    });
    let l3 = lock.clone();
    let stayer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1)).await;
        *l3.lock().await += 1;
    });
    quitter.await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    drop(guard);
    stayer.await.unwrap();
    assert_eq!(*lock.try_lock().unwrap(), 1);
}

#[tokio::test]
async fn notify_one_stores_a_single_permit() {
    let notify = Notify::new();
    notify.notify_one();
    notify.notify_one();
    notify.notified().await; // consumes the one permit
    let second = tokio::time::timeout(Duration::from_millis(1), notify.notified());
    tokio::time::pause();
    assert!(second.await.is_err(), "only one permit is stored");
}

#[tokio::test]
async fn notify_waiters_wakes_everyone_waiting() {
    let notify = Arc::new(Notify::new());
    let mut handles = Vec::new();
    for _ in 0..3 {
        let n = notify.clone();
        let notified_before = tokio::spawn(async move {
            n.notified().await;
        });
        handles.push(notified_before);
    }
    // Let them all start waiting.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    notify.notify_waiters();
    for h in handles {
        h.await.unwrap();
    }
}

#[tokio::test]
async fn notified_enable_registers_before_polling() {
    let notify = Notify::new();
    let notified = notify.notified();
    tokio::pin!(notified);
    assert!(!notified.as_mut().enable());
    notify.notify_waiters();
    notified.await;
}
