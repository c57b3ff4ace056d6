use crate::io::util::chain::{chain, Chain};
use crate::io::util::take::{take, Take};
use crate::io::{AsyncRead, ReadBuf as IoReadBuf};
use bytes_dep::BufMut;
use std::future::Future;
use std::io;
use std::marker::PhantomPinned;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

fn eof() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "early eof")
}

/// The future of [`AsyncReadExt::read`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Read<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut [u8],
    _pin: PhantomPinned,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for Read<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        let mut buf = IoReadBuf::new(me.buf);
        ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut buf))?;
        Poll::Ready(Ok(buf.filled().len()))
    }
}

/// The future of [`AsyncReadExt::read_buf`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadBuf<'a, R: ?Sized, B: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut B,
    _pin: PhantomPinned,
}

/// Reads once into the spare room of `buf`, advancing it.
pub(crate) fn poll_read_buf<R, B>(
    reader: Pin<&mut R>,
    cx: &mut Context<'_>,
    buf: &mut B,
) -> Poll<io::Result<usize>>
where
    R: AsyncRead + ?Sized,
    B: BufMut + ?Sized,
{
    if !buf.has_remaining_mut() {
        return Poll::Ready(Ok(0));
    }
    let n = {
        let dst = buf.chunk_mut();
        // SAFETY: the slice is only written through `ReadBuf`, which never
        // de-initializes bytes.
        let dst: &mut [MaybeUninit<u8>] = unsafe { dst.as_uninit_slice_mut() };
        let mut read_buf = IoReadBuf::uninit(dst);
        let before = read_buf.filled().as_ptr();
        ready!(reader.poll_read(cx, &mut read_buf))?;
        assert_eq!(
            before,
            read_buf.filled().as_ptr(),
            "the reader swapped the buffer"
        );
        read_buf.filled().len()
    };
    // SAFETY: `n` bytes were initialized by the read.
    unsafe { buf.advance_mut(n) };
    Poll::Ready(Ok(n))
}

impl<R, B> Future for ReadBuf<'_, R, B>
where
    R: AsyncRead + Unpin + ?Sized,
    B: BufMut + ?Sized,
{
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        poll_read_buf(Pin::new(&mut *me.reader), cx, me.buf)
    }
}

/// The future of [`AsyncReadExt::read_exact`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadExact<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut [u8],
    filled: usize,
    _pin: PhantomPinned,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadExact<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        // Bounded: each turn fills at least one byte or ends.
        while me.filled < me.buf.len() {
            let mut buf = IoReadBuf::new(&mut me.buf[me.filled..]);
            ready!(Pin::new(&mut *me.reader).poll_read(cx, &mut buf))?;
            let n = buf.filled().len();
            if n == 0 {
                return Poll::Ready(Err(eof()));
            }
            me.filled += n;
        }
        Poll::Ready(Ok(me.buf.len()))
    }
}

/// The bytes of the small read that probes for the end of the stream.
const PROBE_BYTES: usize = 32;

/// What a read to the end keeps between polls.
#[derive(Debug)]
pub(crate) struct ToEnd {
    /// Bytes read so far.
    read: usize,
    /// The vector's capacity when the read began.
    start_cap: usize,
    /// Bytes of the vector's spare room that earlier reads initialized
    /// (and did not fill): the next read is told, as tokio tells it. Zero
    /// again when the vector grows.
    spare_init: usize,
}

impl ToEnd {
    pub(crate) fn new(buf: &Vec<u8>) -> ToEnd {
        ToEnd {
            read: 0,
            start_cap: buf.capacity(),
            spare_init: 0,
        }
    }
}

