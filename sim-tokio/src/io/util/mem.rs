//! In-memory pipes: `duplex` (two connected streams) and `simplex` (one
//! direction), with bounded buffers that push back on writers.

use crate::io::{split, AsyncRead, AsyncWrite, ReadBuf, ReadHalf, WriteHalf};
use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{self, Poll, Waker};

/// One end of a [`duplex`] pipe: what it writes, the other end reads.
#[derive(Debug)]
pub struct DuplexStream {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    read: Arc<Mutex<SimplexStream>>,
    write: Arc<Mutex<SimplexStream>>,
}

/// A one-way in-memory pipe with a bounded buffer.
///
/// Reads return what was written, then end of stream once the write side
/// is shut down. Writes wait while the buffer is full, and fail with
/// `BrokenPipe` once the read side is closed.
#[derive(Debug)]
pub struct SimplexStream {
    buffer: VecDeque<u8>,
    is_closed: bool,
    max_buf_size: usize,
    read_waker: Option<Waker>,
    write_waker: Option<Waker>,
}

/// Two connected streams, each buffering up to `max_buf_size` bytes
/// written toward the other.
///
/// # Panics
/// When `max_buf_size` is 0, as tokio does.
#[track_caller]
pub fn duplex(max_buf_size: usize) -> (DuplexStream, DuplexStream) {
    let one = Arc::new(Mutex::new(SimplexStream::new_unsplit(max_buf_size)));
    let two = Arc::new(Mutex::new(SimplexStream::new_unsplit(max_buf_size)));
    (
        DuplexStream {
            _unwind: std::marker::PhantomData,
            read: one.clone(),
            write: two.clone(),
        },
        DuplexStream {
            _unwind: std::marker::PhantomData,
            read: two,
            write: one,
        },
    )
}

/// A one-way pipe, split into its read and write halves.
///
/// # Panics
/// When `max_buf_size` is 0, as tokio does.
#[track_caller]
pub fn simplex(max_buf_size: usize) -> (ReadHalf<SimplexStream>, WriteHalf<SimplexStream>) {
    split(SimplexStream::new_unsplit(max_buf_size))
}

fn lock(pipe: &Mutex<SimplexStream>) -> std::sync::MutexGuard<'_, SimplexStream> {
    pipe.lock().unwrap_or_else(|e| e.into_inner())
}

impl SimplexStream {
    /// A pipe whose two ends are this one value.
    ///
    /// # Panics
    /// When `max_buf_size` is 0 (no write could ever go in), as tokio does.
    #[track_caller]
    pub fn new_unsplit(max_buf_size: usize) -> SimplexStream {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        SimplexStream {
            buffer: VecDeque::new(),
            is_closed: false,
            max_buf_size,
            read_waker: None,
            write_waker: None,
        }
    }

    fn close_write(&mut self) {
        self.is_closed = true;
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
    }

    fn close_read(&mut self) {
        self.is_closed = true;
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
    }

    fn poll_read_internal(
        mut self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.buffer.is_empty() {
            let n = buf.remaining().min(self.buffer.len());
            let (front, back) = self.buffer.as_slices();
            let from_front = n.min(front.len());
            buf.put_slice(&front[..from_front]);
            buf.put_slice(&back[..n - from_front]);
            self.buffer.drain(..n);
            if let Some(w) = self.write_waker.take() {
                w.wake();
            }
            Poll::Ready(Ok(()))
        } else if self.is_closed {
            Poll::Ready(Ok(()))
        } else {
            self.read_waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    fn poll_write_internal(
        mut self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.is_closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let avail = self.max_buf_size - self.buffer.len();
        if avail == 0 {
            self.write_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = buf.len().min(avail);
        self.buffer.extend(&buf[..n]);
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored_internal(
        mut self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.is_closed {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let mut avail = self.max_buf_size - self.buffer.len();
        if avail == 0 {
            self.write_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let mut n = 0;
        for buf in bufs {
            let take = buf.len().min(avail);
            self.buffer.extend(&buf[..take]);
            n += take;
            avail -= take;
            if avail == 0 {
                break;
            }
        }
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }
}

fn budget(cx: &mut task::Context<'_>) -> Poll<()> {
    crate::sync::budget(cx)
}

impl AsyncRead for SimplexStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        std::task::ready!(budget(cx));
        self.poll_read_internal(cx, buf)
    }
}

impl AsyncWrite for SimplexStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(budget(cx));
        self.poll_write_internal(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(budget(cx));
        self.poll_write_vectored_internal(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, _: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        self.close_write();
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for DuplexStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock(&self.read)).poll_read(cx, buf)
    }
}

impl AsyncWrite for DuplexStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *lock(&self.write)).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut task::Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *lock(&self.write)).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock(&self.write)).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut task::Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock(&self.write)).poll_shutdown(cx)
    }
}

impl Drop for DuplexStream {
    fn drop(&mut self) {
        // The peer's reads end, and its writes fail.
        lock(&self.write).close_write();
        lock(&self.read).close_read();
    }
}
