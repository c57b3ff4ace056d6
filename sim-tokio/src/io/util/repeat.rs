use crate::io::{AsyncRead, ReadBuf};
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// A reader that yields one byte forever: see [`repeat`].
#[derive(Debug)]
pub struct Repeat {
    byte: u8,
}

/// A reader that yields `byte` forever.
pub fn repeat(byte: u8) -> Repeat {
    Repeat { byte }
}

impl AsyncRead for Repeat {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        ready!(crate::sync::budget(cx));
        let n = buf.remaining();
        buf.initialize_unfilled_to(n).fill(self.byte);
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}
