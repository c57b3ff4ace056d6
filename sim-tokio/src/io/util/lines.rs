use super::read_until::poll_read_until;
use crate::io::AsyncBufRead;
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// The lines of a reader: see
    /// [`AsyncBufReadExt::lines`](super::AsyncBufReadExt::lines).
    /// Cancel-safe: a partly read line is kept for the next call.
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Lines<R> {
        #[pin]
        reader: R,
        buf: Vec<u8>,
        read: usize,
    }
}

pub(crate) fn lines<R: AsyncBufRead>(reader: R) -> Lines<R> {
    Lines {
        reader,
        buf: Vec::new(),
        read: 0,
    }
}

impl<R: AsyncBufRead + Unpin> Lines<R> {
    /// The next line, without its `\n` or `\r\n`; `None` at end of stream.
    ///
    /// # Errors
    /// The reader's errors, or `InvalidData` for a line that is not UTF-8.
    pub async fn next_line(&mut self) -> io::Result<Option<String>> {
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_next_line(cx)).await
    }

    /// The inner reader, mutably.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.reader
    }

    /// The inner reader.
    pub fn get_ref(&mut self) -> &R {
        &self.reader
    }

    /// The inner reader, by value. Buffered data of a partial line is lost.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: AsyncBufRead> Lines<R> {
    /// Polls for the next line.
    ///
    /// # Errors
    /// As [`Lines::next_line`].
    pub fn poll_next_line(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Option<String>>> {
        let me = self.project();
        let n = ready!(poll_read_until(me.reader, cx, b'\n', me.buf, me.read))?;
        if n == 0 && me.buf.is_empty() {
            return Poll::Ready(Ok(None));
        }
        let mut bytes = std::mem::take(me.buf);
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        Poll::Ready(String::from_utf8(bytes).map(Some).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            )
        }))
    }
}
