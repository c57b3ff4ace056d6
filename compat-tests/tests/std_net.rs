//! `std::net` beside tokio: a blocking `std::net` server on a thread, a
//! listener bound before the runtime exists, a blocking client in
//! `spawn_blocking`, and `into_std`/`from_std`. On the simulator these are
//! sockets of the simulated network; each test passes on real tokio and
//! on the facade.

use std::io::{ErrorKind, Read, Write};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn a_std_server_on_a_thread_answers_a_tokio_client() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, peer) = listener.accept().unwrap();
        let mut buf = [0u8; 4];
        stream.read_exact(&mut buf).unwrap();
        stream.write_all(&buf).unwrap();
        peer
    });
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    client.write_all(b"ping").await.unwrap();
    let mut back = [0u8; 4];
    client.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"ping");
    let peer = tokio::task::spawn_blocking(move || server.join().unwrap())
        .await
        .unwrap();
    assert_eq!(peer, client.local_addr().unwrap());
}

#[test]
fn a_listener_bound_before_the_runtime_serves_it() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        stream.read_to_end(&mut request).unwrap();
        stream.write_all(b"bye").unwrap();
        request
    });
    let reply = rt.block_on(async {
        let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        client.shutdown().await.unwrap();
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).await.unwrap();
        reply
    });
    assert_eq!(reply, b"bye");
    assert_eq!(server.join().unwrap(), b"hello");
}

#[tokio::test]
async fn a_blocking_client_in_spawn_blocking_reaches_a_tokio_listener() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        assert!(stream.nodelay().unwrap());
        stream.write_all(b"abc").unwrap();
        let mut buf = [0u8; 3];
        stream.read_exact(&mut buf).unwrap();
        buf
    });
    let (mut server, _) = listener.accept().await.unwrap();
    let mut buf = [0u8; 3];
    server.read_exact(&mut buf).await.unwrap();
    buf.reverse();
    server.write_all(&buf).await.unwrap();
    assert_eq!(&client.await.unwrap(), b"cba");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn into_std_and_from_std_keep_the_connection() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connect = tokio::spawn(async move { tokio::net::TcpStream::connect(addr).await.unwrap() });
    let (server, _) = listener.accept().await.unwrap();
    let mut client = connect.await.unwrap();

    let mut std_server = server.into_std().unwrap();
    let mut buf = [0u8; 8];
    // tokio hands the socket over in non-blocking mode.
    assert_eq!(
        std_server.read(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    std_server.set_nonblocking(false).unwrap();
    client.write_all(b"to std").await.unwrap();
    let n = tokio::task::block_in_place(|| std_server.read(&mut buf)).unwrap();
    assert_eq!(&buf[..n], b"to std");

    std_server.set_nonblocking(true).unwrap();
    let mut server = tokio::net::TcpStream::from_std(std_server).unwrap();
    client.write_all(b"back").await.unwrap();
    let mut back = [0u8; 4];
    server.read_exact(&mut back).await.unwrap();
    assert_eq!(&back, b"back");

    let std_listener = listener.into_std().unwrap();
    let listener = tokio::net::TcpListener::from_std(std_listener).unwrap();
    assert_eq!(listener.local_addr().unwrap(), addr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_timeout_ends_a_blocking_read_with_would_block() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let reader = tokio::task::spawn_blocking(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        assert_eq!(
            stream.read_timeout().unwrap(),
            Some(Duration::from_millis(20))
        );
        let mut buf = [0u8; 1];
        stream.read(&mut buf).unwrap_err().kind()
    });
    let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
    assert_eq!(reader.await.unwrap(), ErrorKind::WouldBlock);
}

#[tokio::test]
async fn std_peek_shutdown_and_refusal() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = tokio::task::spawn_blocking(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.write_all(b"xyz").unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).unwrap();
        rest
    });
    let client = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let mut buf = [0u8; 3];
        let n = stream.peek(&mut buf).unwrap();
        assert!(n > 0 && b"xyz".starts_with(&buf[..n]));
        let mut all = Vec::new();
        stream.read_to_end(&mut all).unwrap();
        stream.write_all(b"done").unwrap();
        all
    });
    assert_eq!(client.await.unwrap(), b"xyz");
    assert_eq!(peer.await.unwrap(), b"done");

    // Nothing listens on the freed port.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused = tokio::task::spawn_blocking(move || {
        std::net::TcpStream::connect(("127.0.0.1", port))
            .unwrap_err()
            .kind()
    });
    assert_eq!(refused.await.unwrap(), ErrorKind::ConnectionRefused);
}

#[tokio::test]
async fn connect_timeout_and_try_clone() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // `connect_timeout` connects in non-blocking mode and polls.
    let client = tokio::task::spawn_blocking(move || {
        let stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        let mut clone = stream.try_clone().unwrap();
        clone.write_all(b"from the clone").unwrap();
        drop(clone);
        // The socket stays open while one descriptor does.
        (&stream).write_all(b"!").unwrap();
        stream.local_addr().unwrap()
    });
    let (mut server, peer) = listener.accept().await.unwrap();
    let mut buf = [0u8; 15];
    server.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"from the clone!");
    assert_eq!(client.await.unwrap(), peer);
}

#[tokio::test]
async fn std_udp_sockets_exchange_datagrams_with_tokio_ones() {
    let tokio_sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let tokio_addr = tokio_sock.local_addr().unwrap();
    let std_sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let std_addr = std_sock.local_addr().unwrap();
    std_sock.send_to(b"ping", tokio_addr).unwrap();
    let mut buf = [0u8; 16];
    let (n, from) = tokio_sock.recv_from(&mut buf).await.unwrap();
    assert_eq!((&buf[..n], from), (&b"ping"[..], std_addr));
    tokio_sock.send_to(b"pong", std_addr).await.unwrap();
    let got = tokio::task::spawn_blocking(move || {
        std_sock
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut buf = [0u8; 16];
        let (n, from) = std_sock.recv_from(&mut buf).unwrap();
        (buf[..n].to_vec(), from)
    })
    .await
    .unwrap();
    assert_eq!(got, (b"pong".to_vec(), tokio_addr));
}

#[tokio::test]
async fn a_std_udp_socket_moves_to_tokio_and_back() {
    let std_sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    std_sock.set_nonblocking(true).unwrap();
    let addr = std_sock.local_addr().unwrap();
    let sock = tokio::net::UdpSocket::from_std(std_sock).unwrap();
    assert_eq!(sock.local_addr().unwrap(), addr);
    let peer = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    peer.connect(addr).await.unwrap();
    peer.send(b"x").await.unwrap();
    let mut buf = [0u8; 4];
    let n = sock.recv(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"x");
    let back = sock.into_std().unwrap();
    assert_eq!(back.local_addr().unwrap(), addr);
    let mut one = [0u8; 1];
    assert_eq!(
        back.recv(&mut one).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
}

#[test]
fn a_udp_socket_bound_before_the_runtime_moves_into_it() {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let addr = socket.local_addr().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let socket = tokio::net::UdpSocket::from_std(socket).unwrap();
        // The address the program saw before the runtime stays its own.
        assert_eq!(socket.local_addr().unwrap(), addr);
        let peer = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        peer.send_to(b"hi", addr).await.unwrap();
        let mut buf = [0u8; 8];
        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"hi");
    });
}
