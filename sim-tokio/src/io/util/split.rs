use super::read_until::poll_read_until;
use crate::io::AsyncBufRead;
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// The segments of a reader between delimiters: see
    /// [`AsyncBufReadExt::split`](super::AsyncBufReadExt::split).
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Split<R> {
        #[pin]
        reader: R,
        buf: Vec<u8>,
        delim: u8,
        read: usize,
    }
}

pub(crate) fn split<R: AsyncBufRead>(reader: R, delim: u8) -> Split<R> {
    Split {
        reader,
        buf: Vec::new(),
        delim,
        read: 0,
    }
}

impl<R: AsyncBufRead + Unpin> Split<R> {
    /// The next segment, without the delimiter; `None` at end of stream.
    ///
    /// # Errors
    /// The reader's errors.
    pub async fn next_segment(&mut self) -> io::Result<Option<Vec<u8>>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next_segment(cx)).await
    }
}

impl<R: AsyncBufRead> Split<R> {
    /// Polls for the next segment.
    ///
    /// # Errors
    /// The reader's errors.
    pub fn poll_next_segment(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<Vec<u8>>>> {
        let me = self.project();
        let n = ready!(poll_read_until(me.reader, cx, *me.delim, me.buf, me.read))?;
        if n == 0 && me.buf.is_empty() {
            return Poll::Ready(Ok(None));
        }
        if me.buf.last() == Some(me.delim) {
            me.buf.pop();
        }
        Poll::Ready(Ok(Some(std::mem::take(me.buf))))
    }
}
