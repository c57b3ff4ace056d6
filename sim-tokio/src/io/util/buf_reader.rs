use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use pin_project_lite::pin_project;
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::{cmp, fmt};

/// The default buffer size of the buffered readers and writers.
pub(crate) const DEFAULT_BUF_SIZE: usize = 8 * 1024;

pin_project! {
    /// Buffers reads from an [`AsyncRead`]: many small reads become few
    /// large ones. A read at least as large as the buffer, with the buffer
    /// empty, goes straight to the inner reader.
    pub struct BufReader<R> {
        #[pin]
        inner: R,
        buf: Box<[u8]>,
        pos: usize,
        cap: usize,
        seek_state: SeekState,
    }
}

#[derive(Debug, Clone, Copy)]
enum SeekState {
    Init,
    Start(SeekFrom),
    /// `SeekFrom::Current(n)` where `n` less the buffered bytes overflows:
    /// back by the buffered bytes first, then by `n`.
    PendingOverflowed(i64),
    Pending,
}

impl<R: AsyncRead> BufReader<R> {
    /// A reader with an 8 KiB buffer.
    pub fn new(inner: R) -> Self {
        Self::with_capacity(DEFAULT_BUF_SIZE, inner)
    }

    /// A reader with a buffer of `capacity` bytes.
    ///
    /// # Panics
    /// When `capacity` is 0, as tokio does.
    #[track_caller]
    pub fn with_capacity(capacity: usize, inner: R) -> Self {
        assert!(capacity > 0, "capacity must be greater than zero");
        BufReader {
            inner,
            buf: vec![0; capacity].into_boxed_slice(),
            pos: 0,
            cap: 0,
            seek_state: SeekState::Init,
        }
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably (reading from it skips the buffer).
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The inner reader, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().inner
    }

    /// The inner reader; buffered data is lost.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The buffered data not yet read.
    pub fn buffer(&self) -> &[u8] {
        &self.buf[self.pos..self.cap]
    }

    fn discard_buffer(self: Pin<&mut Self>) {
        let me = self.project();
        *me.pos = 0;
        *me.cap = 0;
    }
}

/// A `BufReader`'s buffer and positions, to move it between layers.
pub(crate) struct ReaderParts {
    buf: Box<[u8]>,
    pos: usize,
    cap: usize,
    seek_state: SeekState,
}

impl<R> BufReader<R> {
    pub(crate) fn into_parts(self) -> (R, ReaderParts) {
        let parts = ReaderParts {
            buf: self.buf,
            pos: self.pos,
            cap: self.cap,
            seek_state: self.seek_state,
        };
        (self.inner, parts)
    }

    pub(crate) fn from_parts(inner: R, parts: ReaderParts) -> Self {
        BufReader {
            inner,
            buf: parts.buf,
            pos: parts.pos,
            cap: parts.cap,
            seek_state: parts.seek_state,
        }
    }
}

impl<R: AsyncRead> AsyncRead for BufReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.pos == self.cap && buf.remaining() >= self.buf.len() {
            let res = ready!(self.as_mut().get_pin_mut().poll_read(cx, buf));
            self.discard_buffer();
            return Poll::Ready(res);
        }
        let rem = ready!(self.as_mut().poll_fill_buf(cx))?;
        let amt = cmp::min(rem.len(), buf.remaining());
        buf.put_slice(&rem[..amt]);
        self.consume(amt);
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncRead> AsyncBufRead for BufReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.project();
        if *me.pos >= *me.cap {
            debug_assert!(*me.pos == *me.cap, "the read position never passes the end");
            let mut buf = ReadBuf::new(me.buf);
            ready!(me.inner.poll_read(cx, &mut buf))?;
            *me.cap = buf.filled().len();
            *me.pos = 0;
        }
        Poll::Ready(Ok(&me.buf[*me.pos..*me.cap]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.project();
        *me.pos = cmp::min(*me.pos + amt, *me.cap);
    }
}

impl<R: AsyncRead + AsyncSeek> AsyncSeek for BufReader<R> {
    fn start_seek(self: Pin<&mut Self>, pos: SeekFrom) -> io::Result<()> {
        *self.project().seek_state = SeekState::Start(pos);
        Ok(())
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let state = *self.as_mut().project().seek_state;
        let result = match state {
            SeekState::Init => {
                // Only the position was asked for: the inner position less
                // what is buffered but unread.
                let pos = ready!(self.as_mut().get_pin_mut().poll_complete(cx))?;
                let remainder = (self.cap - self.pos) as u64;
                return Poll::Ready(Ok(pos.saturating_sub(remainder)));
            }
            SeekState::Start(SeekFrom::Current(n)) => {
                let remainder = (self.cap - self.pos) as i64;
                self.as_mut().discard_buffer();
                match n.checked_sub(remainder) {
                    Some(target) => self
                        .as_mut()
                        .get_pin_mut()
                        .start_seek(SeekFrom::Current(target)),
                    // Two seeks: if the second fails, the reader stays where
                    // `SeekFrom::Current(0)` would have put it.
                    None => {
                        let first = self
                            .as_mut()
                            .get_pin_mut()
                            .start_seek(SeekFrom::Current(-remainder));
                        if first.is_ok() {
                            *self.as_mut().project().seek_state = SeekState::PendingOverflowed(n);
                            return self.poll_complete(cx);
                        }
                        first
                    }
                }
            }
            SeekState::PendingOverflowed(n) => {
                if let Err(e) = ready!(self.as_mut().get_pin_mut().poll_complete(cx)) {
                    *self.as_mut().project().seek_state = SeekState::Init;
                    return Poll::Ready(Err(e));
                }
                self.as_mut().get_pin_mut().start_seek(SeekFrom::Current(n))
            }
            SeekState::Start(pos) => {
                self.as_mut().discard_buffer();
                self.as_mut().get_pin_mut().start_seek(pos)
            }
            SeekState::Pending => Ok(()),
        };
        if let Err(e) = result {
            *self.as_mut().project().seek_state = SeekState::Init;
            return Poll::Ready(Err(e));
        }
        *self.as_mut().project().seek_state = SeekState::Pending;
        let pos = ready!(self.as_mut().get_pin_mut().poll_complete(cx));
        *self.as_mut().project().seek_state = SeekState::Init;
        Poll::Ready(pos)
    }
}

impl<R: AsyncRead + AsyncWrite> AsyncWrite for BufReader<R> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_pin_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_pin_mut().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.get_ref().is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_shutdown(cx)
    }
}

impl<R: fmt::Debug> fmt::Debug for BufReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufReader")
            .field("reader", &self.inner)
            .field(
                "buffer",
                &format_args!("{}/{}", self.cap - self.pos, self.buf.len()),
            )
            .finish()
    }
}
