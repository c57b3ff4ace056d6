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

/// `addr` as a C socket address.
fn sockaddr_in(addr: std::net::SocketAddr) -> libc::sockaddr_in {
    let std::net::SocketAddr::V4(v4) = addr else {
        panic!("an IPv4 address")
    };
    // SAFETY: a plain C struct, valid when zeroed.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    sa.sin_family = libc::AF_INET as libc::sa_family_t;
    sa.sin_port = v4.port().to_be();
    sa.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
    sa
}

#[tokio::test]
async fn libc_message_calls_on_a_tokio_socket_reach_it() {
    use std::os::fd::AsRawFd;
    use tokio::io::Interest;
    let a = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let mut to = sockaddr_in(b.local_addr().unwrap());
    let mut payload = *b"two parts";
    let (head, tail) = payload.split_at_mut(4);
    let mut out = [
        libc::iovec {
            iov_base: head.as_mut_ptr().cast(),
            iov_len: head.len(),
        },
        libc::iovec {
            iov_base: tail.as_mut_ptr().cast(),
            iov_len: tail.len(),
        },
    ];
    // SAFETY: a plain C struct, valid when zeroed.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut to as *mut libc::sockaddr_in).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    msg.msg_iov = out.as_mut_ptr();
    msg.msg_iovlen = out.len();
    a.writable().await.unwrap();
    let sent = a
        .try_io(Interest::WRITABLE, || {
            // SAFETY: `msg` points at live buffers and a live address.
            let n = unsafe { libc::sendmsg(a.as_raw_fd(), &msg, 0) };
            if n < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(n as usize)
            }
        })
        .unwrap();
    assert_eq!(sent, 9);

    let mut buf = [0u8; 64];
    // SAFETY: a plain C struct, valid when zeroed.
    let mut from: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let got = loop {
        b.readable().await.unwrap();
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: a plain C struct, valid when zeroed.
        let mut msgs: [libc::mmsghdr; 1] = unsafe { std::mem::zeroed() };
        msgs[0].msg_hdr.msg_name = (&mut from as *mut libc::sockaddr_in).cast();
        msgs[0].msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        msgs[0].msg_hdr.msg_iov = &mut iov;
        msgs[0].msg_hdr.msg_iovlen = 1;
        let result = b.try_io(Interest::READABLE, || {
            // SAFETY: `msgs` points at live buffers.
            let n = unsafe {
                libc::recvmmsg(b.as_raw_fd(), msgs.as_mut_ptr(), 1, 0, std::ptr::null_mut())
            };
            if n < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok((n, msgs[0].msg_len as usize))
            }
        });
        match result {
            Ok(got) => break got,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(got, (1, 9));
    assert_eq!(&buf[..9], b"two parts");
    assert_eq!(from.sin_port, a.local_addr().unwrap().port().to_be());
}

/// A UDP port holds a socket per address that does not overlap another's:
/// `127.0.0.1:p` and `[::1]:p` side by side, each receiving what is sent
/// to its own address, where a second `127.0.0.1:p` finds the port taken.
#[tokio::test]
async fn the_two_loopbacks_share_a_udp_port_and_each_receives_its_own() {
    let v4 = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let port = v4.local_addr().unwrap().port();
    let v6 = UdpSocket::bind(format!("[::1]:{port}")).await.unwrap();
    let taken = UdpSocket::bind(format!("127.0.0.1:{port}")).await;
    assert_eq!(taken.unwrap_err().kind(), std::io::ErrorKind::AddrInUse);
    let sender4 = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let sender6 = UdpSocket::bind("[::1]:0").await.unwrap();
    sender6
        .send_to(b"six", format!("[::1]:{port}"))
        .await
        .unwrap();
    sender4
        .send_to(b"four", format!("127.0.0.1:{port}"))
        .await
        .unwrap();
    let mut buf = [0u8; 8];
    let (n, from) = v4.recv_from(&mut buf).await.unwrap();
    assert_eq!(
        (&buf[..n], from),
        (&b"four"[..], sender4.local_addr().unwrap())
    );
    let (n, from) = v6.recv_from(&mut buf).await.unwrap();
    assert_eq!(
        (&buf[..n], from),
        (&b"six"[..], sender6.local_addr().unwrap())
    );
    // The first goes; the port stays the other's until it goes too.
    drop(v4);
    sender6
        .send_to(b"again", format!("[::1]:{port}"))
        .await
        .unwrap();
    let (n, _) = v6.recv_from(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"again");
}

/// tokio learns that a datagram waits when its driver next turns: a
/// `try_recv` right after the send (no `.await` between) finds nothing,
/// though the kernel has it; once `readable` returned, it is there.
#[tokio::test]
async fn a_datagram_is_seen_from_the_drivers_next_turn() {
    let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    a.send_to(b"x", b.local_addr().unwrap()).await.unwrap();
    let mut buf = [0u8; 4];
    assert_eq!(
        b.try_recv_from(&mut buf).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    b.readable().await.unwrap();
    assert_eq!(b.try_recv_from(&mut buf).unwrap().0, 1);
}
