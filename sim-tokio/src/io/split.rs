//! Splits one read-write stream into a read half and a write half that can
//! live in different tasks.

use crate::io::{AsyncRead, AsyncWrite, ReadBuf};
use std::fmt;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// The read half of [`split`].
pub struct ReadHalf<T> {
    inner: Arc<Inner<T>>,
}

/// The write half of [`split`].
pub struct WriteHalf<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    stream: Mutex<T>,
}

impl<T> Inner<T> {
    fn with_lock<R>(&self, f: impl FnOnce(Pin<&mut T>) -> R) -> R {
        let mut guard = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the stream lives in the Arc and is never moved out while
        // both halves exist (`unsplit` needs `T: Unpin`).
        let stream = unsafe { Pin::new_unchecked(&mut *guard) };
        f(stream)
    }
}

/// Splits a stream into halves; each locks the stream for its own calls.
pub fn split<T>(stream: T) -> (ReadHalf<T>, WriteHalf<T>)
where
    T: AsyncRead + AsyncWrite,
{
    let inner = Arc::new(Inner {
        stream: Mutex::new(stream),
    });
    (
        ReadHalf {
            inner: inner.clone(),
        },
        WriteHalf { inner },
    )
}

impl<T> ReadHalf<T> {
    /// Whether `other` is the other half of the same stream.
    pub fn is_pair_of(&self, other: &WriteHalf<T>) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Joins the halves back into the stream.
    ///
    /// # Panics
    /// When `wr` is not this half's pair.
    #[track_caller]
    pub fn unsplit(self, wr: WriteHalf<T>) -> T
    where
        T: Unpin,
    {
        assert!(
            self.is_pair_of(&wr),
            "Unrelated `split::Write` passed to `split::Read::unsplit`."
        );
        drop(wr);
        let inner = Arc::try_unwrap(self.inner)
            .ok()
            .expect("`Arc::try_unwrap` failed");
        inner.stream.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T> WriteHalf<T> {
    /// Whether `other` is the other half of the same stream.
    pub fn is_pair_of(&self, other: &ReadHalf<T>) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl<T: AsyncRead> AsyncRead for ReadHalf<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.inner.with_lock(|stream| stream.poll_read(cx, buf))
    }
}

impl<T: AsyncWrite> AsyncWrite for WriteHalf<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<Result<usize, io::Error>> {
        self.inner.with_lock(|stream| stream.poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        self.inner.with_lock(|stream| stream.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), io::Error>> {
        self.inner.with_lock(|stream| stream.poll_shutdown(cx))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<Result<usize, io::Error>> {
        self.inner
            .with_lock(|stream| stream.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.with_lock(|stream| stream.is_write_vectored())
    }
}

// As tokio's: each half only reaches the stream under the lock.
// SAFETY: a half holds only an `Arc` of the shared stream, and moving it moves
// the right to lock that stream; the stream moves with it only if `T: Send`.
unsafe impl<T: Send> Send for ReadHalf<T> {}
// SAFETY: as for `ReadHalf`: the write half reaches the stream only under its
// lock.
unsafe impl<T: Send> Send for WriteHalf<T> {}
// SAFETY: `&ReadHalf` gives no access to the stream without its lock (the poll
// methods take `Pin<&mut Self>`), so sharing it shares at most `&T`, sound
// when `T: Sync`.
unsafe impl<T: Sync> Sync for ReadHalf<T> {}
// SAFETY: as for `ReadHalf`'s `Sync`: the stream is reached only under its
// lock.
unsafe impl<T: Sync> Sync for WriteHalf<T> {}

impl<T: fmt::Debug> fmt::Debug for ReadHalf<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("split::ReadHalf").finish()
    }
}

impl<T: fmt::Debug> fmt::Debug for WriteHalf<T> {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt.debug_struct("split::WriteHalf").finish()
    }
}
