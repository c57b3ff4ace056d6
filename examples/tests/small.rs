//! Four small tokio tests of the shape most suites are made of. Beyond what
//! they check, BENCHMARKS.md times `cargo sim test --seeds 1000` over them.

use std::time::Duration;

#[tokio::test]
async fn spawn_and_join() {
    let handles: Vec<_> = (0..4u64)
        .map(|i| tokio::spawn(async move { i * i }))
        .collect();
    let mut sum = 0;
    for handle in handles {
        sum += handle.await.unwrap();
    }
    assert_eq!(sum, 14);
}

#[tokio::test(start_paused = true)]
async fn sleeps_in_order() {
    let (tx, mut rx) = tokio::sync::mpsc::channel(4);
    for ms in [30u64, 10, 20] {
        let tx = tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            tx.send(ms).await.unwrap();
        });
    }
    drop(tx);
    let mut order = Vec::new();
    while let Some(ms) = rx.recv().await {
        order.push(ms);
    }
    assert_eq!(order, [10, 20, 30]);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fires() {
    let slow = tokio::time::sleep(Duration::from_secs(5));
    let result = tokio::time::timeout(Duration::from_secs(1), slow).await;
    assert!(result.is_err());
}

#[tokio::test]
async fn a_mutex_serializes_updates() {
    let counter = std::sync::Arc::new(tokio::sync::Mutex::new(0u32));
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut guard = counter.lock().await;
                let value = *guard;
                tokio::task::yield_now().await;
                *guard = value + 1;
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(*counter.lock().await, 8);
}