/// Reads to end of stream, appending to `buf`; returns bytes read.
///
/// Capacity grows as in tokio: each read into the vector first makes room
/// for 32 bytes more (a `Vec` grows by doubling), except while the vector
/// is still at the capacity it came with (`start_cap`, at least 32) and has
/// less than 32 bytes of room: then a small read on the stack looks for
/// the end first, so a vector made big enough never grows.
pub(crate) fn poll_read_to_end<R: AsyncRead + ?Sized>(
    buf: &mut Vec<u8>,
    mut reader: Pin<&mut R>,
    state: &mut ToEnd,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    // Bounded: each turn reads some bytes or ends.
    loop {
        let room = buf.capacity() - buf.len();
        let cap_before = buf.capacity();
        let n = if room < PROBE_BYTES
            && buf.capacity() == state.start_cap
            && state.start_cap >= PROBE_BYTES
        {
            let mut probe = [MaybeUninit::<u8>::uninit(); PROBE_BYTES];
            let mut read_buf = IoReadBuf::uninit(&mut probe);
            ready!(reader.as_mut().poll_read(cx, &mut read_buf))?;
            let got = read_buf.filled();
            if got.len() > room {
                buf.reserve(PROBE_BYTES);
            }
            buf.extend_from_slice(got);
            state.spare_init = state.spare_init.saturating_sub(got.len());
            got.len()
        } else {
            buf.reserve(PROBE_BYTES);
            let len = buf.len();
            let mut read_buf = IoReadBuf::uninit(buf.spare_capacity_mut());
            // SAFETY: `spare_init` bytes of the room were initialized by
            // earlier reads into it, and nothing de-initializes them.
            unsafe { read_buf.assume_init(state.spare_init) };
            ready!(reader.as_mut().poll_read(cx, &mut read_buf))?;
            let n = read_buf.filled().len();
            state.spare_init = read_buf.initialized().len() - n;
            // SAFETY: the read initialized `n` bytes of the spare capacity.
            unsafe { buf.set_len(len + n) };
            n
        };
        if buf.capacity() != cap_before {
            state.spare_init = 0;
        }
        if n == 0 {
            return Poll::Ready(Ok(std::mem::take(&mut state.read)));
        }
        state.read += n;
    }
}

/// The future of [`AsyncReadExt::read_to_end`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadToEnd<'a, R: ?Sized> {
    reader: &'a mut R,
    buf: &'a mut Vec<u8>,
    state: ToEnd,
    _pin: PhantomPinned,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToEnd<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        poll_read_to_end(me.buf, Pin::new(&mut *me.reader), &mut me.state, cx)
    }
}

/// Puts `bytes` into `output` if they are UTF-8; otherwise restores
/// `output` to its first `keep` bytes and reports invalid data.
pub(crate) fn finish_string(output: &mut String, bytes: Vec<u8>, keep: usize) -> io::Result<()> {
    match String::from_utf8(bytes) {
        Ok(s) => {
            *output = s;
            Ok(())
        }
        Err(e) => {
            let mut bytes = e.into_bytes();
            bytes.truncate(keep);
            *output = String::from_utf8(bytes).expect("the kept prefix was a String");
            Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ))
        }
    }
}

/// The future of [`AsyncReadExt::read_to_string`].
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct ReadToString<'a, R: ?Sized> {
    reader: &'a mut R,
    output: &'a mut String,
    buf: Vec<u8>,
    keep: usize,
    state: ToEnd,
    _pin: PhantomPinned,
}

impl<R: AsyncRead + Unpin + ?Sized> Future for ReadToString<'_, R> {
    type Output = io::Result<usize>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        // SAFETY: no field is structurally pinned.
        let me = unsafe { self.get_unchecked_mut() };
        let polled = ready!(poll_read_to_end(
            &mut me.buf,
            Pin::new(&mut *me.reader),
            &mut me.state,
            cx
        ));
        let mut bytes = std::mem::take(&mut me.buf);
        match polled {
            Ok(n) => Poll::Ready(finish_string(me.output, bytes, me.keep).map(|()| n)),
            // An error leaves the string as it was, as in tokio.
            Err(e) => {
                bytes.truncate(me.keep);
                *me.output = String::from_utf8(bytes).expect("the kept prefix was a String");
                Poll::Ready(Err(e))
            }
        }
    }
}

