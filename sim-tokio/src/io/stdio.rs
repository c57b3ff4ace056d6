//! The process's standard streams.
//!
//! In a simulation, `stdout` and `stderr` write to the real file
//! descriptors at once, each write as one call, flushed, in the order the
//! tasks make them, so output interleaves exactly as the schedule did.
//! `stdin` reads the process's real standard input: each read runs in
//! place, blocking the simulation's thread until input arrives (no virtual
//! time passes meanwhile). The bytes are input to the run, like its
//! arguments: the same input replays the same run.

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// The process's standard input.
#[derive(Debug)]
pub struct Stdin {
    _p: (),
}

/// The process's standard output.
#[derive(Debug)]
pub struct Stdout {
    _p: (),
}

/// The process's standard error.
#[derive(Debug)]
pub struct Stderr {
    _p: (),
}

/// A handle on standard input.
pub fn stdin() -> Stdin {
    Stdin { _p: () }
}

/// A handle on standard output.
pub fn stdout() -> Stdout {
    Stdout { _p: () }
}

/// A handle on standard error.
pub fn stderr() -> Stderr {
    Stderr { _p: () }
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        ready!(crate::sync::budget(cx));
        let n = io::stdin().lock().read(buf.initialize_unfilled())?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

fn write_now(mut stream: impl Write, buf: &[u8]) -> io::Result<usize> {
    let n = stream.write(buf)?;
    stream.flush()?;
    Ok(n)
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        Poll::Ready(write_now(io::stdout().lock(), buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(io::stdout().lock().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

impl AsyncWrite for Stderr {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(crate::sync::budget(cx));
        Poll::Ready(write_now(io::stderr().lock(), buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(io::stderr().lock().flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

macro_rules! std_fd {
    ($($ty:ident => $std:ident;)*) => {$(
        impl std::os::unix::io::AsRawFd for $ty {
            fn as_raw_fd(&self) -> std::os::unix::io::RawFd {
                io::$std().as_raw_fd()
            }
        }

        impl std::os::unix::io::AsFd for $ty {
            fn as_fd(&self) -> std::os::unix::io::BorrowedFd<'_> {
                // SAFETY: the standard streams stay open for the process's
                // life.
                unsafe { std::os::unix::io::BorrowedFd::borrow_raw(self.as_raw_fd()) }
            }
        }
    )*};
}

use std::os::unix::io::AsRawFd as _;

std_fd! {
    Stdin => stdin;
    Stdout => stdout;
    Stderr => stderr;
}
