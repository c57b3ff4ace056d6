use super::split::{split, split_owned, OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
use super::{SocketAddr, UCred};
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use crate::net::fd::Placeholder;
use crate::net::readiness::would_block;
use bytes_dep::BufMut;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::os::unix::io::FromRawFd;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

/// A connected Unix stream socket on one simulated host.
pub struct UnixStream {
    pub(crate) id: SocketId,
    fd: Placeholder,
}

impl UnixStream {
    pub(crate) fn from_id(id: SocketId) -> UnixStream {
        UnixStream {
            id,
            fd: Placeholder::default(),
        }
    }

    /// Connects to the listener at `path` on this task's host; a local
    /// connect completes at once.
    ///
    /// # Errors
    /// `NotFound` when nothing is bound there; `ConnectionRefused` when the
    /// listener's backlog is full.
    pub async fn connect<P>(path: P) -> io::Result<UnixStream>
    where
        P: AsRef<Path>,
    {
        let stream = with_net(|net| net.unix_connect(path.as_ref())).map(UnixStream::from_id)?;
        stream.connected().await
    }

    /// The end of a connect: as tokio's, it waits for the socket to be
    /// writable (one turn of the scheduler), then reports its pending
    /// error (the listener closed before accepting it: a reset).
    pub(crate) async fn connected(self) -> io::Result<UnixStream> {
        let mut yielded = false;
        std::future::poll_fn(|cx| {
            if yielded {
                return std::task::Poll::Ready(());
            }
            yielded = true;
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        })
        .await;
        match self.take_error()? {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }

    /// Connects to `socket_addr`.
    ///
    /// # Errors
    /// As [`UnixStream::connect`]; `InvalidInput` for an unnamed address.
    pub async fn connect_addr(socket_addr: &SocketAddr) -> io::Result<UnixStream> {
        let path = socket_addr.as_pathname().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot connect to an unnamed address",
            )
        })?;
        Self::connect(path).await
    }

    /// Takes a `std` stream made during the run (`UnixStream::pair`, which
    /// is simulated); a real one is outside the simulation.
    ///
    /// # Errors
    /// For a real socket, naming the escape.
    ///
    /// # Panics
    /// Outside a runtime; in a debug build, for a stream in blocking mode,
    /// as tokio.
    #[track_caller]
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        crate::util::require_io();
        let fd = std::os::unix::io::IntoRawFd::into_raw_fd(stream);
        match sim_net::std_net::take(fd) {
            Some(sim_net::std_net::Taken {
                phase: sim_net::std_net::Phase::Connected(id),
                family: sim_net::std_net::Family::Unix,
                nonblocking,
            }) => {
                crate::net::fd::check_nonblocking(nonblocking);
                Ok(UnixStream::from_id(id))
            }
            Some(_) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "UnixStream::from_std: the descriptor is not a connected Unix stream",
            )),
            None => {
                // SAFETY: the descriptor was the stream's, handed over above.
                drop(unsafe { <std::os::unix::io::OwnedFd as FromRawFd>::from_raw_fd(fd) });
                Err(crate::net::tcp::stream::escape(
                    "UnixStream::from_std on a real socket",
                ))
            }
        }
    }

    /// The stream as a `std` one (in non-blocking mode): its reads and
    /// writes through libc reach the simulated stream.
    ///
    /// # Errors
    /// With no descriptor left.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixStream> {
        let phase = sim_net::std_net::Phase::Connected(self.id);
        let fd = sim_net::std_net::give_as(phase, sim_net::std_net::Family::Unix, true)?;
        self.forget();
        // SAFETY: `give_as` made `fd` for this stream and hands it over.
        Ok(unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) })
    }

    /// Lets the stream live on under a descriptor: this handle no longer
    /// closes it.
    pub(crate) fn forget(self) {
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.fd));
    }

    /// A connected pair of unnamed streams.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = with_net(|net| net.unix_pair());
        Ok((UnixStream::from_id(a), UnixStream::from_id(b)))
    }

    /// The local address (unnamed for a connecting side).
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        let path = with_socket(self.id, |net| net.unix_local_path(self.id))?;
        Ok(SocketAddr::from_path(path.as_deref()))
    }

    /// The peer's address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        let path = with_socket(self.id, |net| net.unix_peer_path(self.id))?;
        Ok(SocketAddr::from_path(path.as_deref()))
    }

    /// The peer's credentials.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn peer_cred(&self) -> io::Result<UCred> {
        Ok(super::ucred::current())
    }

    /// `SO_ERROR`: the socket's pending error, once (a reset by the peer,
    /// a failed connect).
    ///
    /// # Errors
    /// When the socket's runtime is gone.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        with_socket(self.id, |net| net.tcp_take_error(self.id))
    }

    /// Borrowed read and write halves.
    pub fn split<'a>(&'a mut self) -> (ReadHalf<'a>, WriteHalf<'a>) {
        split(self)
    }

    /// Owned read and write halves, for two tasks.
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        split_owned(self)
    }
}

crate::net::stream_io::stream_io!(UnixStream);

impl Drop for UnixStream {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::release_socket(id, |net| net.tcp_close(id));
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream").finish_non_exhaustive()
    }
}

impl AsRef<Self> for UnixStream {
    fn as_ref(&self) -> &Self {
        self
    }
}

impl TryFrom<std::os::unix::net::UnixStream> for UnixStream {
    type Error = io::Error;

    fn try_from(stream: std::os::unix::net::UnixStream) -> io::Result<Self> {
        Self::from_std(stream)
    }
}

impl AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(true)
    }
}

impl AsFd for UnixStream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the stream.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
