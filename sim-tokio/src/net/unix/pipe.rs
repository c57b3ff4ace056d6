//! Unix pipes. An anonymous [`pipe`] is simulated: a one-way stream within
//! the task's host. Named pipes (FIFOs opened by path) and pipes made from
//! real descriptors are real operating-system objects: outside the
//! simulation, so those calls fail with an error naming the escape.

use super::UnixStream;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use bytes_dep::BufMut;
use std::fs::File;
use std::io;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

fn escape(what: &str) -> io::Error {
    crate::net::tcp::stream::escape(what)
}

/// A simulated anonymous pipe: bytes written to the sender are read from
/// the receiver; dropping the sender ends the receiver's stream.
///
/// # Errors
/// Never in a simulation.
///
/// # Panics
/// Outside a runtime, as in tokio.
pub fn pipe() -> io::Result<(Sender, Receiver)> {
    let (a, b) = UnixStream::pair()?;
    Ok((Sender { inner: a }, Receiver { inner: b }))
}

/// Options for opening a named pipe (FIFO) by path.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    read_write: bool,
    unchecked: bool,
}

impl OpenOptions {
    /// The defaults: read-only or write-only, and the file type is checked.
    pub fn new() -> OpenOptions {
        OpenOptions {
            read_write: false,
            unchecked: false,
        }
    }

    /// Opens the FIFO for both reading and writing.
    pub fn read_write(&mut self, value: bool) -> &mut Self {
        self.read_write = value;
        self
    }

    /// Skips the check that the path is a FIFO.
    pub fn unchecked(&mut self, value: bool) -> &mut Self {
        self.unchecked = value;
        self
    }

    /// Refused: a FIFO lives in the real filesystem, outside the
    /// simulation.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn open_receiver<P: AsRef<Path>>(&self, path: P) -> io::Result<Receiver> {
        Err(escape(&format!(
            "opening the named pipe {} (a real FIFO)",
            path.as_ref().display()
        )))
    }

    /// Refused: a FIFO lives in the real filesystem, outside the
    /// simulation.
    ///
    /// # Errors
    /// Always, naming the escape.
    pub fn open_sender<P: AsRef<Path>>(&self, path: P) -> io::Result<Sender> {
        Err(escape(&format!(
            "opening the named pipe {} (a real FIFO)",
            path.as_ref().display()
        )))
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

/// The writing end of a pipe.
#[derive(Debug)]
pub struct Sender {
    inner: UnixStream,
}

/// The reading end of a pipe.
#[derive(Debug)]
pub struct Receiver {
    inner: UnixStream,
}

macro_rules! refused_fd_constructors {
    ($ty:ident, $what:literal) => {
        /// Refused: a real pipe is outside the simulation.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn from_file(file: File) -> io::Result<$ty> {
            drop(file);
            Err(escape(concat!($what, "::from_file on a real pipe")))
        }

        /// Refused: a real pipe is outside the simulation.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn from_owned_fd(owned_fd: OwnedFd) -> io::Result<$ty> {
            drop(owned_fd);
            Err(escape(concat!($what, "::from_owned_fd on a real pipe")))
        }

        /// Refused: a real pipe is outside the simulation.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn from_file_unchecked(file: File) -> io::Result<$ty> {
            drop(file);
            Err(escape(concat!(
                $what,
                "::from_file_unchecked on a real pipe"
            )))
        }

        /// Refused: a real pipe is outside the simulation.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn from_owned_fd_unchecked(owned_fd: OwnedFd) -> io::Result<$ty> {
            drop(owned_fd);
            Err(escape(concat!(
                $what,
                "::from_owned_fd_unchecked on a real pipe"
            )))
        }

        /// Refused: a simulated pipe has no real descriptor to become.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
            Err(escape(concat!(
                $what,
                "::into_blocking_fd on a simulated pipe"
            )))
        }

        /// Refused: a simulated pipe has no real descriptor to become.
        ///
        /// # Errors
        /// Always, naming the escape.
        pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
            Err(escape(concat!(
                $what,
                "::into_nonblocking_fd on a simulated pipe"
            )))
        }

        /// Waits for any of `interest`.
        ///
        /// # Errors
        /// Never in a simulation.
        pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
            self.inner.ready(interest).await
        }
    };
}

impl Sender {
    refused_fd_constructors!(Sender, "Sender");

    /// Waits until a write would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn writable(&self) -> io::Result<()> {
        self.inner.writable().await
    }

    /// Polls for write readiness.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.poll_write_ready(cx)
    }

    /// Writes what fits now.
    ///
    /// # Errors
    /// `WouldBlock` when the pipe is full; `BrokenPipe` when the receiver
    /// is gone.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.inner.try_write(buf)
    }

    /// Writes what fits now, from several buffers.
    ///
    /// # Errors
    /// As [`Sender::try_write`].
    pub fn try_write_vectored(&self, buf: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.inner.try_write_vectored(buf)
    }

    /// Runs `f` if the pipe is writable now.
    ///
    /// # Errors
    /// `WouldBlock` when not writable; otherwise `f`'s result.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.inner.try_io(Interest::WRITABLE, f)
    }
}

impl AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

impl Receiver {
    refused_fd_constructors!(Receiver, "Receiver");

    /// Waits until a read would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn readable(&self) -> io::Result<()> {
        self.inner.readable().await
    }

    /// Polls for read readiness.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.poll_read_ready(cx)
    }

    /// Reads what is there now.
    ///
    /// # Errors
    /// `WouldBlock` when the pipe is empty.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.try_read(buf)
    }

    /// Reads what is there now, into several buffers.
    ///
    /// # Errors
    /// As [`Receiver::try_read`].
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.inner.try_read_vectored(bufs)
    }

    /// Reads what is there now, into a `BufMut`.
    ///
    /// # Errors
    /// As [`Receiver::try_read`].
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.inner.try_read_buf(buf)
    }

    /// Runs `f` if the pipe is readable now.
    ///
    /// # Errors
    /// `WouldBlock` when not readable; otherwise `f`'s result.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.inner.try_io(Interest::READABLE, f)
    }
}

impl AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

macro_rules! placeholder_fd {
    ($($ty:ident),*) => {$(
        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.inner.as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                self.inner.as_fd()
            }
        }
    )*};
}

placeholder_fd!(Sender, Receiver);
