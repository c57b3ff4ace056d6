//! TCP semantics: on real loopback in the plain build, on the simulated
//! network under `cargo sim test`.

use std::io::ErrorKind;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpListener, TcpSocket, TcpStream};

async fn listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    (listener, addr)
}

#[tokio::test]
async fn echo_round_trip() {
    let (listener, addr) = listener().await;
    let server = tokio::spawn(async move {
        let (mut stream, peer) = listener.accept().await.unwrap();
        assert!(peer.ip().is_loopback());
        let mut buf = [0u8; 64];
        loop {
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            stream.write_all(&buf[..n]).await.unwrap();
        }
    });
    let mut client = TcpStream::connect(addr).await.unwrap();
    assert_eq!(client.peer_addr().unwrap(), addr);
    assert!(client.local_addr().unwrap().ip().is_loopback());
    for message in [&b"hello"[..], b"world", &[7u8; 10_000]] {
        client.write_all(message).await.unwrap();
        let mut back = vec![0u8; message.len()];
        client.read_exact(&mut back).await.unwrap();
        assert_eq!(back, message);
    }
    client.shutdown().await.unwrap();
    server.await.unwrap();
}

#[tokio::test]
async fn connecting_to_a_port_with_no_listener_is_refused() {
    let (listener, addr) = listener().await;
    drop(listener);
    let err = TcpStream::connect(addr).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionRefused);
}

#[tokio::test]
async fn a_connect_completes_into_the_backlog_before_accept() {
    let (listener, addr) = listener().await;
    // Nobody accepts yet, but the connection is established.
    let mut client = TcpStream::connect(addr).await.unwrap();
    client.write_all(b"early").await.unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    let mut buf = [0u8; 5];
    server.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"early");
}

#[tokio::test]
async fn shutting_the_write_half_makes_the_peer_read_eof() {
    let (listener, addr) = listener().await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    client.write_all(b"last words").await.unwrap();
    client.shutdown().await.unwrap();
    let mut got = Vec::new();
    server.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, b"last words");
    // The other direction still works.
    server.write_all(b"reply").await.unwrap();
    let mut buf = [0u8; 5];
    client.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"reply");
}

#[tokio::test]
async fn dropping_the_stream_makes_the_peer_read_eof() {
    let (listener, addr) = listener().await;
    let client = TcpStream::connect(addr).await.unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    drop(client);
    let mut buf = [0u8; 8];
    assert_eq!(server.read(&mut buf).await.unwrap(), 0);
}

#[tokio::test]
async fn writes_after_the_peer_closed_first_succeed_then_fail_with_broken_pipe() {
    let (listener, addr) = listener().await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    drop(server);
    // Wait for the peer's FIN.
    let mut buf = [0u8; 1];
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
    // The first write is accepted; the peer answers it with an RST.
    client.write_all(b"into the void").await.unwrap();
    let mut error = None;
    for _ in 0..1000 {
        tokio::task::yield_now().await;
        if let Err(e) = client.write_all(b"more").await {
            error = Some(e);
            break;
        }
    }
    let error = error.expect("a write eventually fails");
    assert_eq!(error.kind(), ErrorKind::BrokenPipe, "{error}");
}

/// A connection whose server has bytes it did not read (`sent` by the
/// client), so that dropping the server resets it: (client, server).
async fn with_unread_data(sent: &[u8]) -> (TcpStream, TcpStream) {
    let (listener, addr) = listener().await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    client.write_all(sent).await.unwrap();
    server.readable().await.unwrap();
    (client, server)
}

