use super::{SocketAddr, UnixStream};
use crate::net::fd::Placeholder;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::Path;
use std::task::{ready, Context, Poll};

/// A Unix listener at a path of this task's host.
pub struct UnixListener {
    id: SocketId,
    fd: Placeholder,
}

impl UnixListener {
    pub(crate) fn from_id(id: SocketId) -> UnixListener {
        UnixListener {
            id,
            fd: Placeholder::default(),
        }
    }

    /// Listens at `path`.
    ///
    /// # Errors
    /// `AddrInUse` when the path is bound.
    ///
    /// # Panics
    /// Outside a runtime, as in tokio.
    #[track_caller]
    pub fn bind<P>(path: P) -> io::Result<UnixListener>
    where
        P: AsRef<Path>,
    {
        crate::util::require_io();
        super::bind_socket_file(path.as_ref())?;
        with_net(|net| net.unix_listen(path.as_ref(), sim_net::tcp::BACKLOG_DEFAULT))
            .map(UnixListener::from_id)
    }

    /// Listens at `socket_addr`.
    ///
    /// # Errors
    /// As [`UnixListener::bind`]; `InvalidInput` for an unnamed address.
    #[track_caller]
    pub fn bind_addr(socket_addr: &SocketAddr) -> io::Result<UnixListener> {
        let path = socket_addr.as_pathname().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot bind an unnamed address",
            )
        })?;
        Self::bind(path)
    }

    /// Refused: a real listener is outside the simulation.
    ///
    /// # Errors
    /// Always, naming the escape.
    #[track_caller]
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        crate::util::require_io();
        drop(listener);
        Err(crate::net::tcp::stream::escape(
            "UnixListener::from_std on a real listener",
        ))
    }

    /// Refused: a simulated listener has no real socket to become.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn into_std(self) -> io::Result<std::os::unix::net::UnixListener> {
        Err(crate::net::tcp::stream::escape(
            "UnixListener::into_std would hand a simulated listener to real code",
        ))
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the listener is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        let path = with_socket(self.id, |net| net.unix_local_path(self.id))?;
        Ok(SocketAddr::from_path(path.as_deref()))
    }

    /// Pending socket errors: none are kept in a simulation.
    ///
    /// # Errors
    /// Never.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }

    /// Waits for the next connection.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        std::future::poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Polls for the next connection.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(UnixStream, SocketAddr)>> {
        ready!(crate::sync::budget(cx));
        let (id, _) = ready!(with_socket(self.id, |net| net.tcp_poll_accept(self.id, cx)))?;
        // The connecting side is unnamed, as a client usually is.
        Poll::Ready(Ok((UnixStream::from_id(id), SocketAddr::from_path(None))))
    }
}

impl TryFrom<std::os::unix::net::UnixListener> for UnixListener {
    type Error = io::Error;

    fn try_from(listener: std::os::unix::net::UnixListener) -> io::Result<Self> {
        Self::from_std(listener)
    }
}

impl Drop for UnixListener {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::release_socket(id, |net| net.tcp_close(id));
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener").finish_non_exhaustive()
    }
}

impl AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(true)
    }
}

impl AsFd for UnixListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the listener.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
