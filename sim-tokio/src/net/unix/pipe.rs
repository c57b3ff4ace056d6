//! Unix pipes. An anonymous [`pipe`] is simulated: a one-way stream within
//! the task's host. A named pipe made during the run (`mkfifo`, as nix
//! calls it) is a simulated FIFO on the host's disk, opened by
//! [`OpenOptions`]. A pipe made with libc's `pipe2` during the run (as nix
//! and `std::io::pipe` make one) is simulated too, and its descriptors
//! become `Sender`s and `Receiver`s (`from_owned_fd`), and back
//! (`into_blocking_fd`). Real FIFOs and pipes made from real descriptors
//! are operating-system objects outside the simulation: those calls fail
//! with an error naming the escape.

use super::fifo::{self, FifoEnd, Side};
use super::UnixStream;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use bytes_dep::BufMut;
use sim_net::std_net::Family;
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
    Ok((
        Sender {
            inner: End::Stream(a),
        },
        Receiver {
            inner: End::Stream(b),
        },
    ))
}

/// What a pipe end is: one side of an anonymous pipe (a simulated stream
/// pair), or an end of a named pipe.
#[derive(Debug)]
enum End {
    Stream(UnixStream),
    Fifo(FifoEnd),
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

    /// Skips the check that the path is a FIFO (kept: a simulated regular
    /// file has no pipe behind it, so opening one still fails with
    /// `InvalidInput`).
    pub fn unchecked(&mut self, value: bool) -> &mut Self {
        self.unchecked = value;
        self
    }

    /// Opens the reading end of the simulated FIFO at `path`. While no
    /// sender is open it reads end of stream (open it `read_write` to wait
    /// for one instead).
    ///
    /// # Errors
    /// `NotFound`; `InvalidInput` when the path is no FIFO; an escape
    /// error for a real FIFO (one not made during the run).
    ///
    /// # Panics
    /// Outside a runtime.
    pub fn open_receiver<P: AsRef<Path>>(&self, path: P) -> io::Result<Receiver> {
        let end = fifo::open(path.as_ref(), Side::Receiver, self.read_write)?;
        Ok(Receiver {
            inner: End::Fifo(end),
        })
    }

    /// Opens the writing end of the simulated FIFO at `path`.
    ///
    /// # Errors
    /// As [`OpenOptions::open_receiver`], and `ENXIO` while no receiver is
    /// open (unless `read_write`), as Linux gives.
    ///
    /// # Panics
    /// Outside a runtime.
    pub fn open_sender<P: AsRef<Path>>(&self, path: P) -> io::Result<Sender> {
        let end = fifo::open(path.as_ref(), Side::Sender, self.read_write)?;
        Ok(Sender {
            inner: End::Fifo(end),
        })
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
    inner: End,
}

/// The reading end of a pipe.
#[derive(Debug)]
pub struct Receiver {
    inner: End,
}

/// The end of a simulated anonymous pipe (`pipe2` during the run) behind
/// `fd`, taken out of its descriptor for `from_owned_fd`: `want` is the
/// end asked for. tokio's checks: `InvalidInput` for a descriptor that is
/// no pipe or the other end. A real pipe or FIFO is an escape.
fn take_pipe_end(fd: OwnedFd, want: Family, what: &str) -> io::Result<UnixStream> {
    let raw = fd.as_raw_fd();
    match sim_net::std_net::family(raw) {
        Some(family) if family == want => {}
        Some(Family::PipeReader | Family::PipeWriter) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{what}: the descriptor is the other end of the pipe"),
            ))
        }
        Some(Family::Inet | Family::Unix) => return Err(not_a_pipe(what)),
        None if !is_fifo(raw) => return Err(not_a_pipe(what)),
        None => return Err(escape(&format!("{what} on a real pipe or FIFO"))),
    }
    match sim_net::std_net::take(std::os::unix::io::IntoRawFd::into_raw_fd(fd)) {
        Some(sim_net::std_net::Taken {
            phase: sim_net::std_net::Phase::Connected(id),
            ..
        }) => Ok(UnixStream::from_id(id)),
        _ => Err(io::Error::new(
            io::ErrorKind::BrokenPipe,
            format!("{what}: the pipe is closed"),
        )),
    }
}

fn not_a_pipe(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what}: the descriptor is not a pipe"),
    )
}

/// Whether `fd` is a FIFO (`fstat`, which the simulated disk answers for
/// its files).
fn is_fifo(fd: RawFd) -> bool {
    // SAFETY: `stat` is plain data, written by fstat.
    let mut stat: libc_dep::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid buffer; a bad descriptor only fails.
    let ok = unsafe { libc_dep::fstat(fd, &mut stat) } == 0;
    ok && stat.st_mode & libc_dep::S_IFMT == libc_dep::S_IFIFO
}

