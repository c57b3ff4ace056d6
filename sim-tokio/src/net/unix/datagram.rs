use super::SocketAddr;
use crate::io::{Interest, ReadBuf, Ready};
use crate::net::fd::Placeholder;
use crate::net::readiness::{self, would_block};
use bytes_dep::BufMut;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::net::Shutdown;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::{Path, PathBuf};
use std::task::{ready, Context, Poll, Waker};

/// A Unix datagram socket on one simulated host. Unix datagrams are
/// reliable and ordered; a full receiver makes senders wait.
pub struct UnixDatagram {
    id: SocketId,
    fd: Placeholder,
}

fn addr(path: Option<PathBuf>) -> SocketAddr {
    SocketAddr::from_path(path.as_deref())
}

impl UnixDatagram {
    pub(crate) fn from_id(id: SocketId) -> UnixDatagram {
        UnixDatagram {
            id,
            fd: Placeholder::default(),
        }
    }

    fn poll_ready_interest(
        &self,
        interest: Interest,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Ready>> {
        with_socket(self.id, |net| {
            let mut ready = Ready::EMPTY;
            if interest.is_readable() && net.unix_dgram_read_ready(self.id) {
                ready |= Ready::READABLE;
            }
            if interest.is_writable() {
                ready |= Ready::WRITABLE;
            }
            if ready.is_empty() {
                net.unix_dgram_register_read(self.id, cx.waker());
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

    /// Waits until a send would not wait.
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

    /// Binds a socket at `path` on this task's host.
    ///
    /// # Errors
    /// `AddrInUse` when the path is bound.
    #[track_caller]
    pub fn bind<P>(path: P) -> io::Result<UnixDatagram>
    where
        P: AsRef<Path>,
    {
        super::bind_socket_file(path.as_ref())?;
        with_net(|net| net.unix_dgram_bind(Some(path.as_ref()))).map(UnixDatagram::from_id)
    }

    /// A connected pair of unnamed sockets.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = with_net(|net| net.unix_dgram_pair());
        Ok((UnixDatagram::from_id(a), UnixDatagram::from_id(b)))
    }

    /// Refused: a real socket is outside the simulation.
    ///
    /// # Errors
    /// Always, naming the escape.
    #[track_caller]
    pub fn from_std(datagram: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        crate::util::require_io();
        drop(datagram);
        Err(crate::net::tcp::stream::escape(
            "UnixDatagram::from_std on a real socket",
        ))
    }

    /// Refused: a simulated socket has no real socket to become.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixDatagram> {
        Err(crate::net::tcp::stream::escape(
            "UnixDatagram::into_std would hand a simulated socket to real code",
        ))
    }

    /// An unnamed socket.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn unbound() -> io::Result<UnixDatagram> {
        with_net(|net| net.unix_dgram_bind(None)).map(UnixDatagram::from_id)
    }

    /// Connects to the socket at `path`.
    ///
    /// # Errors
    /// `NotFound` when nothing is bound there.
    pub fn connect<P: AsRef<Path>>(&self, path: P) -> io::Result<()> {
        with_socket(self.id, |net| {
            net.unix_dgram_connect(self.id, path.as_ref())
        })
    }

    fn try_send_inner(&self, buf: &[u8], to: Option<&Path>) -> io::Result<usize> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_socket(self.id, |net| {
            net.unix_dgram_poll_send(self.id, &mut cx, buf, to)
        }) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(would_block()),
        }
    }

