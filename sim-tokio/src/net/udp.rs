//! UDP on the simulated network.

use crate::io::{Interest, ReadBuf, Ready};
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::net::fd::Placeholder;
use crate::net::readiness::{self, would_block};
use bytes_dep::BufMut;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Mutex;
use std::task::{ready, Context, Poll, Waker};

#[derive(Debug, Default)]
struct Multicast {
    loop_v4: bool,
    loop_v6: bool,
    ttl_v4: u32,
    groups_v4: Vec<(Ipv4Addr, Ipv4Addr)>,
    groups_v6: Vec<(Ipv6Addr, u32)>,
    tos_v4: u32,
    tclass_v6: u32,
    device: Option<Vec<u8>>,
}

/// A UDP socket on a simulated host. Datagrams cross links that may drop,
/// duplicate or reorder them, by the links' seeded rates.
pub struct UdpSocket {
    id: SocketId,
    multicast: Mutex<Multicast>,
    fd: Placeholder,
}

impl UdpSocket {
    fn from_id(id: SocketId) -> UdpSocket {
        UdpSocket {
            id,
            multicast: Mutex::new(Multicast {
                loop_v4: true,
                loop_v6: true,
                ttl_v4: 1,
                ..Multicast::default()
            }),
            fd: Placeholder::default(),
        }
    }

