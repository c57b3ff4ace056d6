//! `tokio::process::Child` and its stdio handles: a simulated program's
//! status and the parent's ends of its pipes.

use super::pipe::{PipeReader, PipeWriter};
use super::stdio::{self, End};
use super::table::with_child_table;
use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::pin::Pin;
use std::process::{ExitStatus, Output, Stdio};
use std::sync::OnceLock;
use std::task::{Context, Poll};

/// A simulated program started by [`super::Command::spawn`].
///
/// Dropping it leaves the program running, unless the command set
/// `kill_on_drop(true)`.
#[derive(Debug)]
pub struct Child {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    pub(crate) _unwind: crate::util::NoUnwindSafety,
    pub(crate) child: ChildState,
    /// The parent's end of the program's stdin, if piped. Dropped (so the
    /// program reads end of stream) by `wait`.
    pub stdin: Option<ChildStdin>,
    /// The parent's end of the program's stdout, if piped.
    pub stdout: Option<ChildStdout>,
    /// The parent's end of the program's stderr, if piped.
    pub stderr: Option<ChildStderr>,
}

#[derive(Debug)]
pub(crate) enum ChildState {
    Running {
        pid: u32,
        kill_on_drop: bool,
        /// The simulation it runs in (its process table's).
        sim: u16,
    },
    Done(ExitStatus),
}

/// The status of a child whose simulation ended before its status was
/// collected: its programs ended with it, killed, as on a host crash (a
/// runtime built later, another simulation, cannot run them on).
fn ended_with_its_run() -> ExitStatus {
    ExitStatus::from_raw(super::table::CANCELLED_SIGNAL)
}

impl Child {
    /// The program's pid, until its exit status was collected (`wait`,
    /// `try_wait`); then `None`. Simulated pids are above any real one.
    pub fn id(&self) -> Option<u32> {
        match self.child {
            ChildState::Running { pid, .. } => Some(pid),
            ChildState::Done(_) => None,
        }
    }

    /// Sends `SIGKILL` to the program without waiting for it to exit.
    pub fn start_kill(&mut self) -> io::Result<()> {
        match self.child {
            // Gone with its simulation: nothing left to kill.
            ChildState::Running { pid, sim, .. } => with_child_table(sim, |core, table| {
                table.signal(core, pid, libc_dep::SIGKILL)
            })
            .unwrap_or(Ok(()))
            .map_err(io::Error::from_raw_os_error),
            ChildState::Done(_) => Ok(()),
        }
    }

    /// Kills the program and waits for it to exit.
    pub async fn kill(&mut self) -> io::Result<()> {
        self.start_kill()?;
        self.wait().await?;
        Ok(())
    }

    /// Waits for the program to exit, after closing its stdin (so a program
    /// reading it is not left waiting). Cancel safe.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        drop(self.stdin.take());
        let (pid, sim) = match self.child {
            ChildState::Done(status) => return Ok(status),
            ChildState::Running { pid, sim, .. } => (pid, sim),
        };
        let status = std::future::poll_fn(|cx| {
            with_child_table(sim, |_, table| table.poll_exit(pid, cx))
                .unwrap_or(Poll::Ready(ended_with_its_run()))
        })
        .await;
        self.child = ChildState::Done(status);
        Ok(status)
    }

    /// The exit status if the program has exited, without waiting.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let (pid, sim) = match self.child {
            ChildState::Done(status) => return Ok(Some(status)),
            ChildState::Running { pid, sim, .. } => (pid, sim),
        };
        let status = with_child_table(sim, |_, table| table.try_exit(pid))
            .unwrap_or(Some(ended_with_its_run()));
        if let Some(status) = status {
            self.child = ChildState::Done(status);
        }
        Ok(status)
    }

    /// Waits for the program to exit while collecting all of its stdout and
    /// stderr (those that were piped; the others are empty).
    pub async fn wait_with_output(mut self) -> io::Result<Output> {
        async fn read_all<R: AsyncRead + Unpin>(pipe: &mut Option<R>) -> io::Result<Vec<u8>> {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe.as_mut() {
                crate::io::AsyncReadExt::read_to_end(pipe, &mut bytes).await?;
            }
            Ok(bytes)
        }
        let mut stdout = self.stdout.take();
        let mut stderr = self.stderr.take();
        let (status, stdout_bytes, stderr_bytes) =
            crate::try_join!(self.wait(), read_all(&mut stdout), read_all(&mut stderr))?;
        Ok(Output {
            status,
            stdout: stdout_bytes,
            stderr: stderr_bytes,
        })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let ChildState::Running {
            pid,
            kill_on_drop: true,
            sim,
        } = self.child
        {
            // The runtime may be gone (then so is the program).
            let _ = with_child_table(sim, |core, table| {
                table.signal(core, pid, libc_dep::SIGKILL)
            });
        }
    }
}