/// The side of a FIFO an anonymous pipe's end of `family` would be.
fn side_of(family: Family) -> Side {
    match family {
        Family::PipeReader => Side::Receiver,
        _ => Side::Sender,
    }
}

/// A descriptor for the pipe end `stream` (its handle must not close it
/// afterwards).
fn give_pipe_end(stream: UnixStream, family: Family, nonblocking: bool) -> io::Result<OwnedFd> {
    let phase = sim_net::std_net::Phase::Connected(stream.id);
    let fd = sim_net::std_net::give_as(phase, family, nonblocking)?;
    stream.forget();
    // SAFETY: `give_as` made `fd` for this pipe end and hands it over.
    Ok(unsafe { <OwnedFd as std::os::unix::io::FromRawFd>::from_raw_fd(fd) })
}

macro_rules! fd_conversions {
    ($ty:ident, $what:literal, $family:expr) => {
        /// The end of an anonymous pipe made during the run (`pipe2`, as
        /// nix or `std::io::pipe` call it), or of a simulated FIFO opened
        /// with `std::fs`, from its file (set non-blocking, as tokio does).
        ///
        /// # Errors
        /// `InvalidInput` when it is no pipe or the other end; a real pipe
        /// or FIFO is an escape, refused with an error naming it.
        pub fn from_file(file: File) -> io::Result<$ty> {
            Self::from_owned_fd(OwnedFd::from(file))
        }

        /// The end of an anonymous pipe made during the run, from its
        /// descriptor.
        ///
        /// # Errors
        /// As [`Self::from_file`].
        pub fn from_owned_fd(owned_fd: OwnedFd) -> io::Result<$ty> {
            let what = concat!($what, "::from_owned_fd");
            if let Some(end) = fifo::take_std_end(owned_fd.as_raw_fd(), side_of($family), what) {
                // The descriptor went with the end.
                let _ = std::os::unix::io::IntoRawFd::into_raw_fd(owned_fd);
                return Ok($ty {
                    inner: End::Fifo(end?),
                });
            }
            let stream = take_pipe_end(owned_fd, $family, what)?;
            Ok($ty {
                inner: End::Stream(stream),
            })
        }

        /// As [`Self::from_file`]: the checks are cheap in a simulation.
        ///
        /// # Errors
        /// As [`Self::from_file`].
        pub fn from_file_unchecked(file: File) -> io::Result<$ty> {
            Self::from_file(file)
        }

        /// As [`Self::from_owned_fd`]: the checks are cheap in a
        /// simulation.
        ///
        /// # Errors
        /// As [`Self::from_file`].
        pub fn from_owned_fd_unchecked(owned_fd: OwnedFd) -> io::Result<$ty> {
            Self::from_owned_fd(owned_fd)
        }

        /// The descriptor of this end, in blocking mode: `read`/`write`
        /// through libc (a child's stdio, `std::fs::File`) reach the
        /// simulated pipe. Not for a named pipe's end.
        ///
        /// # Errors
        /// With no descriptor left; for a FIFO's end, unsupported.
        pub fn into_blocking_fd(self) -> io::Result<OwnedFd> {
            self.into_fd(false)
        }

        /// As [`Self::into_blocking_fd`], in non-blocking mode.
        ///
        /// # Errors
        /// As [`Self::into_blocking_fd`].
        pub fn into_nonblocking_fd(self) -> io::Result<OwnedFd> {
            self.into_fd(true)
        }

        fn into_fd(self, nonblocking: bool) -> io::Result<OwnedFd> {
            match self.inner {
                End::Stream(stream) => give_pipe_end(stream, $family, nonblocking),
                End::Fifo(_) => Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    concat!(
                        "sim: ",
                        $what,
                        "::into_*_fd of a named pipe's end is not simulated yet: open the \
                         FIFO with std::fs instead"
                    ),
                )),
            }
        }

        /// Waits for any of `interest`.
        ///
        /// # Errors
        /// Never in a simulation.
        pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
            match &self.inner {
                End::Stream(s) => s.ready(interest).await,
                End::Fifo(f) => Ok(std::future::poll_fn(|cx| f.poll_ready(interest, cx)).await),
            }
        }
    };
}

impl Sender {
    fd_conversions!(Sender, "Sender", Family::PipeWriter);