/// Waits, without reading, until its peer's RST has reached `client`: its
/// readiness says the read side closed.
async fn reset_arrives(client: &TcpStream) {
    // Bounded: the RST arrives after at most a link's latency.
    for _ in 0..1000 {
        let ready = client.ready(Interest::READABLE).await.unwrap();
        if ready.is_read_closed() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    panic!("no reset arrived");
}

#[tokio::test]
async fn dropping_a_stream_with_unread_data_resets_the_connection() {
    let (mut client, server) = with_unread_data(b"never read").await;
    drop(server); // with unread data: an RST, not a FIN
    let mut buf = [0u8; 16];
    let mut result = client.read(&mut buf).await;
    // Bounded: the RST arrives after at most a link's latency.
    for _ in 0..1000 {
        if result.is_err() {
            break;
        }
        tokio::task::yield_now().await;
        result = client.read(&mut buf).await;
    }
    assert_eq!(result.unwrap_err().kind(), ErrorKind::ConnectionReset);
}

/// What arrived before a reset is still read, then the reset: Linux drops
/// the unsent bytes of a reset connection, not the unread ones (an HTTP
/// server's early `413` to a body it will not read, then its RST).
#[tokio::test(start_paused = true)]
async fn bytes_that_arrived_before_a_reset_are_read_before_it() {
    let (mut client, mut server) = with_unread_data(b"a body never read").await;
    server.write_all(b"413").await.unwrap();
    client.readable().await.unwrap();
    drop(server); // with unread data: an RST
    reset_arrives(&client).await;
    let mut buf = [0u8; 16];
    let n = client.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"413");
    let error = client.read(&mut buf).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ConnectionReset);
    // The error is reported once: then the stream has ended.
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
}

/// A connection its peer reset, and the client's own next call: the
/// stream and its peer's reset, once the reset has arrived.
async fn reset_by_its_peer() -> TcpStream {
    let (client, server) = with_unread_data(b"never read").await;
    drop(server); // with unread data: an RST
    reset_arrives(&client).await;
    client
}

/// The reset's error goes to the first call that asks, a write here: then
/// writes fail with a broken pipe and reads find the end of the stream,
/// as on Linux.
#[tokio::test(start_paused = true)]
async fn after_a_reset_the_first_write_gets_it_then_a_broken_pipe() {
    let mut client = reset_by_its_peer().await;
    let first = client.write(b"a").await.unwrap_err();
    assert_eq!(first.kind(), ErrorKind::ConnectionReset, "{first}");
    let second = client.write(b"b").await.unwrap_err();
    assert_eq!(second.kind(), ErrorKind::BrokenPipe, "{second}");
    let mut buf = [0u8; 4];
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
}

/// `SO_ERROR` (`take_error`) takes the reset's error as a read or write
/// would: reported once.
#[tokio::test(start_paused = true)]
async fn take_error_takes_a_reset_once() {
    let mut client = reset_by_its_peer().await;
    let error = client.take_error().unwrap().expect("the reset");
    assert_eq!(error.kind(), ErrorKind::ConnectionReset, "{error}");
    assert!(client.take_error().unwrap().is_none());
    let mut buf = [0u8; 4];
    assert_eq!(client.read(&mut buf).await.unwrap(), 0);
    let write = client.write(b"a").await.unwrap_err();
    assert_eq!(write.kind(), ErrorKind::BrokenPipe, "{write}");
}

#[tokio::test]
async fn binding_a_port_in_use_fails() {
    let (_listener, addr) = listener().await;
    let err = TcpListener::bind(addr).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
}

#[tokio::test]
async fn peek_readiness_and_try_io() {
    let (listener, addr) = listener().await;
    let client = TcpStream::connect(addr).await.unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(
        server.try_read(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    client.writable().await.unwrap();
    assert_eq!(client.try_write(b"ping").unwrap(), 4);
    server.readable().await.unwrap();
    let mut peeked = [0u8; 4];
    let n = server.peek(&mut peeked).await.unwrap();
    assert!(n > 0);
    server.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"ping");
    assert_eq!(&peeked[..n], &b"ping"[..n]);
}

#[tokio::test]
async fn split_into_split_and_reunite() {
    let (listener, addr) = listener().await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    {
        let (mut r, mut w) = client.split();
        w.write_all(b"x").await.unwrap();
        let _ = &mut r;
    }
    let (mut sr, sw) = server.into_split();
    let mut b = [0u8; 1];
    sr.read_exact(&mut b).await.unwrap();
    let server = sr.reunite(sw).unwrap();
    assert!(server.peer_addr().is_ok());
    // Dropping an owned write half shuts the write side down.
    let (mut cr, cw) = client.into_split();
    drop(cw);
    let (mut r2, _w2) = server.into_split();
    let mut rest = Vec::new();
    r2.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());
    let _ = &mut cr;
}