/// The parent's end of a program's stdin: write to it, drop it to close.
#[derive(Debug)]
pub struct ChildStdin {
    pipe: PipeWriter,
    placeholder: OnceLock<OwnedFd>,
}

/// The parent's end of a program's stdout: read it to end of stream.
#[derive(Debug)]
pub struct ChildStdout {
    pipe: PipeReader,
    placeholder: OnceLock<OwnedFd>,
}

/// The parent's end of a program's stderr: read it to end of stream.
#[derive(Debug)]
pub struct ChildStderr {
    pipe: PipeReader,
    placeholder: OnceLock<OwnedFd>,
}

/// What `from_std` answers: a real process's pipe cannot join the
/// simulation (and starting one is refused during a run).
fn from_std_refused(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "sim: tokio::process::{what}::from_std: a real process's pipe is outside the \
             simulation; start the program with tokio::process::Command, registered with \
             tokio::sim::process::register"
        ),
    )
}

/// A placeholder descriptor for `AsRawFd`/`AsFd`: a real, empty pipe end.
fn placeholder_fd(cell: &OnceLock<OwnedFd>) -> BorrowedFd<'_> {
    cell.get_or_init(|| {
        stdio::placeholder().expect("sim: a placeholder descriptor for a child's pipe")
    })
    .as_fd()
}

impl ChildStdin {
    pub(crate) fn new(pipe: PipeWriter) -> ChildStdin {
        ChildStdin {
            pipe,
            placeholder: OnceLock::new(),
        }
    }

    /// Fails: see the message. A simulation has no real child processes.
    pub fn from_std(inner: std::process::ChildStdin) -> io::Result<Self> {
        drop(inner);
        Err(from_std_refused("ChildStdin"))
    }

    /// A descriptor that stands for this pipe end: given to another
    /// `Command` (`Stdio::from`), that program writes into it. Read or
    /// written directly, it is an empty pipe.
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        stdio::register(End::Writer(self.pipe))
    }
}

impl ChildStdout {
    pub(crate) fn new(pipe: PipeReader) -> ChildStdout {
        ChildStdout {
            pipe,
            placeholder: OnceLock::new(),
        }
    }

    /// Fails: see the message. A simulation has no real child processes.
    pub fn from_std(inner: std::process::ChildStdout) -> io::Result<Self> {
        drop(inner);
        Err(from_std_refused("ChildStdout"))
    }

    /// A descriptor that stands for this pipe end: given to another
    /// `Command` (`Stdio::from`), that program reads from it.
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        stdio::register(End::Reader(self.pipe))
    }
}

impl ChildStderr {
    pub(crate) fn new(pipe: PipeReader) -> ChildStderr {
        ChildStderr {
            pipe,
            placeholder: OnceLock::new(),
        }
    }

    /// Fails: see the message. A simulation has no real child processes.
    pub fn from_std(inner: std::process::ChildStderr) -> io::Result<Self> {
        drop(inner);
        Err(from_std_refused("ChildStderr"))
    }

    /// A descriptor that stands for this pipe end: given to another
    /// `Command` (`Stdio::from`), that program reads from it.
    pub fn into_owned_fd(self) -> io::Result<OwnedFd> {
        stdio::register(End::Reader(self.pipe))
    }
}

impl AsyncWrite for ChildStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write(cx, buf, "ChildStdin write")
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.pipe.poll_write_vectored(cx, bufs, "ChildStdin write")
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// As tokio's: nothing to do; the pipe closes when dropped.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for ChildStdout {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.pipe.poll_read(cx, buf, "ChildStdout read")
    }
}

impl AsyncRead for ChildStderr {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.pipe.poll_read(cx, buf, "ChildStderr read")
    }
}

macro_rules! fd_and_stdio {
    ($($ty:ty),*) => {$(
        impl AsRawFd for $ty {
            fn as_raw_fd(&self) -> RawFd {
                placeholder_fd(&self.placeholder).as_raw_fd()
            }
        }

        impl AsFd for $ty {
            fn as_fd(&self) -> BorrowedFd<'_> {
                placeholder_fd(&self.placeholder)
            }
        }

        impl TryInto<Stdio> for $ty {
            type Error = io::Error;

            /// A `Stdio` that gives this pipe end to another `Command`.
            fn try_into(self) -> Result<Stdio, io::Error> {
                self.into_owned_fd().map(Stdio::from)
            }
        }
    )*};
}

fd_and_stdio!(ChildStdin, ChildStdout, ChildStderr);
