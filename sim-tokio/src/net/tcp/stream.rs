use super::split::{split, ReadHalf, WriteHalf};
use super::split_owned::{split_owned, OwnedReadHalf, OwnedWriteHalf};
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::net::fd::Placeholder;
use bytes_dep::BufMut;
use sim_net::{with_net, SocketId};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

/// A TCP connection between two simulated sockets: reliable and ordered,
/// with seeded latency and flow control.
pub struct TcpStream {
    pub(crate) id: SocketId,
    quickack: AtomicBool,
    fd: Placeholder,
}

pub(crate) fn escape(what: &str) -> io::Error {
    io::Error::other(format!(
        "sim: escape refused: {what}. A real socket's traffic and timing are outside the \
         simulation, so the run could not be replayed from its seed. Use tokio::net's \
         simulated sockets (TcpStream::connect, TcpListener::bind) instead."
    ))
}

fn would_block() -> io::Error {
    io::ErrorKind::WouldBlock.into()
}

impl TcpStream {
    pub(crate) fn from_id(id: SocketId) -> TcpStream {
        TcpStream {
            id,
            quickack: AtomicBool::new(false),
            fd: Placeholder::default(),
        }
    }

    /// Connects to the first address that accepts: a SYN crosses the link
    /// and a SYN-ACK comes back (one round trip of virtual latency).
    ///
    /// # Errors
    /// `ConnectionRefused` when nothing listens there (or the host
    /// refuses). A partitioned or black-holed host never answers: use a
    /// timeout.
    pub async fn connect<A: ToSocketAddrs>(addr: A) -> io::Result<TcpStream> {
        each_addr(addr, |addr| Self::connect_addr(addr, None)).await
    }

    pub(crate) async fn connect_addr(
        addr: SocketAddr,
        bind: Option<SocketAddr>,
    ) -> io::Result<TcpStream> {
        let id = with_net(|net| net.tcp_connect(addr, bind))?;
        // Dropping this (an error, or the connect future cancelled) closes
        // the attempt.
        let stream = TcpStream::from_id(id);
        std::future::poll_fn(|cx| with_net(|net| net.tcp_poll_connect(id, cx))).await?;
        Ok(stream)
    }