    /// Sends to the connected peer, waiting while it is full.
    ///
    /// # Errors
    /// `NotConnected`, or the peer is gone.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        std::future::poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Sends to the connected peer now.
    ///
    /// # Errors
    /// `WouldBlock` when the peer is full.
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_send_inner(buf, None)
    }

    /// Sends to `target` now.
    ///
    /// # Errors
    /// `WouldBlock` when the receiver is full.
    pub fn try_send_to<P>(&self, buf: &[u8], target: P) -> io::Result<usize>
    where
        P: AsRef<Path>,
    {
        self.try_send_inner(buf, Some(target.as_ref()))
    }

    /// Receives a datagram from the connected peer.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.recv_from(buf).await.map(|(n, _)| n)
    }

    /// Receives a waiting datagram now.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.try_recv_from(buf).map(|(n, _)| n)
    }

    /// As [`UnixDatagram::try_recv_from`], into a `BufMut`.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let mut tmp = vec![0u8; buf.remaining_mut().min(64 * 1024)];
        let (n, from) = self.try_recv_from(&mut tmp)?;
        buf.put_slice(&tmp[..n]);
        Ok((n, from))
    }

    /// Waits for a datagram and its sender, into a `BufMut`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv_buf_from<B: BufMut>(&self, buf: &mut B) -> io::Result<(usize, SocketAddr)> {
        let mut tmp = vec![0u8; buf.remaining_mut().min(64 * 1024)];
        let (n, from) = self.recv_from(&mut tmp).await?;
        buf.put_slice(&tmp[..n]);
        Ok((n, from))
    }

    /// Receives a waiting datagram into a `BufMut`.
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

    /// Sends to `target`, waiting while it is full.
    ///
    /// # Errors
    /// The receiver is gone.
    pub async fn send_to<P>(&self, buf: &[u8], target: P) -> io::Result<usize>
    where
        P: AsRef<Path>,
    {
        std::future::poll_fn(|cx| self.poll_send_to(cx, buf, target.as_ref())).await
    }

    /// Waits for a datagram and its sender.
    ///
    /// # Errors
    /// When the socket is gone.
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        std::future::poll_fn(|cx| {
            ready!(crate::sync::budget(cx));
            with_socket(self.id, |net| {
                net.unix_dgram_poll_recv(self.id, cx, buf, false)
            })
        })
        .await
        .map(|(n, from)| (n, addr(from)))
    }

    /// Polls for a datagram and its sender.
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<SocketAddr>> {
        ready!(crate::sync::budget(cx));
        let dst = buf.initialize_unfilled();
        let (n, from) = ready!(with_socket(self.id, |net| net
            .unix_dgram_poll_recv(self.id, cx, dst, false)))?;
        buf.advance(n);
        Poll::Ready(Ok(addr(from)))
    }

    /// Polls a send to `path`.
    pub fn poll_send_to<P>(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        path: P,
    ) -> Poll<io::Result<usize>>
    where
        P: AsRef<Path>,
    {
        ready!(crate::sync::budget(cx));
        with_socket(self.id, |net| {
            net.unix_dgram_poll_send(self.id, cx, buf, Some(path.as_ref()))
        })
    }

    /// Polls a send to the connected peer.
    pub fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        with_socket(self.id, |net| {
            net.unix_dgram_poll_send(self.id, cx, buf, None)
        })
    }

    /// Polls for a datagram from the connected peer.
    pub fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.poll_recv_from(cx, buf).map_ok(drop)
    }

    /// Receives a waiting datagram and its sender now.
    ///
    /// # Errors
    /// `WouldBlock` when nothing is waiting.
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_socket(self.id, |net| {
            net.unix_dgram_poll_recv(self.id, &mut cx, buf, false)
        }) {
            Poll::Ready(result) => result.map(|(n, from)| (n, addr(from))),
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
                    with_socket(self.id, |net| net.unix_dgram_clear_read(self.id));
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

    /// The bound address (unnamed if not bound).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.unix_local_path(self.id)).map(addr)
    }

    /// The connected address.
    ///
    /// # Errors
    /// `NotConnected` when not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        let path = with_socket(self.id, |net| net.unix_peer_path(self.id))?;
        // The peers of a pair are unnamed.
        Ok(addr(path.filter(|p| {
            !p.as_os_str().as_encoded_bytes().starts_with(b"\0")
        })))
    }

    /// Pending socket errors: none are kept in a simulation.
    ///
    /// # Errors
    /// Never.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }

    /// Shuts reading, writing, or both.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        let (read, write) = match how {
            Shutdown::Read => (true, false),
            Shutdown::Write => (false, true),
            Shutdown::Both => (true, true),
        };
        with_socket(self.id, |net| net.unix_dgram_shutdown(self.id, read, write))
    }
}

impl Drop for UnixDatagram {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::release_socket(id, |net| net.unix_dgram_close(id));
    }
}

impl fmt::Debug for UnixDatagram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixDatagram").finish_non_exhaustive()
    }
}

impl TryFrom<std::os::unix::net::UnixDatagram> for UnixDatagram {
    type Error = io::Error;

    fn try_from(stream: std::os::unix::net::UnixDatagram) -> io::Result<Self> {
        Self::from_std(stream)
    }
}

impl AsRawFd for UnixDatagram {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(false)
    }
}

impl AsFd for UnixDatagram {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the socket.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
