//! UDP on loopback (plain build) and on the simulated network.

use tokio::net::UdpSocket;

#[tokio::test]
async fn send_to_and_recv_from() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b_addr = b.local_addr().unwrap();
    assert_eq!(a.send_to(b"datagram", b_addr).await.unwrap(), 8);
    let mut buf = [0u8; 32];
    let (n, from) = b.recv_from(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"datagram");
    assert_eq!(from, a.local_addr().unwrap());
}

#[tokio::test]
async fn connected_sockets_send_and_recv() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    a.connect(b.local_addr().unwrap()).await.unwrap();
    b.connect(a.local_addr().unwrap()).await.unwrap();
    a.send(b"one").await.unwrap();
    let mut buf = [0u8; 8];
    let n = b.recv(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"one");
    assert_eq!(b.peer_addr().unwrap(), a.local_addr().unwrap());
}

#[tokio::test]
async fn a_long_datagram_is_truncated_and_peek_leaves_it() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    a.send_to(b"0123456789", b.local_addr().unwrap())
        .await
        .unwrap();
    let mut small = [0u8; 4];
    let (n, _) = b.peek_from(&mut small).await.unwrap();
    assert_eq!(&small[..n], b"0123");
    let (n, _) = b.recv_from(&mut small).await.unwrap();
    assert_eq!(n, 4, "the rest of the datagram is dropped");
    assert_eq!(
        b.try_recv(&mut small).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

#[tokio::test]
async fn binding_a_udp_port_in_use_fails() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let err = UdpSocket::bind(a.local_addr().unwrap()).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
}

#[tokio::test]
async fn a_connected_send_to_nothing_makes_the_next_receive_refused() {
    // A port with nothing bound: bind one, note it, close it.
    let gone = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let target = gone.local_addr().unwrap();
    drop(gone);
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    socket.connect(target).await.unwrap();
    socket.send(b"anyone?").await.unwrap();
    let mut buf = [0u8; 16];
    let err = tokio::time::timeout(std::time::Duration::from_secs(5), socket.recv(&mut buf))
        .await
        .expect("the refusal arrives")
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
}
