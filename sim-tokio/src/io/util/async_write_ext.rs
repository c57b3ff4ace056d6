use crate::io::AsyncWrite;
use bytes_dep::Buf;
use std::future::Future;
use std::io::{self, IoSlice};
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "failed to write whole buffer")
}

/// One write of `buf`'s bytes: a vectored writer gets every chunk at once
/// (up to 64), as in tokio; another gets the first chunk.
fn poll_write_buf<W: AsyncWrite + Unpin + ?Sized, B: Buf + ?Sized>(
    writer: &mut W,
    buf: &B,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    if writer.is_write_vectored() {
        let mut slices = [IoSlice::new(&[]); 64];
        let count = buf.chunks_vectored(&mut slices);
        Pin::new(writer).poll_write_vectored(cx, &slices[..count])
    } else {
        Pin::new(writer).poll_write(cx, buf.chunk())
    }
}

/// The future of [`AsyncWriteExt::write`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Write<'a, W: ?Sized> {
    writer: &'a mut W,
    buf: &'a [u8],
    _pin: PhantomPinned,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for Write<'_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        Pin::new(&mut *me.writer).poll_write(cx, me.buf)
    }
}

/// The future of [`AsyncWriteExt::write_vectored`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteVectored<'a, 'b, W: ?Sized> {
    writer: &'a mut W,
    bufs: &'a [IoSlice<'b>],
    _pin: PhantomPinned,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteVectored<'_, '_, W> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        Pin::new(&mut *me.writer).poll_write_vectored(cx, me.bufs)
    }
}

/// The future of [`AsyncWriteExt::write_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteBuf<'a, W, B> {
    writer: &'a mut W,
    buf: &'a mut B,
    _pin: PhantomPinned,
}

impl<W: AsyncWrite + Unpin, B: Buf> Future for WriteBuf<'_, W, B> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        if !me.buf.has_remaining() {
            return Poll::Ready(Ok(0));
        }
        let n = ready!(poll_write_buf(&mut *me.writer, &*me.buf, cx))?;
        me.buf.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// The future of [`AsyncWriteExt::write_all_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteAllBuf<'a, W, B> {
    writer: &'a mut W,
    buf: &'a mut B,
    _pin: PhantomPinned,
}

impl<W: AsyncWrite + Unpin, B: Buf> Future for WriteAllBuf<'_, W, B> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        // Bounded: each turn advances the buffer or fails.
        while me.buf.has_remaining() {
            let n = ready!(poll_write_buf(&mut *me.writer, &*me.buf, cx))?;
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            me.buf.advance(n);
        }
        Poll::Ready(Ok(()))
    }
}

/// The future of [`AsyncWriteExt::write_all`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct WriteAll<'a, W: ?Sized> {
    writer: &'a mut W,
    buf: &'a [u8],
    _pin: PhantomPinned,
}

impl<W: AsyncWrite + Unpin + ?Sized> Future for WriteAll<'_, W> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        // Bounded: each turn shortens the buffer or fails.
        while !me.buf.is_empty() {
            let n = ready!(Pin::new(&mut *me.writer).poll_write(cx, me.buf))?;
            let (_, rest) = std::mem::take(&mut me.buf).split_at(n);
            me.buf = rest;
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
        }
        Poll::Ready(Ok(()))
    }
}

macro_rules! write_int {
    ($($name:ident, $ty:ty, $conv:ident;)*) => {$(
        /// A future that writes one number.
        #[derive(Debug)]
        #[must_use = "futures do nothing unless you `.await` or poll them"]
        pub struct $name<W> {
            dst: W,
            buf: [u8; std::mem::size_of::<$ty>()],
            written: u8,
            _pin: PhantomPinned,
        }

        impl<W> $name<W> {
            pub(crate) fn new(dst: W, n: $ty) -> Self {
                $name {
                    dst,
                    buf: n.$conv(),
                    written: 0,
                    _pin: PhantomPinned,
                }
            }
        }

        impl<W: AsyncWrite + Unpin> Future for $name<W> {
            type Output = io::Result<()>;

            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                // SAFETY: no field is structurally pinned.
                let me = unsafe { self.get_unchecked_mut() };
                // Bounded by the number's size.
                while (me.written as usize) < me.buf.len() {
                    let n = ready!(Pin::new(&mut me.dst).poll_write(cx, &me.buf[me.written as usize..]))?;
                    if n == 0 {
                        return Poll::Ready(Err(write_zero()));
                    }
                    me.written += n as u8;
                }
                Poll::Ready(Ok(()))
            }
        }
    )*};
}

write_int! {
    WriteU8, u8, to_be_bytes;
    WriteI8, i8, to_be_bytes;
    WriteU16, u16, to_be_bytes;
    WriteI16, i16, to_be_bytes;
    WriteU32, u32, to_be_bytes;
    WriteI32, i32, to_be_bytes;
    WriteU64, u64, to_be_bytes;
    WriteI64, i64, to_be_bytes;
    WriteU128, u128, to_be_bytes;
    WriteI128, i128, to_be_bytes;
    WriteF32, f32, to_be_bytes;
    WriteF64, f64, to_be_bytes;
    WriteU16Le, u16, to_le_bytes;
    WriteI16Le, i16, to_le_bytes;
    WriteU32Le, u32, to_le_bytes;
    WriteI32Le, i32, to_le_bytes;
    WriteU64Le, u64, to_le_bytes;
    WriteI64Le, i64, to_le_bytes;
    WriteU128Le, u128, to_le_bytes;
    WriteI128Le, i128, to_le_bytes;
    WriteF32Le, f32, to_le_bytes;
    WriteF64Le, f64, to_le_bytes;
}

