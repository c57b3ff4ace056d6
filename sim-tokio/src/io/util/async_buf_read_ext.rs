use super::async_read_ext::finish_string;
use super::lines::{lines, Lines};
use super::read_until::poll_read_until;
use super::split::{split, Split};
use crate::io::AsyncBufRead;
use std::future::Future;
use std::io;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// The future of [`AsyncBufReadExt::read_until`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadUntil<'a, R: ?Sized> {
    reader: &'a mut R,
    delimiter: u8,
    buf: &'a mut Vec<u8>,
    read: usize,
    _pin: PhantomPinned,
}

impl<R: AsyncBufRead + ?Sized + Unpin> Future for ReadUntil<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        poll_read_until(
            Pin::new(&mut *me.reader),
            cx,
            me.delimiter,
            me.buf,
            &mut me.read,
        )
    }
}

/// The future of [`AsyncBufReadExt::read_line`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadLine<'a, R: ?Sized> {
    reader: &'a mut R,
    output: &'a mut String,
    buf: Vec<u8>,
    keep: usize,
    read: usize,
    _pin: PhantomPinned,
}

impl<R: AsyncBufRead + ?Sized + Unpin> Future for ReadLine<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        let result = ready!(poll_read_until(
            Pin::new(&mut *me.reader),
            cx,
            b'\n',
            &mut me.buf,
            &mut me.read
        ));
        let bytes = std::mem::take(&mut me.buf);
        let text = finish_string(me.output, bytes, me.keep);
        Poll::Ready(result.and_then(|n| text.map(|()| n)))
    }
}

impl<R: ?Sized> Drop for ReadLine<'_, R> {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            let bytes = std::mem::take(&mut self.buf);
            let _ = finish_string(self.output, bytes, self.keep);
        }
    }
}

/// The future of [`AsyncBufReadExt::fill_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct FillBuf<'a, R: ?Sized> {
    reader: Option<&'a mut R>,
    _pin: PhantomPinned,
}

impl<'a, R: AsyncBufRead + ?Sized + Unpin> Future for FillBuf<'a, R> {
    type Output = io::Result<&'a [u8]>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&'a [u8]>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        let reader = me.reader.take().expect("Polled after completion.");
        // One call to `poll_fill_buf`, as in tokio (a reader may count them).
        match Pin::new(&mut *reader).poll_fill_buf(cx) {
            Poll::Pending => {
                me.reader = Some(reader);
                Poll::Pending
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Ready(Ok(slice)) => {
                // SAFETY: the slice borrows from `reader`, a `&'a mut R`
                // this future gives up here and never uses again, so the
                // borrow may last for all of `'a` (today's borrow checker
                // cannot see that the reborrow ends with it).
                let slice = unsafe { std::mem::transmute::<&[u8], &'a [u8]>(slice) };
                Poll::Ready(Ok(slice))
            }
        }
    }
}

/// Buffered-reading helpers for every [`AsyncBufRead`].
pub trait AsyncBufReadExt: AsyncBufRead {
    /// Reads until `byte` (included) or end of stream, appending to `buf`.
    fn read_until<'a>(&'a mut self, byte: u8, buf: &'a mut Vec<u8>) -> ReadUntil<'a, Self>
    where
        Self: Unpin,
    {
        ReadUntil {
            reader: self,
            delimiter: byte,
            buf,
            read: 0,
            _pin: PhantomPinned,
        }
    }

    /// Reads a line (with its `\n`) into `buf`; `InvalidData` if it is not
    /// UTF-8, leaving `buf` as it was.
    fn read_line<'a>(&'a mut self, buf: &'a mut String) -> ReadLine<'a, Self>
    where
        Self: Unpin,
    {
        let keep = buf.len();
        let bytes = std::mem::take(buf).into_bytes();
        ReadLine {
            reader: self,
            output: buf,
            buf: bytes,
            keep,
            read: 0,
            _pin: PhantomPinned,
        }
    }

    /// The segments between `byte`s, as a stream of `Vec<u8>`.
    fn split(self, byte: u8) -> Split<Self>
    where
        Self: Sized + Unpin,
    {
        split(self, byte)
    }

    /// The buffered data, filling the buffer if empty.
    fn fill_buf(&mut self) -> FillBuf<'_, Self>
    where
        Self: Unpin,
    {
        FillBuf {
            reader: Some(self),
            _pin: PhantomPinned,
        }
    }

    /// Marks `amt` buffered bytes as read.
    fn consume(&mut self, amt: usize)
    where
        Self: Unpin,
    {
        std::pin::Pin::new(self).consume(amt);
    }

    /// The lines of the stream, without their `\n` or `\r\n`.
    fn lines(self) -> Lines<Self>
    where
        Self: Sized,
    {
        lines(self)
    }
}

impl<R: AsyncBufRead + ?Sized> AsyncBufReadExt for R {}
