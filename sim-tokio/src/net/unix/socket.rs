use super::{UnixDatagram, UnixListener, UnixStream};
use crate::net::fd::Placeholder;
use std::fmt;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A Unix socket before it becomes a listener, a stream or a datagram
/// socket.
pub struct UnixSocket {
    stream: bool,
    bound: Mutex<Option<PathBuf>>,
    fd: Placeholder,
}

impl UnixSocket {
    fn new(stream: bool) -> UnixSocket {
        UnixSocket {
            stream,
            bound: Mutex::new(None),
            fd: Placeholder::default(),
        }
    }

    /// A datagram socket.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn new_datagram() -> io::Result<UnixSocket> {
        Ok(UnixSocket::new(false))
    }

    /// A stream socket.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn new_stream() -> io::Result<UnixSocket> {
        Ok(UnixSocket::new(true))
    }

    /// Binds to `path` (taking effect when the socket is used).
    ///
    /// # Errors
    /// Never here.
    pub fn bind(&self, path: impl AsRef<Path>) -> io::Result<()> {
        super::bind_socket_file(path.as_ref())?;
        *self.bound.lock().unwrap_or_else(|e| e.into_inner()) = Some(path.as_ref().to_path_buf());
        Ok(())
    }

    fn bound(&self) -> Option<PathBuf> {
        self.bound.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Listens at the bound path.
    ///
    /// # Errors
    /// `InvalidInput` for a datagram socket or when unbound; `AddrInUse`
    /// for a bound path.
    pub fn listen(self, backlog: u32) -> io::Result<UnixListener> {
        if !self.stream {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "listen cannot be called on a datagram socket",
            ));
        }
        let path = self.bound().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "listen() needs a bound path")
        })?;
        sim_net::with_net(|net| net.unix_listen(&path, backlog as usize)).map(UnixListener::from_id)
    }

    /// Connects to `path`.
    ///
    /// # Errors
    /// `InvalidInput` for a datagram socket; as [`UnixStream::connect`].
    pub async fn connect(self, path: impl AsRef<Path>) -> io::Result<UnixStream> {
        if !self.stream {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "connect cannot be called on a datagram socket",
            ));
        }
        let local = self.bound();
        sim_net::with_net(|net| net.unix_connect_from(path.as_ref(), local.as_deref()))
            .map(UnixStream::from_id)?
            .connected()
            .await
    }

    /// The datagram socket, bound if `bind` was called.
    ///
    /// # Errors
    /// `InvalidInput` for a stream socket; `AddrInUse` for a bound path.
    pub fn datagram(self) -> io::Result<UnixDatagram> {
        if self.stream {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "datagram cannot be called on a stream socket",
            ));
        }
        let path = self.bound();
        sim_net::with_net(|net| net.unix_dgram_bind(path.as_deref())).map(UnixDatagram::from_id)
    }
}

impl fmt::Debug for UnixSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixSocket")
            .field("stream", &self.stream)
            .finish()
    }
}

impl AsRawFd for UnixSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(self.stream)
    }
}

impl AsFd for UnixSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the socket.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

impl FromRawFd for UnixSocket {
    /// Takes a real, unbound socket's descriptor (closing it) and carries
    /// on in the simulation as a stream socket.
    ///
    /// # Safety
    /// `fd` must be an open descriptor owned by the caller.
    unsafe fn from_raw_fd(fd: RawFd) -> UnixSocket {
        drop(std::os::unix::io::OwnedFd::from_raw_fd(fd));
        UnixSocket::new(true)
    }
}

impl IntoRawFd for UnixSocket {
    /// Hands out a copy of the placeholder descriptor.
    fn into_raw_fd(self) -> RawFd {
        let fd = self.fd.raw(self.stream);
        // SAFETY: `dup` of a descriptor we own; the copy goes to the caller.
        unsafe { libc_dep::dup(fd) }
    }
}