    /// Refused: a real `std::net::TcpStream` is outside the simulation.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        let what = match stream.peer_addr() {
            Ok(peer) => format!("TcpStream::from_std on a real connection to {peer}"),
            Err(_) => "TcpStream::from_std on a real, unconnected socket (connect with \
                       TcpSocket::from_std_stream(..).connect(..) instead)"
                .to_string(),
        };
        Err(escape(&what))
    }

    /// Refused: a simulated connection has no real socket to become.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        Err(escape(
            "TcpStream::into_std would hand a simulated connection to real code",
        ))
    }

    /// The local address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        with_net(|net| net.tcp_local_addr(self.id))
    }

    /// Pending socket errors: none are kept in a simulation.
    ///
    /// # Errors
    /// Never.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }

    /// The peer's address.
    ///
    /// # Errors
    /// When not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        with_net(|net| net.tcp_peer_addr(self.id))
    }

    /// Polls for data to peek at, without taking it.
    pub fn poll_peek(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        let dst = buf.initialize_unfilled();
        let n = ready!(with_net(|net| net.tcp_poll_read(self.id, cx, dst, true)))?;
        buf.advance(n);
        Poll::Ready(Ok(n))
    }

    pub(crate) fn poll_ready_interest(
        &self,
        interest: Interest,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Ready>> {
        with_net(|net| {
            let mut ready = Ready::EMPTY;
            if interest.is_readable() && net.tcp_read_ready(self.id) {
                ready |= Ready::READABLE;
            }
            if interest.is_writable() && net.tcp_write_ready(self.id) {
                ready |= Ready::WRITABLE;
            }
            if !ready.is_empty() {
                return Poll::Ready(Ok(ready));
            }
            if interest.is_readable() {
                net.tcp_register_read(self.id, cx.waker());
            }
            if interest.is_writable() {
                net.tcp_register_write(self.id, cx.waker());
            }
            Poll::Pending
        })
    }

    /// Waits for any of `interest`.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        std::future::poll_fn(|cx| self.poll_ready_interest(interest, cx)).await
    }

    /// Waits until a read would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn readable(&self) -> io::Result<()> {
        self.ready(Interest::READABLE).await.map(drop)
    }

    /// Polls for read readiness.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_interest(Interest::READABLE, cx)
            .map_ok(drop)
    }

    /// Reads what is there now; `WouldBlock` if nothing is.
    ///
    /// # Errors
    /// `WouldBlock`, `ConnectionReset`, or `NotConnected`.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_net(|net| net.tcp_poll_read(self.id, &mut cx, buf, false)) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(would_block()),
        }
    }

    /// As [`TcpStream::try_read`], into several buffers.
    ///
    /// # Errors
    /// As [`TcpStream::try_read`].
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        let total: usize = bufs.iter().map(|b| b.len()).sum();
        let mut tmp = vec![0u8; total];
        let n = self.try_read(&mut tmp)?;
        let mut copied = 0;
        for buf in bufs.iter_mut() {
            if copied == n {
                break;
            }
            let take = buf.len().min(n - copied);
            buf[..take].copy_from_slice(&tmp[copied..copied + take]);
            copied += take;
        }
        Ok(n)
    }

    /// As [`TcpStream::try_read`], into a `BufMut`.
    ///
    /// # Errors
    /// As [`TcpStream::try_read`].
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let mut tmp = vec![0u8; buf.remaining_mut().min(64 * 1024)];
        let n = self.try_read(&mut tmp)?;
        buf.put_slice(&tmp[..n]);
        Ok(n)
    }

    /// Waits until a write would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn writable(&self) -> io::Result<()> {
        self.ready(Interest::WRITABLE).await.map(drop)
    }

    /// Polls for write readiness.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_ready_interest(Interest::WRITABLE, cx)
            .map_ok(drop)
    }

    /// Writes what the window takes now; `WouldBlock` if it takes nothing.
    ///
    /// # Errors
    /// `WouldBlock`, `BrokenPipe`, or `NotConnected`.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let mut cx = Context::from_waker(Waker::noop());
        match with_net(|net| net.tcp_poll_write(self.id, &mut cx, buf)) {
            Poll::Ready(result) => result,
            Poll::Pending => Err(would_block()),
        }
    }

    /// As [`TcpStream::try_write`], from several buffers.
    ///
    /// # Errors
    /// As [`TcpStream::try_write`].
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let joined: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
        self.try_write(&joined)
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
        let mut cx = Context::from_waker(Waker::noop());
        match self.poll_ready_interest(interest, &mut cx) {
            Poll::Ready(Ok(_)) => f(),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Err(would_block()),
        }
    }

    /// Runs `f` each time `interest` is ready, until it does not block.
    ///
    /// # Errors
    /// `f`'s error other than `WouldBlock`.
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut() -> io::Result<R>,
    ) -> io::Result<R> {
        loop {
            self.ready(interest).await?;
            match f() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                result => return result,
            }
        }
    }

    /// Waits for data and copies it without taking it.
    ///
    /// # Errors
    /// As a read.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        std::future::poll_fn(|cx| {
            ready!(crate::sync::budget(cx));
            with_net(|net| net.tcp_poll_read(self.id, cx, buf, true))
        })
        .await
    }

    /// `TCP_NODELAY`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn nodelay(&self) -> io::Result<bool> {
        with_net(|net| net.tcp_nodelay(self.id))
    }

    /// Sets `TCP_NODELAY` (recorded; segments are never delayed here).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        with_net(|net| net.tcp_set_nodelay(self.id, nodelay))
    }

    /// `TCP_QUICKACK`.
    ///
    /// # Errors
    /// Never.
    pub fn quickack(&self) -> io::Result<bool> {
        Ok(self.quickack.load(Ordering::Relaxed))
    }

    /// Sets `TCP_QUICKACK` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        self.quickack.store(quickack, Ordering::Relaxed);
        Ok(())
    }

    /// `SO_LINGER`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        with_net(|net| net.tcp_linger(self.id))
    }

    /// Sets `SO_LINGER` (recorded).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        with_net(|net| net.tcp_set_linger(self.id, dur))
    }

    /// Sets `SO_LINGER` to zero (recorded).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.set_linger(Some(Duration::ZERO))
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn ttl(&self) -> io::Result<u32> {
        with_net(|net| net.tcp_ttl(self.id))
    }

    /// Sets `IP_TTL` (recorded).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        with_net(|net| net.tcp_set_ttl(self.id, ttl))
    }

    /// Borrowed read and write halves, usable at the same time.
    pub fn split<'a>(&'a mut self) -> (ReadHalf<'a>, WriteHalf<'a>) {
        split(self)
    }

    /// Owned read and write halves, for two tasks.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }

    pub(crate) fn poll_read_priv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        ready!(crate::sync::budget(cx));
        let dst = buf.initialize_unfilled();
        let n = ready!(with_net(|net| net.tcp_poll_read(self.id, cx, dst, false)))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }

    pub(crate) fn poll_write_priv(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        with_net(|net| net.tcp_poll_write(self.id, cx, buf))
    }

    pub(crate) fn shutdown_std(&self) -> io::Result<()> {
        with_net(|net| net.tcp_shutdown_write(self.id))
    }
}

impl AsyncRead for TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.poll_read_priv(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_priv(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered: every write is already on its way.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown_std())
    }
}

impl Drop for TcpStream {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::try_with_net(|net| net.tcp_close(id));
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TcpStream");
        if let Some(Ok(local)) = sim_net::try_with_net(|net| net.tcp_local_addr(self.id)) {
            d.field("local", &local);
        }
        if let Some(Ok(peer)) = sim_net::try_with_net(|net| net.tcp_peer_addr(self.id)) {
            d.field("peer", &peer);
        }
        d.finish()
    }
}

impl AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(true)
    }
}

impl AsFd for TcpStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // Safety: the placeholder lives as long as the stream.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl TryFrom<std::net::TcpStream> for TcpStream {
    type Error = io::Error;

    fn try_from(stream: std::net::TcpStream) -> Result<Self, Self::Error> {
        Self::from_std(stream)
    }
}
