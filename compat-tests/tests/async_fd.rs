//! `tokio::io::unix::AsyncFd` on sockets made through libc: a Unix stream
//! pair from `socketpair` and a `std::net` TCP connection. Readiness is
//! edge-triggered (cleared only by the guard), writes push back when the
//! peer does not read, and a runtime's shutdown ends every wait. Each test
//! passes on real tokio and on the facade.

// `AsyncFd::new` is deprecated (not I/O-safe); these tests own their
// descriptors, so the plain constructor is sound here.
#![allow(deprecated)]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::io::{Interest, Ready};

fn pair() -> (UnixStream, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    a.set_nonblocking(true).unwrap();
    b.set_nonblocking(true).unwrap();
    (a, b)
}

/// Whether `fd` becomes readable within 10 ms.
async fn readable_soon(fd: &AsyncFd<UnixStream>) -> bool {
    tokio::time::timeout(Duration::from_millis(10), fd.readable())
        .await
        .is_ok()
}

#[tokio::test(start_paused = true)]
async fn readiness_is_an_edge_the_guard_clears() {
    let (a, mut b) = pair();
    let a = AsyncFd::new(a).unwrap();
    assert!(!readable_soon(&a).await, "nothing written yet");

    b.write_all(b"ping").unwrap();
    let mut guard = a.readable().await.unwrap();
    assert_eq!(guard.ready(), Ready::READABLE);
    let mut buf = [0u8; 16];
    let n = guard
        .try_io(|inner| inner.get_ref().read(&mut buf))
        .unwrap()
        .unwrap();
    assert_eq!(&buf[..n], b"ping");
    // Drained, but no read said WouldBlock through the guard: still ready.
    assert!(readable_soon(&a).await);
    guard.clear_ready();
    assert!(!readable_soon(&a).await, "cleared until the next event");

    b.write_all(b"x").unwrap();
    assert!(readable_soon(&a).await);
}

#[tokio::test(start_paused = true)]
async fn try_io_clears_only_on_would_block() {
    let (a, mut b) = pair();
    let a = AsyncFd::new(a).unwrap();
    // The reactor learns of the descriptor at its next turn.
    tokio::task::yield_now().await;
    b.write_all(b"1").unwrap();
    tokio::task::yield_now().await;

    let mut byte = [0u8; 1];
    let n = a
        .try_io(Interest::READABLE, |inner| (&*inner).read(&mut byte))
        .unwrap();
    assert_eq!(n, 1);
    let err = a
        .try_io(Interest::READABLE, |inner| (&*inner).read(&mut byte))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WouldBlock);
    // That WouldBlock cleared it: the closure is not called now.
    let mut called = false;
    let err = a
        .try_io(Interest::READABLE, |_| {
            called = true;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::WouldBlock);
    assert!(!called);
}

#[tokio::test(start_paused = true)]
async fn a_full_peer_pushes_back_until_it_reads() {
    let (a, mut b) = pair();
    let a = AsyncFd::new(a).unwrap();
    let mut written = 0;
    // Bounded: the socket's buffer fills.
    for _ in 0..100_000 {
        let mut guard = a.writable().await.unwrap();
        match guard.try_io(|inner| inner.get_ref().write(&[7u8; 4096])) {
            Ok(result) => written += result.unwrap(),
            Err(_would_block) => break,
        }
    }
    assert!(written > 0);
    let writable = tokio::time::timeout(Duration::from_millis(10), a.writable()).await;
    assert!(writable.is_err(), "the peer's buffer is full");

    let reader = tokio::task::spawn_blocking(move || {
        let mut buf = vec![0u8; written];
        let mut got = 0;
        while got < written {
            match b.read(&mut buf[got..]) {
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::yield_now(),
                Err(e) => panic!("{e}"),
            }
        }
        buf.iter().all(|&x| x == 7)
    });
    a.writable().await.unwrap().retain_ready();
    assert!(reader.await.unwrap());
}

#[tokio::test(start_paused = true)]
async fn the_peers_close_is_read_closed() {
    let (a, b) = pair();
    let a = AsyncFd::new(a).unwrap();
    drop(b);
    let guard = a.ready(Interest::READABLE).await.unwrap();
    assert!(guard.ready().is_read_closed());
    let mut buf = [0u8; 4];
    assert_eq!(a.get_ref().read(&mut buf).unwrap(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_std_tcp_connection_is_watched() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.set_nonblocking(true).unwrap();
    let client = AsyncFd::new(client).unwrap();
    server.write_all(b"hello").unwrap();
    let n = client
        .async_io(Interest::READABLE, |inner| {
            let mut buf = [0u8; 16];
            (&*inner).read(&mut buf)
        })
        .await
        .unwrap();
    assert_eq!(n, 5);
}

#[test]
fn a_dropped_runtime_ends_the_wait() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (a, _b) = pair();
    let a = {
        let _enter = rt.enter();
        AsyncFd::new(a).unwrap()
    };
    drop(rt);
    let result = futures::executor::block_on(a.readable());
    let err = result.unwrap_err();
    assert!(tokio::runtime::is_rt_shutdown_err(&err), "{err}");
}

#[tokio::test(start_paused = true)]
async fn a_std_udp_socket_and_a_listener_are_watched() {
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let addr = udp.local_addr().unwrap();
    let udp = AsyncFd::new(udp).unwrap();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sender.send_to(b"dgram", addr).unwrap();
    let mut buf = [0u8; 16];
    let n = udp
        .async_io(Interest::READABLE, |socket| socket.recv(&mut buf))
        .await
        .unwrap();
    assert_eq!(&buf[..n], b"dgram");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let listener_addr = listener.local_addr().unwrap();
    let listener = AsyncFd::new(listener).unwrap();
    let client = std::net::TcpStream::connect(listener_addr).unwrap();
    let (_server, peer) = listener
        .async_io(Interest::READABLE, |l| l.accept())
        .await
        .unwrap();
    assert_eq!(peer, client.local_addr().unwrap());
}
