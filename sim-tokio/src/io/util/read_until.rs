//! Reading up to a delimiter: the loop `read_until`, `read_line`, `lines`
//! and `split` share.

use crate::io::AsyncBufRead;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// Reads until `delimiter` (kept) or end of stream, appending to `buf`;
/// `read` counts the bytes across polls.
pub(crate) fn poll_read_until<R: AsyncBufRead + ?Sized>(
    mut reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    delimiter: u8,
    buf: &mut Vec<u8>,
    read: &mut usize,
) -> Poll<io::Result<usize>> {
    loop {
        let (done, used) = {
            let available = ready!(reader.as_mut().poll_fill_buf(cx))?;
            match available.iter().position(|b| *b == delimiter) {
                Some(i) => {
                    buf.extend_from_slice(&available[..=i]);
                    (true, i + 1)
                }
                None => {
                    buf.extend_from_slice(available);
                    (available.is_empty(), available.len())
                }
            }
        };
        reader.as_mut().consume(used);
        *read += used;
        if done {
            return Poll::Ready(Ok(std::mem::take(read)));
        }
    }
}