impl<R: ?Sized> Drop for ReadToString<'_, R> {
    fn drop(&mut self) {
        // Dropped part-way: keep what was read if it is text so far.
        if !self.buf.is_empty() {
            let bytes = std::mem::take(&mut self.buf);
            let _ = finish_string(self.output, bytes, self.keep);
        }
    }
}

macro_rules! read_int {
    ($($name:ident, $ty:ty, $conv:ident;)*) => {$(
        /// A future that reads one number.
        #[derive(Debug)]
        #[must_use = "futures do nothing unless you `.await` or poll them"]
        pub struct $name<R> {
            src: R,
            buf: [u8; std::mem::size_of::<$ty>()],
            read: u8,
            _pin: PhantomPinned,
        }

        impl<R> $name<R> {
            pub(crate) fn new(src: R) -> Self {
                $name {
                    src,
                    buf: [0; std::mem::size_of::<$ty>()],
                    read: 0,
                    _pin: PhantomPinned,
                }
            }
        }

        impl<R: AsyncRead + Unpin> Future for $name<R> {
            type Output = io::Result<$ty>;

            fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<$ty>> {
                // SAFETY: no field is structurally pinned.
                let me = unsafe { self.get_unchecked_mut() };
                // Bounded by the number's size.
                while (me.read as usize) < me.buf.len() {
                    let mut buf = IoReadBuf::new(&mut me.buf[me.read as usize..]);
                    ready!(Pin::new(&mut me.src).poll_read(cx, &mut buf))?;
                    let n = buf.filled().len();
                    if n == 0 {
                        return Poll::Ready(Err(eof()));
                    }
                    me.read += n as u8;
                }
                Poll::Ready(Ok(<$ty>::$conv(me.buf)))
            }
        }
    )*};
}

read_int! {
    ReadU8, u8, from_be_bytes;
    ReadI8, i8, from_be_bytes;
    ReadU16, u16, from_be_bytes;
    ReadI16, i16, from_be_bytes;
    ReadU32, u32, from_be_bytes;
    ReadI32, i32, from_be_bytes;
    ReadU64, u64, from_be_bytes;
    ReadI64, i64, from_be_bytes;
    ReadU128, u128, from_be_bytes;
    ReadI128, i128, from_be_bytes;
    ReadF32, f32, from_be_bytes;
    ReadF64, f64, from_be_bytes;
    ReadU16Le, u16, from_le_bytes;
    ReadI16Le, i16, from_le_bytes;
    ReadU32Le, u32, from_le_bytes;
    ReadI32Le, i32, from_le_bytes;
    ReadU64Le, u64, from_le_bytes;
    ReadI64Le, i64, from_le_bytes;
    ReadU128Le, u128, from_le_bytes;
    ReadI128Le, i128, from_le_bytes;
    ReadF32Le, f32, from_le_bytes;
    ReadF64Le, f64, from_le_bytes;
}

