use super::buf_reader::DEFAULT_BUF_SIZE;
use crate::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// One direction of a copy: a buffer, and how far it has come.
#[derive(Debug)]
pub(crate) struct CopyBuffer {
    read_done: bool,
    need_flush: bool,
    pos: usize,
    cap: usize,
    amt: u64,
    buf: Box<[u8]>,
}

impl CopyBuffer {
    pub(crate) fn new(size: usize) -> CopyBuffer {
        CopyBuffer {
            read_done: false,
            need_flush: false,
            pos: 0,
            cap: 0,
            amt: 0,
            buf: vec![0; size].into_boxed_slice(),
        }
    }

    /// Copies until the reader ends, then flushes; returns bytes copied.
    /// While the reader waits, written data is flushed, so nothing sits in a
    /// writer's buffer while the copy idles.
    pub(crate) fn poll_copy<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        mut reader: Pin<&mut R>,
        mut writer: Pin<&mut W>,
    ) -> Poll<io::Result<u64>>
    where
        R: AsyncRead + ?Sized,
        W: AsyncWrite + ?Sized,
    {
        // One unit of the task's budget per poll, as in tokio: a loop of
        // copies between streams that are always ready still yields.
        let coop = ready!(crate::task::coop::poll_proceed(cx));
        loop {
            if self.pos == self.cap && !self.read_done {
                let mut buf = ReadBuf::new(&mut self.buf);
                match reader.as_mut().poll_read(cx, &mut buf) {
                    Poll::Pending => {
                        if self.need_flush {
                            ready!(writer.as_mut().poll_flush(cx))?;
                            self.need_flush = false;
                        }
                        return Poll::Pending;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => {
                        let n = buf.filled().len();
                        if n == 0 {
                            self.read_done = true;
                        } else {
                            self.pos = 0;
                            self.cap = n;
                        }
                    }
                }
            }
            while self.pos < self.cap {
                let i = ready!(writer
                    .as_mut()
                    .poll_write(cx, &self.buf[self.pos..self.cap]))?;
                if i == 0 {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "write zero byte into writer",
                    )));
                }
                self.pos += i;
                self.amt += i as u64;
                self.need_flush = true;
                coop.made_progress();
            }
            if self.pos == self.cap && self.read_done {
                ready!(writer.as_mut().poll_flush(cx))?;
                return Poll::Ready(Ok(self.amt));
            }
        }
    }
}

/// Copies everything `reader` yields into `writer`, then flushes it;
/// returns how many bytes.
///
/// # Errors
/// Either side's errors, or `WriteZero` if the writer stops taking bytes.
pub async fn copy<'a, R, W>(reader: &'a mut R, writer: &'a mut W) -> io::Result<u64>
where
    R: AsyncRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut buf = CopyBuffer::new(DEFAULT_BUF_SIZE);
    poll_fn(|cx| buf.poll_copy(cx, Pin::new(&mut *reader), Pin::new(&mut *writer))).await
}

/// Copies from a buffered reader's own buffer into `writer`, then flushes
/// it; returns how many bytes.
///
/// # Errors
/// Either side's errors, or `WriteZero` if the writer stops taking bytes.
pub async fn copy_buf<'a, R, W>(reader: &'a mut R, writer: &'a mut W) -> io::Result<u64>
where
    R: AsyncBufRead + Unpin + ?Sized,
    W: AsyncWrite + Unpin + ?Sized,
{
    let mut amt = 0u64;
    poll_fn(|cx| {
        let coop = ready!(crate::task::coop::poll_proceed(cx));
        loop {
            let mut reader = Pin::new(&mut *reader);
            let writer = Pin::new(&mut *writer);
            let buffer = ready!(reader.as_mut().poll_fill_buf(cx))?;
            if buffer.is_empty() {
                ready!(writer.poll_flush(cx))?;
                return Poll::Ready(Ok(amt));
            }
            let i = ready!(writer.poll_write(cx, buffer))?;
            if i == 0 {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "write zero byte into writer",
                )));
            }
            amt += i as u64;
            reader.consume(i);
            coop.made_progress();
        }
    })
    .await
}
