//! tokio-util and tokio-stream, unmodified, on top of tokio (or the facade).

use futures::{SinkExt, StreamExt};
use std::time::Duration;
use tokio_stream::wrappers::{BroadcastStream, IntervalStream, ReceiverStream};
use tokio_util::codec::{Framed, FramedRead, LengthDelimitedCodec, LinesCodec};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn framed_lines_over_a_duplex_stream() {
    let (a, b) = tokio::io::duplex(64);
    let mut client = Framed::new(a, LinesCodec::new());
    let mut server = Framed::new(b, LinesCodec::new());
    let echo = tokio::spawn(async move {
        while let Some(line) = server.next().await {
            let line = line.unwrap();
            server.send(format!("echo: {line}")).await.unwrap();
        }
    });
    for word in [
        "alpha",
        "beta",
        "a line longer than the sixty-four byte pipe buffer, to wrap",
    ] {
        client.send(word).await.unwrap();
        assert_eq!(
            client.next().await.unwrap().unwrap(),
            format!("echo: {word}")
        );
    }
    drop(client);
    echo.await.unwrap();
}

#[tokio::test]
async fn length_delimited_frames() {
    let (a, b) = tokio::io::duplex(16);
    let mut tx = Framed::new(a, LengthDelimitedCodec::new());
    let mut rx = FramedRead::new(b, LengthDelimitedCodec::new());
    let sender = tokio::spawn(async move {
        for n in [0usize, 1, 100] {
            tx.send(tokio_util::bytes::Bytes::from(vec![7u8; n]))
                .await
                .unwrap();
        }
    });
    for n in [0usize, 1, 100] {
        let frame = rx.next().await.unwrap().unwrap();
        assert_eq!(frame.len(), n);
    }
    sender.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn cancellation_token_stops_children() {
    let token = CancellationToken::new();
    let child = token.child_token();
    let worker = tokio::spawn(async move {
        tokio::select! {
            _ = child.cancelled() => "cancelled",
            _ = tokio::time::sleep(Duration::from_secs(60)) => "timed out",
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    token.cancel();
    assert_eq!(worker.await.unwrap(), "cancelled");
    assert!(token.is_cancelled());
}

#[tokio::test(start_paused = true)]
async fn streams_over_intervals_channels_and_broadcast() {
    let start = tokio::time::Instant::now();
    let ticks: Vec<_> = IntervalStream::new(tokio::time::interval(Duration::from_secs(1)))
        .take(3)
        .map(|t| t - start)
        .collect()
        .await;
    assert_eq!(ticks, [0, 1, 2].map(Duration::from_secs).to_vec());

    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        for i in 0..3 {
            tx.send(i).await.unwrap();
        }
    });
    let got: Vec<i32> = ReceiverStream::new(rx).collect().await;
    assert_eq!(got, vec![0, 1, 2]);

    let (btx, brx) = tokio::sync::broadcast::channel(8);
    btx.send(5).unwrap();
    drop(btx);
    let got: Vec<_> = BroadcastStream::new(brx)
        .map(|r| r.unwrap())
        .collect()
        .await;
    assert_eq!(got, vec![5]);
}

/// `LocalPoolHandle` runs a current-thread runtime on each of its worker
/// threads (simulated threads in a simulation).
#[tokio::test]
async fn local_pool_handle_runs_pinned_tasks_on_its_threads() {
    let pool = tokio_util::task::LocalPoolHandle::new(2);
    let handles: Vec<_> = (0..4u32)
        .map(|i| {
            pool.spawn_pinned(move || async move {
                // Not Send: it stays on its worker.
                let value = std::rc::Rc::new(i);
                tokio::task::yield_now().await;
                *value * 10
            })
        })
        .collect();
    let mut results = Vec::new();
    for h in handles {
        results.push(h.await.unwrap());
    }
    assert_eq!(results, [0, 10, 20, 30]);
}

/// `LocalPoolHandle` keeps each `!Send` task on its worker thread: tasks
/// pinned to one worker see its thread and its thread-locals.
#[tokio::test]
async fn spawn_pinned_keeps_tasks_on_their_worker_thread() {
    use std::rc::Rc;
    thread_local! {
        static SEEN: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    }
    let pool = tokio_util::task::LocalPoolHandle::new(2);
    let on = |worker: usize| {
        pool.spawn_pinned_by_idx(
            move || {
                let local = Rc::new(worker);
                async move {
                    tokio::task::yield_now().await;
                    let seen = SEEN.with(|s| {
                        s.set(s.get() + 1);
                        s.get()
                    });
                    (*local, std::thread::current().id(), seen)
                }
            },
            worker,
        )
    };
    let first = on(0).await.unwrap();
    let second = on(0).await.unwrap();
    let other = on(1).await.unwrap();
    assert_eq!((first.0, second.0, other.0), (0, 0, 1));
    assert_eq!(first.1, second.1, "one worker, one thread");
    assert_ne!(first.1, other.1, "two workers, two threads");
    assert_ne!(first.1, std::thread::current().id());
    // The worker's thread-local carries over between its tasks only.
    assert_eq!((first.2, second.2, other.2), (1, 2, 1));
}