#[tokio::test]
async fn socket_options_round_trip() {
    let (listener, addr) = listener().await;
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_nodelay(true).unwrap();
    socket.set_reuseaddr(true).unwrap();
    assert!(socket.reuseaddr().unwrap());
    let stream = socket.connect(addr).await.unwrap();
    assert!(stream.nodelay().unwrap());
    stream.set_ttl(42).unwrap();
    assert_eq!(stream.ttl().unwrap(), 42);
    drop(listener);
}

#[tokio::test]
async fn tcp_socket_bind_and_listen() {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(16).unwrap();
    let addr = listener.local_addr().unwrap();
    assert_ne!(addr.port(), 0);
    let client = TcpStream::connect(addr).await.unwrap();
    let (_server, peer) = listener.accept().await.unwrap();
    assert_eq!(peer, client.local_addr().unwrap());
}

#[tokio::test]
async fn lookup_host_resolves_localhost() {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host("localhost:80")
        .await
        .unwrap()
        .collect();
    assert!(addrs.iter().any(|a| a.ip().is_loopback() && a.port() == 80));
    let direct: Vec<SocketAddr> = tokio::net::lookup_host("127.0.0.1:5")
        .await
        .unwrap()
        .collect();
    assert_eq!(direct, vec!["127.0.0.1:5".parse().unwrap()]);
}

#[tokio::test]
async fn a_slice_of_addresses_is_an_address_to_bind_and_look_up() {
    let addrs = [SocketAddr::from(([127, 0, 0, 1], 0))];
    let listener = TcpListener::bind(&addrs[..]).await.unwrap();
    assert_ne!(listener.local_addr().unwrap().port(), 0);
    let found: Vec<SocketAddr> = tokio::net::lookup_host(&addrs[..]).await.unwrap().collect();
    assert_eq!(found, addrs);
}

#[tokio::test]
async fn a_socket_bound_to_port_zero_knows_its_port_before_listening() {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let bound = socket.local_addr().unwrap();
    assert_ne!(bound.port(), 0);
    let listener = socket.listen(8).unwrap();
    assert_eq!(listener.local_addr().unwrap(), bound);
}

#[tokio::test]
async fn poll_read_ready_sees_data_from_the_peer() {
    let (listener, addr) = listener().await;
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    client.write_all(b"hi").await.unwrap();
    std::future::poll_fn(|cx| server.poll_read_ready(cx))
        .await
        .unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(server.try_read(&mut buf).unwrap(), 2);
    // Nothing more: WouldBlock, then data again after the peer writes.
    assert_eq!(
        server.try_read(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
    client.write_all(b"yo").await.unwrap();
    server.readable().await.unwrap();
    assert_eq!(server.try_read(&mut buf).unwrap(), 2);
    assert_eq!(&buf[..2], b"yo");
}

#[tokio::test]
async fn every_task_waiting_to_accept_is_woken() {
    // Two tasks wait on one listener; the later one gives up. The earlier
    // one must still get the connection.
    let (listener, addr) = listener().await;
    let listener = std::sync::Arc::new(listener);
    let l = listener.clone();
    let first = tokio::spawn(async move { l.accept().await.map(|_| ()) });
    tokio::task::yield_now().await;
    let l = listener.clone();
    let second = tokio::spawn(async move {
        tokio::time::timeout(std::time::Duration::from_millis(20), l.accept())
            .await
            .is_err()
    });
    assert!(second.await.unwrap(), "the second waiter timed out");
    let _client = TcpStream::connect(addr).await.unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), first)
        .await
        .expect("the first waiter got the connection")
        .unwrap()
        .unwrap();
}

/// A socket outlives the `block_on` that made it: its methods and its drop
/// work outside the runtime's context, as long as the runtime lives.
#[test]
fn a_listener_used_and_dropped_outside_the_runtime_context() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    assert_ne!(addr.port(), 0);
    drop(listener);
    let refused = runtime.block_on(tokio::net::TcpStream::connect(addr));
    assert_eq!(
        refused.unwrap_err().kind(),
        std::io::ErrorKind::ConnectionRefused
    );
}

