use crate::io::{AsyncBufRead, AsyncRead, ReadBuf};
use pin_project_lite::pin_project;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

pin_project! {
    /// A reader that ends after a limit: see
    /// [`AsyncReadExt::take`](super::AsyncReadExt::take).
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Take<R> {
        #[pin]
        inner: R,
        limit_: u64,
    }
}

pub(super) fn take<R: AsyncRead>(inner: R, limit: u64) -> Take<R> {
    Take {
        inner,
        limit_: limit,
    }
}

impl<R: AsyncRead> Take<R> {
    /// How many bytes may still be read.
    pub fn limit(&self) -> u64 {
        self.limit_
    }

    /// Sets how many bytes may still be read.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit_ = limit;
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The inner reader, pinned.
    pub fn get_pin_mut(self: Pin<&mut Self>) -> Pin<&mut R> {
        self.project().inner
    }

    /// The inner reader, by value.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: AsyncRead> AsyncRead for Take<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<Result<(), io::Error>> {
        if self.limit_ == 0 {
            return Poll::Ready(Ok(()));
        }
        let me = self.project();
        let max = std::cmp::min(buf.remaining() as u64, *me.limit_) as usize;
        let mut part = buf.take(max);
        let before = part.filled().as_ptr();
        ready!(me.inner.poll_read(cx, &mut part))?;
        assert_eq!(
            before,
            part.filled().as_ptr(),
            "the reader swapped the buffer"
        );
        let n = part.filled().len();
        // SAFETY: the inner read initialized `n` bytes of `buf`'s unfilled
        // part.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        *me.limit_ -= n as u64;
        Poll::Ready(Ok(()))
    }
}

impl<R: AsyncBufRead> AsyncBufRead for Take<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let me = self.project();
        if *me.limit_ == 0 {
            return Poll::Ready(Ok(&[]));
        }
        let buf = ready!(me.inner.poll_fill_buf(cx)?);
        let cap = std::cmp::min(buf.len() as u64, *me.limit_) as usize;
        Poll::Ready(Ok(&buf[..cap]))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let me = self.project();
        let amt = std::cmp::min(amt as u64, *me.limit_) as usize;
        *me.limit_ -= amt as u64;
        me.inner.consume(amt);
    }
}
