//! `std::net::UdpSocket` on the simulated network: a datagram socket binds
//! on its first use if it was not bound (as Linux binds an ephemeral port on
//! the first send), sends never wait, and receives wait in virtual time.

use super::{drive, errno_of, lock, on_net, unspecified, Phase, Shared, View};
use crate::net::SocketId;
use std::net::SocketAddr;

/// The socket's simulated id, binding it to an ephemeral port of the
/// unspecified address first when it is not bound yet.
pub(super) fn ensure_bound(sock: &Shared, v: &View) -> Result<SocketId, i32> {
    match v.phase {
        Phase::Datagram(id) => Ok(id),
        Phase::Fresh(_) => bind(sock, v, unspecified(v.ipv6)),
        _ => Err(libc::EINVAL),
    }
}

/// `bind`.
pub(super) fn bind(sock: &Shared, v: &View, addr: SocketAddr) -> Result<SocketId, i32> {
    if !matches!(v.phase, Phase::Fresh(None)) {
        return Err(libc::EINVAL);
    }
    let id = on_net(v.core, |net| net.udp_bind(addr))?.map_err(|e| errno_of(&e))?;
    lock(sock).phase = Phase::Datagram(id);
    Ok(id)
}

/// `connect`: the peer that `send` goes to and `recv` hears from.
pub(super) fn connect(sock: &Shared, v: &View, addr: SocketAddr) -> Result<(), i32> {
    let id = ensure_bound(sock, v)?;
    on_net(v.core, |net| net.udp_connect(id, addr))?.map_err(|e| errno_of(&e))
}

/// `recvfrom`: the next datagram (truncated to `buf`) and its source.
pub(super) fn recv(
    sock: &Shared,
    v: &View,
    buf: &mut [u8],
    flags: i32,
) -> Result<(usize, Option<SocketAddr>), i32> {
    let id = ensure_bound(sock, v)?;
    let blocking = !v.nonblocking && flags & libc::MSG_DONTWAIT == 0;
    let peek = flags & libc::MSG_PEEK != 0;
    let (n, from) = drive(v.core, blocking, v.read_timeout, |net, cx| {
        net.udp_poll_recv_from(id, cx, buf, peek)
            .map(|r| r.map_err(|e| errno_of(&e)))
    })?;
    Ok((n, Some(from)))
}

/// `sendto` (`to`) or `send` (the connected peer): never waits.
pub(super) fn send(
    sock: &Shared,
    v: &View,
    buf: &[u8],
    to: Option<SocketAddr>,
) -> Result<usize, i32> {
    let id = ensure_bound(sock, v)?;
    let to = match to {
        Some(to) => to,
        None => on_net(v.core, |net| net.udp_peer_addr(id))?.map_err(|_| libc::EDESTADDRREQ)?,
    };
    on_net(v.core, |net| net.udp_send_to(id, buf, to))?.map_err(|e| errno_of(&e))
}
