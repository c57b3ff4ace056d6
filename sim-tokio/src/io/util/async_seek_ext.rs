use crate::io::AsyncSeek;
use std::future::Future;
use std::io::{self, SeekFrom};
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

/// The future of [`AsyncSeekExt::seek`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Seek<'a, S: ?Sized> {
    seek: &'a mut S,
    pos: Option<SeekFrom>,
    _pin: PhantomPinned,
}

impl<S: AsyncSeek + ?Sized + Unpin> Future for Seek<'_, S> {
    type Output = io::Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        if let Some(pos) = me.pos {
            // Finish any seek already in progress before starting ours.
            ready!(Pin::new(&mut *me.seek).poll_complete(cx))?;
            me.pos = None;
            Pin::new(&mut *me.seek).start_seek(pos)?;
        }
        Pin::new(&mut *me.seek).poll_complete(cx)
    }
}

/// Seeking helpers for every [`AsyncSeek`].
pub trait AsyncSeekExt: AsyncSeek {
    /// Seeks to `pos`; returns the new position from the start.
    fn seek(&mut self, pos: SeekFrom) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        Seek {
            seek: self,
            pos: Some(pos),
            _pin: PhantomPinned,
        }
    }

    /// Seeks to the start.
    fn rewind(&mut self) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        self.seek(SeekFrom::Start(0))
    }

    /// The current position from the start.
    fn stream_position(&mut self) -> Seek<'_, Self>
    where
        Self: Unpin,
    {
        self.seek(SeekFrom::Current(0))
    }
}

impl<S: AsyncSeek + ?Sized> AsyncSeekExt for S {}