/// The future of [`AsyncWriteExt::flush`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Flush<'a, A: ?Sized> {
    a: &'a mut A,
    _pin: PhantomPinned,
}

impl<A: AsyncWrite + Unpin + ?Sized> Future for Flush<'_, A> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        Pin::new(&mut *me.a).poll_flush(cx)
    }
}

/// The future of [`AsyncWriteExt::shutdown`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Shutdown<'a, A: ?Sized> {
    a: &'a mut A,
    _pin: PhantomPinned,
}

impl<A: AsyncWrite + Unpin + ?Sized> Future for Shutdown<'_, A> {
    type Output = io::Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        Pin::new(&mut *me.a).poll_shutdown(cx)
    }
}

macro_rules! write_int_methods {
    ($($(#[$doc:meta])* fn $method:ident($ty:ty) -> $fut:ident;)*) => {$(
        $(#[$doc])*
        fn $method(&mut self, n: $ty) -> $fut<&mut Self>
        where
            Self: Unpin,
        {
            $fut::new(self, n)
        }
    )*};
}

/// Writing helpers for every [`AsyncWrite`].
pub trait AsyncWriteExt: AsyncWrite {
    /// Writes some of `src`; returns how much.
    fn write<'a>(&'a mut self, src: &'a [u8]) -> Write<'a, Self>
    where
        Self: Unpin,
    {
        Write {
            writer: self,
            buf: src,
            _pin: PhantomPinned,
        }
    }

    /// Writes some of several buffers; returns how much.
    fn write_vectored<'a, 'b>(&'a mut self, bufs: &'a [IoSlice<'b>]) -> WriteVectored<'a, 'b, Self>
    where
        Self: Unpin,
    {
        WriteVectored {
            writer: self,
            bufs,
            _pin: PhantomPinned,
        }
    }

    /// Writes some of a `Buf`, advancing it.
    fn write_buf<'a, B>(&'a mut self, src: &'a mut B) -> WriteBuf<'a, Self, B>
    where
        Self: Sized + Unpin,
        B: Buf,
    {
        WriteBuf {
            writer: self,
            buf: src,
            _pin: PhantomPinned,
        }
    }

    /// Writes all of a `Buf`.
    fn write_all_buf<'a, B>(&'a mut self, src: &'a mut B) -> WriteAllBuf<'a, Self, B>
    where
        Self: Sized + Unpin,
        B: Buf,
    {
        WriteAllBuf {
            writer: self,
            buf: src,
            _pin: PhantomPinned,
        }
    }

    /// Writes all of `src`; `WriteZero` if the writer stops taking bytes.
    fn write_all<'a>(&'a mut self, src: &'a [u8]) -> WriteAll<'a, Self>
    where
        Self: Unpin,
    {
        WriteAll {
            writer: self,
            buf: src,
            _pin: PhantomPinned,
        }
    }

    write_int_methods! {
        /// Writes a `u8`.
        fn write_u8(u8) -> WriteU8;
        /// Writes an `i8`.
        fn write_i8(i8) -> WriteI8;
        /// Writes a big-endian `u16`.
        fn write_u16(u16) -> WriteU16;
        /// Writes a big-endian `i16`.
        fn write_i16(i16) -> WriteI16;
        /// Writes a big-endian `u32`.
        fn write_u32(u32) -> WriteU32;
        /// Writes a big-endian `i32`.
        fn write_i32(i32) -> WriteI32;
        /// Writes a big-endian `u64`.
        fn write_u64(u64) -> WriteU64;
        /// Writes a big-endian `i64`.
        fn write_i64(i64) -> WriteI64;
        /// Writes a big-endian `u128`.
        fn write_u128(u128) -> WriteU128;
        /// Writes a big-endian `i128`.
        fn write_i128(i128) -> WriteI128;
        /// Writes a big-endian `f32`.
        fn write_f32(f32) -> WriteF32;
        /// Writes a big-endian `f64`.
        fn write_f64(f64) -> WriteF64;
        /// Writes a little-endian `u16`.
        fn write_u16_le(u16) -> WriteU16Le;
        /// Writes a little-endian `i16`.
        fn write_i16_le(i16) -> WriteI16Le;
        /// Writes a little-endian `u32`.
        fn write_u32_le(u32) -> WriteU32Le;
        /// Writes a little-endian `i32`.
        fn write_i32_le(i32) -> WriteI32Le;
        /// Writes a little-endian `u64`.
        fn write_u64_le(u64) -> WriteU64Le;
        /// Writes a little-endian `i64`.
        fn write_i64_le(i64) -> WriteI64Le;
        /// Writes a little-endian `u128`.
        fn write_u128_le(u128) -> WriteU128Le;
        /// Writes a little-endian `i128`.
        fn write_i128_le(i128) -> WriteI128Le;
        /// Writes a little-endian `f32`.
        fn write_f32_le(f32) -> WriteF32Le;
        /// Writes a little-endian `f64`.
        fn write_f64_le(f64) -> WriteF64Le;
    }

    /// Flushes buffered data.
    fn flush(&mut self) -> Flush<'_, Self>
    where
        Self: Unpin,
    {
        Flush {
            a: self,
            _pin: PhantomPinned,
        }
    }

    /// Shuts the writer down (a stream's peer reads end of stream).
    fn shutdown(&mut self) -> Shutdown<'_, Self>
    where
        Self: Unpin,
    {
        Shutdown {
            a: self,
            _pin: PhantomPinned,
        }
    }
}

impl<W: AsyncWrite + ?Sized> AsyncWriteExt for W {}