    /// Waits until a write would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn writable(&self) -> io::Result<()> {
        std::future::poll_fn(|cx| self.poll_write_ready(cx)).await
    }

    /// Polls for write readiness.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &self.inner {
            End::Stream(s) => s.poll_write_ready(cx),
            End::Fifo(f) => f.poll_ready(Interest::WRITABLE, cx).map(|_| Ok(())),
        }
    }

    /// Writes what fits now.
    ///
    /// # Errors
    /// `WouldBlock` when the pipe is full; `BrokenPipe` when the receiver
    /// is gone.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        match &self.inner {
            End::Stream(s) => s.try_write(buf),
            End::Fifo(f) => f.try_write(buf),
        }
    }

    /// Writes what fits now, from several buffers.
    ///
    /// # Errors
    /// As [`Sender::try_write`].
    pub fn try_write_vectored(&self, buf: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match &self.inner {
            End::Stream(s) => s.try_write_vectored(buf),
            End::Fifo(f) => {
                let first = buf
                    .iter()
                    .find(|b| !b.is_empty())
                    .map_or(&[][..], |b| &b[..]);
                f.try_write(first)
            }
        }
    }

    /// Runs `f` if the pipe is writable now.
    ///
    /// # Errors
    /// `WouldBlock` when not writable; otherwise `f`'s result.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        match &self.inner {
            End::Stream(s) => s.try_io(Interest::WRITABLE, f),
            End::Fifo(end) => fifo_try_io(end, Interest::WRITABLE, f),
        }
    }
}

impl AsyncWrite for Sender {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().inner {
            End::Stream(s) => Pin::new(s).poll_write(cx, buf),
            End::Fifo(f) => f.poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            End::Stream(s) => Pin::new(s).poll_flush(cx),
            End::Fifo(_) => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            End::Stream(s) => Pin::new(s).poll_shutdown(cx),
            // As a real pipe's: the end closes when dropped.
            End::Fifo(_) => Poll::Ready(Ok(())),
        }
    }
}

impl Receiver {
    fd_conversions!(Receiver, "Receiver", Family::PipeReader);

    /// Waits until a read would not wait.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn readable(&self) -> io::Result<()> {
        std::future::poll_fn(|cx| self.poll_read_ready(cx)).await
    }

    /// Polls for read readiness.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &self.inner {
            End::Stream(s) => s.poll_read_ready(cx),
            End::Fifo(f) => f.poll_ready(Interest::READABLE, cx).map(|_| Ok(())),
        }
    }

    /// Reads what is there now.
    ///
    /// # Errors
    /// `WouldBlock` when the pipe is empty.
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        match &self.inner {
            End::Stream(s) => s.try_read(buf),
            End::Fifo(f) => f.try_read(buf),
        }
    }

    /// Reads what is there now, into several buffers.
    ///
    /// # Errors
    /// As [`Receiver::try_read`].
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        match &self.inner {
            End::Stream(s) => s.try_read_vectored(bufs),
            End::Fifo(f) => match bufs.iter_mut().find(|b| !b.is_empty()) {
                Some(first) => f.try_read(first),
                None => f.try_read(&mut []),
            },
        }
    }

    /// Reads what is there now, into a `BufMut`.
    ///
    /// # Errors
    /// As [`Receiver::try_read`].
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        match &self.inner {
            End::Stream(s) => s.try_read_buf(buf),
            End::Fifo(f) => {
                let mut chunk = vec![0u8; buf.remaining_mut().min(64 * 1024)];
                let n = f.try_read(&mut chunk)?;
                buf.put_slice(&chunk[..n]);
                Ok(n)
            }
        }
    }

    /// Runs `f` if the pipe is readable now.
    ///
    /// # Errors
    /// `WouldBlock` when not readable; otherwise `f`'s result.
    pub fn try_io<R>(&self, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        match &self.inner {
            End::Stream(s) => s.try_io(Interest::READABLE, f),
            End::Fifo(end) => fifo_try_io(end, Interest::READABLE, f),
        }
    }
}

impl AsyncRead for Receiver {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            End::Stream(s) => Pin::new(s).poll_read(cx, buf),
            End::Fifo(f) => f.poll_read(cx, buf),
        }
    }
}

/// `try_io` on a FIFO end: `f` runs only when the end is ready now.
fn fifo_try_io<R>(
    end: &FifoEnd,
    interest: Interest,
    f: impl FnOnce() -> io::Result<R>,
) -> io::Result<R> {
    let waker = std::task::Waker::noop();
    let mut cx = Context::from_waker(waker);
    match end.poll_ready(interest, &mut cx) {
        Poll::Ready(_) => f(),
        Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
    }
}

macro_rules! placeholder_fd {
    ($($ty:ident),*) => {$(
        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                self.as_fd().as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                match &self.inner {
                    End::Stream(s) => s.as_fd(),
                    End::Fifo(f) => f.placeholder(),
                }
            }
        }
    )*};
}

placeholder_fd!(Sender, Receiver);