/// A `try_io` whose closure says `WouldBlock` clears the readiness; new
/// data makes the stream readable again, with every byte still there. (How
/// long a cleared readiness waits is racy on real sockets, which report
/// spurious events: `sim-net/tests/network.rs` checks the simulator's.)
#[tokio::test(start_paused = true)]
async fn try_io_would_block_clears_readiness_until_new_data() {
    use tokio::io::Interest;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut client = TcpStream::connect(addr).await.unwrap();
    let (server, _) = listener.accept().await.unwrap();
    client.write_all(b"a").await.unwrap();
    server.readable().await.unwrap();
    let cleared = server.try_io(Interest::READABLE, || {
        Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
    });
    assert_eq!(cleared.unwrap_err().kind(), ErrorKind::WouldBlock);
    client.write_all(b"b").await.unwrap();
    server.readable().await.unwrap();
    let mut buf = [0u8; 2];
    let mut got = 0;
    // Both bytes are there to read, in one or two reads.
    while got < 2 {
        match server.try_read(&mut buf[got..]) {
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => server.readable().await.unwrap(),
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(&buf, b"ab");
}

/// `SO_LINGER` of zero makes a close abortive: the peer's next read fails
/// with `ConnectionReset` instead of seeing the end of the stream.
#[tokio::test]
async fn a_zero_linger_close_resets_the_peer() {
    let (listener, addr) = listener().await;
    let client = TcpStream::connect(addr).await.unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    client.set_zero_linger().unwrap();
    assert_eq!(client.linger().unwrap(), Some(std::time::Duration::ZERO));
    drop(client);
    let mut buf = [0u8; 8];
    let err = server.read(&mut buf).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ConnectionReset);
}

/// Small writes with Nagle on (the default) and off all arrive, in order,
/// whatever the ACKs do; a shutdown sends what Nagle held before its FIN.
#[tokio::test]
async fn small_writes_arrive_in_order_with_nagle_on_and_off() {
    for nodelay in [false, true] {
        let (listener, addr) = listener().await;
        let mut client = TcpStream::connect(addr).await.unwrap();
        client.set_nodelay(nodelay).unwrap();
        assert_eq!(client.nodelay().unwrap(), nodelay);
        let (mut server, _) = listener.accept().await.unwrap();
        for i in 0..50u8 {
            client.write_all(&[i]).await.unwrap();
        }
        client.shutdown().await.unwrap();
        let mut got = Vec::new();
        server.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, (0..50u8).collect::<Vec<_>>());
    }
}

/// `TCP_QUICKACK` can be set both ways; reading it back says whether the
/// connection acknowledges at once right now, which Linux's own traffic
/// heuristics may change, so only a set-then-read without traffic is
/// asserted.
#[tokio::test]
async fn quickack_set_then_read() {
    let (listener, addr) = listener().await;
    let client = TcpStream::connect(addr).await.unwrap();
    let _server = listener.accept().await.unwrap();
    client.set_quickack(true).unwrap();
    assert!(client.quickack().unwrap());
    client.set_quickack(false).unwrap();
    assert!(!client.quickack().unwrap());
}

/// A port holds a listener per address that does not overlap another's:
/// `127.0.0.1:p` and `[::1]:p` side by side, each accepting its own
/// connections, where a second `127.0.0.1:p` or a dual-stack `[::]:p`
/// finds the port taken.
#[tokio::test]
async fn the_two_loopbacks_share_a_port_and_each_accepts_its_own() {
    let v4 = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = v4.local_addr().unwrap().port();
    let v6 = TcpListener::bind(format!("[::1]:{port}")).await.unwrap();
    let taken = TcpListener::bind(format!("127.0.0.1:{port}")).await;
    assert_eq!(taken.unwrap_err().kind(), ErrorKind::AddrInUse);
    let wide = TcpListener::bind(format!("[::]:{port}")).await;
    assert_eq!(wide.unwrap_err().kind(), ErrorKind::AddrInUse);
    for (listener, to) in [
        (&v4, format!("127.0.0.1:{port}")),
        (&v6, format!("[::1]:{port}")),
    ] {
        let client = TcpStream::connect(&to).await.unwrap();
        let (_, peer) = listener.accept().await.unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(peer.is_ipv6(), to.starts_with('['));
    }
}
