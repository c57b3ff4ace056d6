//! Readiness as tokio reports it (edge-triggered, cleared only by an
//! operation that would block), a sleep's `is_elapsed`, `BufWriter`'s
//! vectored writes over a writer that is not vectored, and the context a
//! shut-down runtime's tasks are dropped in. Each test passes on real tokio
//! and on the facade.

use std::future::Future;
use std::io::{ErrorKind, IoSlice};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use tokio::io::{AsyncWrite, AsyncWriteExt, Interest};
use tokio::net::{TcpListener, TcpStream};

async fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (server, _) = listener.accept().await.unwrap();
    (client, server)
}

fn is_ready<F: Future>(future: F) -> bool {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    future.as_mut().poll(&mut cx).is_ready()
}

#[tokio::test]
async fn readable_stays_until_a_read_would_block() {
    let (mut client, server) = pair().await;
    client.write_all(b"ping").await.unwrap();
    server.readable().await.unwrap();
    let mut buf = [0u8; 16];
    let mut got = 0;
    while got < 4 {
        server.readable().await.unwrap();
        match server.try_read(&mut buf[got..]) {
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => continue,
            Err(e) => panic!("{e}"),
        }
    }
    // Everything was read, and still readable: only a read that would
    // block clears it.
    assert!(is_ready(server.readable()));
    assert_eq!(
        server.try_read(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    assert!(!is_ready(server.readable()));
    // The peer's close is readable again, and says so.
    drop(client);
    let ready = server.ready(Interest::READABLE).await.unwrap();
    assert!(ready.is_readable());
    assert!(ready.is_read_closed());
}

#[tokio::test]
async fn writable_stays_until_a_write_would_block() {
    let (client, _server) = pair().await;
    let chunk = vec![7u8; 64 * 1024];
    // Bounded: a kernel's buffers fill long before this.
    for _ in 0..100_000 {
        assert!(
            is_ready(client.writable()),
            "writable until a write would block"
        );
        match client.try_write(&chunk) {
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(!is_ready(client.writable()));
}

#[tokio::test(start_paused = true)]
async fn a_sleep_never_polled_has_not_elapsed() {
    let now = tokio::time::Instant::now();
    let sleep = tokio::time::sleep_until(now);
    tokio::pin!(sleep);
    assert!(!sleep.is_elapsed());
    sleep.as_mut().await;
    assert!(sleep.is_elapsed());
    sleep
        .as_mut()
        .reset(now + std::time::Duration::from_secs(1));
    assert!(!sleep.is_elapsed());
}

/// A writer that takes at most `max` bytes a call and is not vectored.
struct Plain {
    data: Vec<u8>,
    max: usize,
}

impl AsyncWrite for Plain {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let n = buf.len().min(self.max);
        self.data.extend_from_slice(&buf[..n]);
        Poll::Ready(Ok(n))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn buf_writer_gathers_slices_for_a_writer_that_is_not_vectored() {
    let msg = b"foo bar baz";
    let slices = [
        IoSlice::new(&msg[0..4]),
        IoSlice::new(&msg[4..8]),
        IoSlice::new(&msg[8..]),
    ];
    let mut writer = tokio::io::BufWriter::with_capacity(
        8,
        Plain {
            data: Vec::new(),
            max: 4,
        },
    );
    // Whole slices, as many as fit the buffer.
    assert_eq!(writer.write_vectored(&slices).await.unwrap(), 8);
    assert_eq!(writer.buffer(), &msg[..8]);
    assert_eq!(writer.write_vectored(&slices[2..]).await.unwrap(), 3);
    writer.flush().await.unwrap();
    assert_eq!(writer.get_ref().data, msg);
}

#[test]
fn a_dropped_runtime_drops_its_tasks_inside_its_context() {
    static IN_CONTEXT: AtomicBool = AtomicBool::new(false);
    struct Probe;
    impl Future for Probe {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
            Poll::Pending
        }
    }
    impl Drop for Probe {
        fn drop(&mut self) {
            IN_CONTEXT.store(
                tokio::runtime::Handle::try_current().is_ok(),
                Ordering::SeqCst,
            );
        }
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.spawn(Probe);
    drop(rt);
    assert!(IN_CONTEXT.load(Ordering::SeqCst));
}