    fn mc(&self) -> std::sync::MutexGuard<'_, Multicast> {
        self.multicast.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Binds to the first address that works.
    ///
    /// # Errors
    /// `AddrInUse` for a taken port; `AddrNotAvailable` for an address that
    /// is not the host's.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<UdpSocket> {
        each_addr(addr, |addr| async move {
            with_net(|net| net.udp_bind(addr)).map(UdpSocket::from_id)
        })
        .await
    }

    /// Takes a `std::net::UdpSocket` made in the simulation. It should be
    /// in non-blocking mode, as tokio requires.
    ///
    /// # Errors
    /// For a real socket (an escape) or one never bound.
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled; in a debug build, for a socket
    /// in blocking mode, as tokio's debug builds do.
    #[track_caller]
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        crate::util::require_io();
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&socket);
        // A real socket bound before any runtime joins the simulation.
        if !sim_net::std_net::is_sim(fd) && !sim_net::std_net::adopt_real_datagram(fd) {
            let addr = socket
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            return Err(crate::net::tcp::escape_for_udp(&addr));
        }
        match crate::net::fd::take_std(socket) {
            Some(sim_net::std_net::Phase::Datagram(id)) => Ok(UdpSocket::from_id(id)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "UdpSocket::from_std: the socket is not bound",
            )),
        }
    }

    /// The socket as a `std::net::UdpSocket` of the simulation (in
    /// non-blocking mode, as tokio's is).
    ///
    /// # Errors
    /// With no descriptor left.
    pub fn into_std(self) -> io::Result<std::net::UdpSocket> {
        let std = crate::net::fd::give_std(sim_net::std_net::Phase::Datagram(self.id))?;
        // The socket lives on under the descriptor: this handle must not
        // close it.
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.fd));
        Ok(std)
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.udp_local_addr(self.id))
    }

    /// The connected address.
    ///
    /// # Errors
    /// `NotConnected` when not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.udp_peer_addr(self.id))
    }

    /// Connects: `send` goes to the first resolved address, and only its
    /// datagrams are received.
    ///
    /// # Errors
    /// When the address does not resolve.
    pub async fn connect<A: ToSocketAddrs>(&self, addr: A) -> io::Result<()> {
        each_addr(addr, |addr| async move {
            with_socket(self.id, |net| net.udp_connect(self.id, addr))
        })
        .await
    }

    fn poll_ready_interest(
        &self,
        interest: Interest,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Ready>> {
        with_socket(self.id, |net| {
            let mut ready = Ready::EMPTY;
            if interest.is_readable() && net.udp_read_ready(self.id) {
                ready |= Ready::READABLE;
            }
            if interest.is_writable() {
                // A datagram send never waits.
                ready |= Ready::WRITABLE;
            }
            if ready.is_empty() {
                net.udp_register_read(self.id, cx.waker());
                Poll::Pending
            } else {
                Poll::Ready(Ok(ready))
            }
        })
    }

    /// Waits for any of `interest`.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        std::future::poll_fn(|cx| self.poll_ready_interest(interest, cx)).await
    }

    /// Waits until a send would not wait (at once: sends never wait).
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// Polls for write readiness.
    pub fn poll_send_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_interest(Interest::WRITABLE, cx)
            .map_ok(drop)
    }

    /// Sends to the connected peer.
    ///
    /// # Errors
    /// `NotConnected`, or a datagram over 65507 bytes.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        // Through the poll: a send spends the task's budget, as tokio's.
        std::future::poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Polls a send to the connected peer.
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        Poll::Ready(self.try_send(buf))
    }

    /// Sends to the connected peer now.
    ///
    /// # Errors
    /// `NotConnected`, or a datagram over 65507 bytes.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        let peer = self.peer_addr()?;
        self.try_send_to(buf, peer)
    }

    /// Waits until a datagram is waiting.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Polls for read readiness.
    pub fn poll_recv_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_interest(Interest::READABLE, cx)
            .map_ok(drop)
    }

    /// Receives a datagram from the connected peer.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv_from(buf).await.map(|(n, _)| n)
    }

    /// Polls for a datagram.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.poll_recv_from(cx, buf).map_ok(drop)
    }

    /// Receives a waiting datagram; `WouldBlock` if none.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_recv_from(buf).map(|(n, _)| n)
    }

    /// As [`UdpSocket::try_recv`], into a `BufMut`.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.try_recv_buf_from(buf).map(|(n, _)| n)
    }

    /// Waits for a datagram, into a `BufMut`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.recv_buf_from(buf).await.map(|(n, _)| n)
    }

    /// As [`UdpSocket::try_recv_from`], into a `BufMut`.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let mut tmp = vec![0u8; buf.remaining_mut().min(sim_net::udp::DATAGRAM_MAX)];
        let (n, from) = self.try_recv_from(&mut tmp)?;
        buf.put_slice(&tmp[..n]);
        Ok((n, from))
    }

    /// Waits for a datagram from the connected peer and copies it without
    /// taking it.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.peek_from(buf).await.map(|(n, _)| n)
    }

    /// Polls for a datagram to peek at.
    pub fn poll_peek(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.poll_peek_from(cx, buf).map_ok(drop)
    }

    /// Peeks at a waiting datagram; `WouldBlock` if none.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_peek_from(buf).map(|(n, _)| n)
    }

    /// Waits for a datagram and its sender, into a `BufMut`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let mut tmp = vec![0u8; buf.remaining_mut().min(sim_net::udp::DATAGRAM_MAX)];
        let (n, from) = self.recv_from(&mut tmp).await?;
        buf.put_slice(&tmp[..n]);
        Ok((n, from))
    }

    /// Sends a datagram to `target` (resolving names).
    ///
    /// # Errors
    /// When `target` does not resolve, or the datagram is too large.
    pub async fn send_to<A: ToSocketAddrs>(&self, buf: &[u8], target: A) -> io::Result<usize> {
        each_addr(target, |addr| {
            std::future::poll_fn(move |cx| self.poll_send_to(cx, buf, addr))
        })
        .await
    }

    /// Polls a send to `target`.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        Poll::Ready(self.try_send_to(buf, target))
    }

    /// Sends a datagram to `target` now.
    ///
    /// # Errors
    /// A datagram over 65507 bytes.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        with_socket(self.id, |net| net.udp_send_to(self.id, buf, target))
    }

    /// Waits for a datagram and its sender. A datagram longer than `buf` is
    /// truncated, as UDP does.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        std::future::poll_fn(|cx| {
            ready!(crate::sync::budget(cx));
            let polled = with_socket(self.id, |net| {
                net.udp_poll_recv_from(self.id, cx, buf, false)
            });
            // As tokio's: a receive that waits gives its budget unit back.
            crate::sync::restore_budget_if_pending(&polled);
            polled
        })
        .await
    }

    /// Polls for a datagram and its sender.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        ready!(crate::sync::budget(cx));
        let dst = buf.initialize_unfilled();
        let polled = with_socket(self.id, |net| {
            net.udp_poll_recv_from(self.id, cx, dst, false)
        });
        crate::sync::restore_budget_if_pending(&polled);
        let (n, from) = ready!(polled)?;
        buf.advance(n);
        Poll::Ready(Ok(from))
    }

    /// Receives a waiting datagram and its sender; `WouldBlock` if none.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_socket(self.id, |net| {
            net.udp_poll_recv_from(self.id, &mut cx, buf, false)
        }) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(would_block()),
        }
    }

    /// Runs `f` if `interest` is ready now.
    ///
    /// # Errors
    /// `WouldBlock` when not ready; otherwise `f`'s result.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R> {
        // A datagram send never waits: only read readiness is cleared.
        readiness::try_io(
            |cx| self.poll_ready_interest(interest, cx),
            f,
            || {
                if interest.is_readable() {
                    with_socket(self.id, |net| net.udp_clear_read(self.id));
                }
            },
        )
    }

    /// Runs `f` each time `interest` is ready, until it does not block.
    ///
    /// # Errors
    /// `f`'s error other than `WouldBlock`.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        f: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        readiness::async_io(|| self.ready(interest), f).await
    }

    /// Waits for a datagram and copies it without taking it.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        std::future::poll_fn(|cx| {
            with_socket(self.id, |net| {
                net.udp_poll_recv_from(self.id, cx, buf, true)
            })
        })
        .await
    }

    /// Polls for a datagram to peek at.
    pub fn poll_peek_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        let dst = buf.initialize_unfilled();
        let (n, from) = ready!(with_socket(self.id, |net| net
            .udp_poll_recv_from(self.id, cx, dst, true)))?;
        buf.advance(n);
        Poll::Ready(Ok(from))
    }

    /// Peeks at a waiting datagram; `WouldBlock` if none.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_socket(self.id, |net| {
            net.udp_poll_recv_from(self.id, &mut cx, buf, true)
        }) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(would_block()),
        }
    }

    /// Waits for a datagram and returns its sender, leaving it queued.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn peek_sender(&self) -> io::Result<SocketAddr> {
        let mut empty = [0u8; 0];
        self.peek_from(&mut empty).await.map(|(_, from)| from)
    }

    /// Polls for the sender of the next datagram.
    pub fn poll_peek_sender(&self, cx: &mut Context<'_>) -> Poll<io::Result<SocketAddr>> {
        let mut empty = [0u8; 0];
        with_socket(self.id, |net| {
            net.udp_poll_recv_from(self.id, cx, &mut empty, true)
        })
        .map_ok(|(_, a)| a)
    }

    /// The sender of a waiting datagram; `WouldBlock` if none.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_peek_sender(&self) -> io::Result<SocketAddr> {
        let mut empty = [0u8; 0];
        self.try_peek_from(&mut empty).map(|(_, from)| from)
    }

    /// `SO_BROADCAST`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn broadcast(&self) -> io::Result<bool> {
        with_socket(self.id, |net| net.udp_broadcast(self.id))
    }

    /// Sets `SO_BROADCAST` (recorded; broadcast addresses reach no host).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_broadcast(&self, on: bool) -> io::Result<()> {
        with_socket(self.id, |net| net.udp_set_broadcast(self.id, on))
    }

    /// `IP_MULTICAST_LOOP`.
    ///
    /// # Errors
    /// Never.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        Ok(self.mc().loop_v4)
    }

    /// Sets `IP_MULTICAST_LOOP` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        self.mc().loop_v4 = on;
        Ok(())
    }

    /// `IP_MULTICAST_TTL`.
    ///
    /// # Errors
    /// Never.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        Ok(self.mc().ttl_v4)
    }

    /// Sets `IP_MULTICAST_TTL` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        self.mc().ttl_v4 = ttl;
        Ok(())
    }

    /// `IPV6_MULTICAST_LOOP`.
    ///
    /// # Errors
    /// Never.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        Ok(self.mc().loop_v6)
    }

    /// Sets `IPV6_MULTICAST_LOOP` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        self.mc().loop_v6 = on;
        Ok(())
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn ttl(&self) -> io::Result<u32> {
        with_socket(self.id, |net| net.udp_ttl(self.id))
    }

    /// Sets `IP_TTL` (recorded).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        with_socket(self.id, |net| net.udp_set_ttl(self.id, ttl))
    }

    /// `IP_TOS`.
    ///
    /// # Errors
    /// Never.
    pub fn tos_v4(&self) -> io::Result<u32> {
        Ok(self.mc().tos_v4)
    }

    /// `IP_TOS`.
    ///
    /// # Errors
    /// Never.
    #[deprecated = "use `tos_v4()`"]
    pub fn tos(&self) -> io::Result<u32> {
        self.tos_v4()
    }

    /// Sets `IP_TOS` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.mc().tos_v4 = tos;
        Ok(())
    }

    /// Sets `IP_TOS` (recorded).
    ///
    /// # Errors
    /// Never.
    #[deprecated = "use `set_tos_v4()`"]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        self.set_tos_v4(tos)
    }

    /// `IPV6_TCLASS`.
    ///
    /// # Errors
    /// Never.
    pub fn tclass_v6(&self) -> io::Result<u32> {
        Ok(self.mc().tclass_v6)
    }

    /// Sets `IPV6_TCLASS` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.mc().tclass_v6 = tclass;
        Ok(())
    }

    /// `SO_BINDTODEVICE`.
    ///
    /// # Errors
    /// Never.
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        Ok(self.mc().device.clone())
    }

    /// Sets `SO_BINDTODEVICE` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.mc().device = interface.map(<[u8]>::to_vec);
        Ok(())
    }

    /// Joins an IPv4 multicast group (accepted and recorded; multicast
    /// traffic is not simulated).
    ///
    /// # Errors
    /// Never.
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.mc().groups_v4.push((multiaddr, interface));
        Ok(())
    }

    /// Joins an IPv6 multicast group (accepted and recorded).
    ///
    /// # Errors
    /// Never.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.mc().groups_v6.push((*multiaddr, interface));
        Ok(())
    }

    /// Leaves an IPv4 multicast group.
    ///
    /// # Errors
    /// `InvalidInput` for a group not joined.
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        let mut mc = self.mc();
        let before = mc.groups_v4.len();
        mc.groups_v4.retain(|g| *g != (multiaddr, interface));
        if mc.groups_v4.len() == before {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a member of that group",
            ));
        }
        Ok(())
    }

    /// Leaves an IPv6 multicast group.
    ///
    /// # Errors
    /// `InvalidInput` for a group not joined.
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        let mut mc = self.mc();
        let before = mc.groups_v6.len();
        mc.groups_v6.retain(|g| *g != (*multiaddr, interface));
        if mc.groups_v6.len() == before {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a member of that group",
            ));
        }
        Ok(())
    }

    /// Pending socket errors: none are kept in a simulation.
    ///
    /// # Errors
    /// Never.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }
}

impl Drop for UdpSocket {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::std_net::forget(id);
        sim_net::release_socket(id, |net| net.udp_close(id));
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("UdpSocket");
        if let Some(Ok(local)) =
            sim_net::try_with_socket(self.id, |net| net.udp_local_addr(self.id))
        {
            d.field("local", &local);
        }
        d.finish()
    }
}

impl TryFrom<std::net::UdpSocket> for UdpSocket {
    type Error = io::Error;

    fn try_from(stream: std::net::UdpSocket) -> Result<Self, Self::Error> {
        Self::from_std(stream)
    }
}

impl AsRawFd for UdpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd
            .raw_alias(sim_net::std_net::Phase::Datagram(self.id))
    }
}

impl AsFd for UdpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the socket.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