macro_rules! read_int_methods {
    ($($(#[$doc:meta])* fn $method:ident -> $fut:ident;)*) => {$(
        $(#[$doc])*
        fn $method(&mut self) -> $fut<&mut Self>
        where
            Self: Unpin,
        {
            $fut::new(self)
        }
    )*};
}

/// Reading helpers for every [`AsyncRead`].
pub trait AsyncReadExt: AsyncRead {
    /// Reads `self` to its end, then `next`.
    fn chain<R>(self, next: R) -> Chain<Self, R>
    where
        Self: Sized,
        R: AsyncRead,
    {
        chain(self, next)
    }

    /// Reads some bytes into `buf`; 0 means end of stream (or an empty
    /// `buf`).
    fn read<'a>(&'a mut self, buf: &'a mut [u8]) -> Read<'a, Self>
    where
        Self: Unpin,
    {
        Read {
            reader: self,
            buf,
            _pin: PhantomPinned,
        }
    }

    /// Reads some bytes into the spare room of a `BufMut`, advancing it.
    fn read_buf<'a, B>(&'a mut self, buf: &'a mut B) -> ReadBuf<'a, Self, B>
    where
        Self: Unpin,
        B: BufMut + ?Sized,
    {
        ReadBuf {
            reader: self,
            buf,
            _pin: PhantomPinned,
        }
    }

    /// Fills `buf` completely; `UnexpectedEof` if the stream ends first.
    fn read_exact<'a>(&'a mut self, buf: &'a mut [u8]) -> ReadExact<'a, Self>
    where
        Self: Unpin,
    {
        ReadExact {
            reader: self,
            buf,
            filled: 0,
            _pin: PhantomPinned,
        }
    }

    read_int_methods! {
        /// Reads a `u8`.
        fn read_u8 -> ReadU8;
        /// Reads an `i8`.
        fn read_i8 -> ReadI8;
        /// Reads a big-endian `u16`.
        fn read_u16 -> ReadU16;
        /// Reads a big-endian `i16`.
        fn read_i16 -> ReadI16;
        /// Reads a big-endian `u32`.
        fn read_u32 -> ReadU32;
        /// Reads a big-endian `i32`.
        fn read_i32 -> ReadI32;
        /// Reads a big-endian `u64`.
        fn read_u64 -> ReadU64;
        /// Reads a big-endian `i64`.
        fn read_i64 -> ReadI64;
        /// Reads a big-endian `u128`.
        fn read_u128 -> ReadU128;
        /// Reads a big-endian `i128`.
        fn read_i128 -> ReadI128;
        /// Reads a big-endian `f32`.
        fn read_f32 -> ReadF32;
        /// Reads a big-endian `f64`.
        fn read_f64 -> ReadF64;
        /// Reads a little-endian `u16`.
        fn read_u16_le -> ReadU16Le;
        /// Reads a little-endian `i16`.
        fn read_i16_le -> ReadI16Le;
        /// Reads a little-endian `u32`.
        fn read_u32_le -> ReadU32Le;
        /// Reads a little-endian `i32`.
        fn read_i32_le -> ReadI32Le;
        /// Reads a little-endian `u64`.
        fn read_u64_le -> ReadU64Le;
        /// Reads a little-endian `i64`.
        fn read_i64_le -> ReadI64Le;
        /// Reads a little-endian `u128`.
        fn read_u128_le -> ReadU128Le;
        /// Reads a little-endian `i128`.
        fn read_i128_le -> ReadI128Le;
        /// Reads a little-endian `f32`.
        fn read_f32_le -> ReadF32Le;
        /// Reads a little-endian `f64`.
        fn read_f64_le -> ReadF64Le;
    }

    /// Reads to end of stream, appending to `buf`; returns how many bytes.
    fn read_to_end<'a>(&'a mut self, buf: &'a mut Vec<u8>) -> ReadToEnd<'a, Self>
    where
        Self: Unpin,
    {
        ReadToEnd {
            reader: self,
            state: ToEnd::new(buf),
            buf,
            _pin: PhantomPinned,
        }
    }

    /// Reads to end of stream, appending to `dst`; `InvalidData` (and `dst`
    /// unchanged) if the bytes are not UTF-8.
    fn read_to_string<'a>(&'a mut self, dst: &'a mut String) -> ReadToString<'a, Self>
    where
        Self: Unpin,
    {
        let keep = dst.len();
        let buf = std::mem::take(dst).into_bytes();
        ReadToString {
            reader: self,
            output: dst,
            state: ToEnd::new(&buf),
            buf,
            keep,
            _pin: PhantomPinned,
        }
    }

    /// A reader that ends after `limit` bytes.
    fn take(self, limit: u64) -> Take<Self>
    where
        Self: Sized,
    {
        take(self, limit)
    }
}

impl<R: AsyncRead + ?Sized> AsyncReadExt for R {}
