//! `#[tokio::test]` with each attribute tokio-macros takes: the same test
//! compiles and passes against real tokio and against the facade.

use std::time::Duration;

#[tokio::test(flavor = "local")]
async fn the_local_flavor_runs_spawn_local_without_a_local_set() {
    // A !Send value, as spawn_local allows.
    let shared = std::rc::Rc::new(std::cell::Cell::new(0));
    let task = tokio::task::spawn_local({
        let shared = shared.clone();
        async move {
            shared.set(7);
        }
    });
    task.await.unwrap();
    assert_eq!(shared.get(), 7);
}

#[tokio::test(flavor = "local", start_paused = true)]
async fn the_local_flavor_takes_start_paused() {
    let start = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(start.elapsed() >= Duration::from_secs(60));
}

#[tokio::test(name = "named-runtime")]
async fn a_named_runtime_runs() {
    let value = tokio::spawn(async { 40 + 2 }).await.unwrap();
    assert_eq!(value, 42);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2, name = "named-workers")]
async fn a_named_multi_thread_runtime_runs() {
    let handles: Vec<_> = (0..4).map(|i| tokio::spawn(async move { i * 2 })).collect();
    let mut sum = 0;
    for handle in handles {
        sum += handle.await.unwrap();
    }
    assert_eq!(sum, 12);
}

#[tokio::test(crate = "tokio", flavor = "current_thread")]
async fn the_crate_attribute_names_the_path() {
    tokio::task::yield_now().await;
}

#[tokio::test(start_paused = true)]
async fn start_paused_on_the_default_flavor() {
    let start = tokio::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(start.elapsed().as_millis(), 1500);
}
