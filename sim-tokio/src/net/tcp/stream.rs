use super::split::{split, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::net::fd::Placeholder;
use crate::net::readiness::would_block;
use bytes_dep::BufMut;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

/// A TCP connection between two simulated sockets: reliable and ordered,
/// with seeded latency and flow control.
pub struct TcpStream {
    pub(crate) id: SocketId,
    fd: Placeholder,
}

pub(crate) fn escape(what: &str) -> io::Error {
    let message = format!(
        "sim: escape refused: {what}. A real socket's traffic and timing are outside the \
         simulation, so the run could not be replayed from its seed. Use tokio::net's \
         simulated sockets (TcpStream::connect, TcpListener::bind) instead."
    );
    sim_runtime::sweep::note_escape(&message);
    io::Error::other(message)
}

impl TcpStream {
    pub(crate) fn from_id(id: SocketId) -> TcpStream {
        TcpStream {
            id,
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
        std::future::poll_fn(|cx| with_socket(id, |net| net.tcp_poll_connect(id, cx))).await?;
        Ok(stream)
    }

    /// Takes a `std::net::TcpStream` connected in the simulation. It should
    /// be in non-blocking mode, as tokio requires.
    ///
    /// # Errors
    /// For a real connection (its traffic is outside the simulation: an
    /// escape) or a socket that is not connected.
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled; in a debug build, for a
    /// stream in blocking mode, as tokio's debug builds do.
    #[track_caller]
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        crate::util::require_io();
        if !sim_net::std_net::is_sim(stream.as_raw_fd()) {
            let what = match stream.peer_addr() {
                Ok(peer) => format!("TcpStream::from_std on a real connection to {peer}"),
                Err(_) => "TcpStream::from_std on a real, unconnected socket (connect with \
                           TcpSocket::from_std_stream(..).connect(..) instead)"
                    .to_string(),
            };
            return Err(escape(&what));
        }
        match crate::net::fd::take_std(stream) {
            Some(
                sim_net::std_net::Phase::Connected(id) | sim_net::std_net::Phase::Connecting(id),
            ) => Ok(TcpStream::from_id(id)),
            _ => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "TcpStream::from_std: the socket is not connected",
            )),
        }
    }

    /// The connection as a `std::net::TcpStream` of the simulation (in
    /// non-blocking mode, as tokio's is): its blocking calls wait in
    /// virtual time.
    ///
    /// # Errors
    /// With no descriptor left.
    pub fn into_std(self) -> io::Result<std::net::TcpStream> {
        let std = crate::net::fd::give_std(sim_net::std_net::Phase::Connected(self.id))?;
        // The connection lives on under the descriptor: this handle must
        // not close it.
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.fd));
        Ok(std)
    }

    /// The local address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.tcp_local_addr(self.id))
    }

    /// `SO_ERROR`: the socket's pending error, once (a reset by the peer,
    /// a failed connect).
    ///
    /// # Errors
    /// When the socket's runtime is gone.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        with_socket(self.id, |net| net.tcp_take_error(self.id))
    }

    /// The peer's address.
    ///
    /// # Errors
    /// When not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.tcp_peer_addr(self.id))
    }

    /// `TCP_NODELAY`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn nodelay(&self) -> io::Result<bool> {
        with_socket(self.id, |net| net.tcp_nodelay(self.id))
    }

    /// Sets `TCP_NODELAY`. Off (the default), Nagle's algorithm holds a
    /// small write back while an earlier small segment is unacknowledged,
    /// and the peer delays its ACKs, as on Linux; on, writes leave at once.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        with_socket(self.id, |net| net.tcp_set_nodelay(self.id, nodelay))
    }

    /// `TCP_QUICKACK`: whether the connection acknowledges at once rather
    /// than delaying its ACKs for a reply to carry them.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn quickack(&self) -> io::Result<bool> {
        with_socket(self.id, |net| net.tcp_quickack(self.id))
    }

    /// Sets `TCP_QUICKACK`: on, owed ACKs leave now and the next ones are
    /// not delayed; off, ACKs wait for a reply. As on Linux, the setting is
    /// not permanent: the connection's traffic changes it again.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_quickack(&self, quickack: bool) -> io::Result<()> {
        with_socket(self.id, |net| net.tcp_set_quickack(self.id, quickack))
    }

    /// `SO_LINGER`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        with_socket(self.id, |net| net.tcp_linger(self.id))
    }

    /// Sets `SO_LINGER` (recorded). Deprecated in tokio too: a lingering
    /// close would block the thread on drop.
    ///
    /// # Errors
    /// When the socket is gone.
    #[deprecated = "`SO_LINGER` causes the socket to block the thread on drop"]
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        with_socket(self.id, |net| net.tcp_set_linger(self.id, dur))
    }

    /// Sets `SO_LINGER` to zero: dropping the stream then resets the
    /// connection (an RST) instead of closing it gracefully.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        with_socket(self.id, |net| {
            net.tcp_set_linger(self.id, Some(Duration::ZERO))
        })
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn ttl(&self) -> io::Result<u32> {
        with_socket(self.id, |net| net.tcp_ttl(self.id))
    }

    /// Sets `IP_TTL` (recorded).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        with_socket(self.id, |net| net.tcp_set_ttl(self.id, ttl))
    }

    /// Borrowed read and write halves, usable at the same time.
    pub fn split<'a>(&'a mut self) -> (ReadHalf<'a>, WriteHalf<'a>) {
        split(self)
    }

    /// Owned read and write halves, for two tasks.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }
}

crate::net::stream_io::stream_io!(TcpStream);

impl Drop for TcpStream {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::release_socket(id, |net| net.tcp_close(id));
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TcpStream");
        if let Some(Ok(local)) =
            sim_net::try_with_socket(self.id, |net| net.tcp_local_addr(self.id))
        {
            d.field("local", &local);
        }
        if let Some(Ok(peer)) = sim_net::try_with_socket(self.id, |net| net.tcp_peer_addr(self.id))
        {
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
        // SAFETY: the placeholder lives as long as the stream.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl TryFrom<std::net::TcpStream> for TcpStream {
    type Error = io::Error;

    fn try_from(stream: std::net::TcpStream) -> Result<Self, Self::Error> {
        Self::from_std(stream)
    }
}
