use super::buf_reader::DEFAULT_BUF_SIZE;
use crate::io::{AsyncBufRead, AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use pin_project_lite::pin_project;
use std::fmt;
use std::io::{self, IoSlice, SeekFrom};
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// Buffers writes to an [`AsyncWrite`]: small writes collect in memory
    /// and go out together on `flush`, `shutdown`, or when the buffer
    /// fills. A write at least as large as the buffer goes straight through.
    /// Buffered data is lost if the writer is dropped unflushed.
    pub struct BufWriter<W> {
        #[pin]
        inner: W,
        buf: Vec<u8>,
        written: usize,
        seek_state: SeekState,
    }
}

#[derive(Debug, Clone, Copy)]
enum SeekState {
    Init,
    Start(SeekFrom),
    Pending,
}

impl<W: AsyncWrite> BufWriter<W> {
    /// A writer with an 8 KiB buffer.
    pub fn new(inner: W) -> Self {
        Self::with_capacity(DEFAULT_BUF_SIZE, inner)
    }

    /// A writer with a buffer of `cap` bytes.
    pub fn with_capacity(cap: usize, inner: W) -> Self {
        BufWriter {
            inner,
            buf: Vec::with_capacity(cap),
            written: 0,
            seek_state: SeekState::Init,
        }
    }

    /// A vectored write for an inner writer that writes one buffer at a
    /// time: the slices are gathered into the buffer, whole ones only, as
    /// many as fit, so one call may take more than a single slice; a first
    /// slice as large as the buffer goes straight through.
    fn poll_write_gathered(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let mut slices = bufs.iter().filter(|b| !b.is_empty());
        let Some(first) = slices.next() else {
            return Poll::Ready(Ok(0));
        };
        if self.buf.len() + first.len() > self.buf.capacity() {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let me = self.project();
        if first.len() >= me.buf.capacity() {
            return me.inner.poll_write(cx, first);
        }
        me.buf.extend_from_slice(first);
        let mut taken = first.len();
        // Bounded by the slices given.
        for slice in slices {
            if slice.len() > me.buf.capacity() - me.buf.len() {
                break;
            }
            me.buf.extend_from_slice(slice);
            taken += slice.len();
        }
        Poll::Ready(Ok(taken))
    }

    fn flush_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut me = self.project();
        let len = me.buf.len();
        let mut ret = Ok(());
        // Bounded: each turn writes some bytes or stops.
        while *me.written < len {
            match ready!(me.inner.as_mut().poll_write(cx, &me.buf[*me.written..])) {
                Ok(0) => {
                    ret = Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "failed to write the buffered data",
                    ));
                    break;
                }
                Ok(n) => *me.written += n,
                Err(e) => {
                    ret = Err(e);
                    break;
                }
            }
        }
        if *me.written > 0 {
            me.buf.drain(..*me.written);
        }
        *me.written = 0;
        Poll::Ready(ret)
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably (writing to it skips the buffer).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The inner writer, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut W> {
        self.project().inner
    }

    /// The inner writer; buffered data is lost.
    pub fn into_inner(self) -> W {
        self.inner
    }

    /// The buffered data not yet written.
    pub fn buffer(&self) -> &[u8] {
        &self.buf
    }
}

/// A `BufWriter`'s buffer and progress, to move it between layers.
pub(crate) struct WriterParts {
    buf: Vec<u8>,
    written: usize,
    seek_state: SeekState,
}

impl<W> BufWriter<W> {
    pub(crate) fn into_parts(self) -> (W, WriterParts) {
        let parts = WriterParts {
            buf: self.buf,
            written: self.written,
            seek_state: self.seek_state,
        };
        (self.inner, parts)
    }

    pub(crate) fn from_parts(inner: W, parts: WriterParts) -> Self {
        BufWriter {
            inner,
            buf: parts.buf,
            written: parts.written,
            seek_state: parts.seek_state,
        }
    }
}

impl<W: AsyncWrite> AsyncWrite for BufWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.buf.len() + buf.len() > self.buf.capacity() {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let me = self.project();
        if buf.len() >= me.buf.capacity() {
            me.inner.poll_write(cx, buf)
        } else {
            Poll::Ready(io::Write::write(me.buf, buf))
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if !self.inner.is_write_vectored() {
            return self.poll_write_gathered(cx, bufs);
        }
        let total = bufs
            .iter()
            .fold(0usize, |acc, b| acc.saturating_add(b.len()));
        if self.buf.len() + total > self.buf.capacity() {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let me = self.project();
        if total >= me.buf.capacity() {
            me.inner.poll_write_vectored(cx, bufs)
        } else {
            for buf in bufs {
                me.buf.extend_from_slice(buf);
            }
            Poll::Ready(Ok(total))
        }
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().flush_buf(cx))?;
        self.get_pin_mut().poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().flush_buf(cx))?;
        self.get_pin_mut().poll_shutdown(cx)
    }
}

impl<W: AsyncWrite + AsyncSeek> AsyncSeek for BufWriter<W> {
    fn start_seek(self: Pin<&mut Self>, pos: SeekFrom) -> io::Result<()> {
        *self.project().seek_state = SeekState::Start(pos);
        Ok(())
    }

    fn poll_complete(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        // Buffered data goes out before the position moves.
        if let SeekState::Start(pos) = *self.as_mut().project().seek_state {
            ready!(self.as_mut().flush_buf(cx))?;
            self.as_mut().get_pin_mut().start_seek(pos)?;
            *self.as_mut().project().seek_state = SeekState::Pending;
        } else if let SeekState::Init = *self.as_mut().project().seek_state {
            ready!(self.as_mut().flush_buf(cx))?;
        }
        let result = ready!(self.as_mut().get_pin_mut().poll_complete(cx));
        *self.as_mut().project().seek_state = SeekState::Init;
        Poll::Ready(result)
    }
}

impl<W: AsyncWrite + AsyncRead> AsyncRead for BufWriter<W> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_pin_mut().poll_read(cx, buf)
    }
}

impl<W: AsyncWrite + AsyncBufRead> AsyncBufRead for BufWriter<W> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        self.get_pin_mut().poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_pin_mut().consume(amt);
    }
}

impl<W: fmt::Debug> fmt::Debug for BufWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufWriter")
            .field("writer", &self.inner)
            .field(
                "buffer",
                &format_args!("{}/{}", self.buf.len(), self.buf.capacity()),
            )
            .field("written", &self.written)
            .finish()
    }
}
