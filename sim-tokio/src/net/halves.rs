//! The read and write halves of a stream socket (`TcpStream`,
//! `UnixStream`): one implementation, made for each by `stream_halves!`.

/// Defines `ReadHalf`, `WriteHalf`, `OwnedReadHalf`, `OwnedWriteHalf`,
/// `ReuniteError`, `split` and `split_owned` for a stream type with an
/// address type, in the module where it is invoked.
macro_rules! stream_halves {
    ($stream:ident, $addr:ty) => {
        use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
        use bytes_dep::BufMut;
        use std::error::Error;
        use std::fmt;
        use std::io;
        use std::pin::Pin;
        use std::sync::Arc;
        use std::task::{Context, Poll};

        /// The read half of `split`.
        #[derive(Debug)]
        pub struct ReadHalf<'a>(&'a $stream);

        /// The write half of `split`. Shutting it down sends a FIN.
        #[derive(Debug)]
        pub struct WriteHalf<'a>(&'a $stream);

        pub(crate) fn split(stream: &mut $stream) -> (ReadHalf<'_>, WriteHalf<'_>) {
            (ReadHalf(&*stream), WriteHalf(&*stream))
        }

        impl ReadHalf<'_> {
            /// As `poll_peek`.
            pub fn poll_peek(
                &mut self,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<usize>> {
                self.0.poll_peek(cx, buf)
            }

            /// As `peek`.
            ///
            /// # Errors
            /// As a read.
            pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.peek(buf).await
            }

            /// As `ready`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                self.0.ready(interest).await
            }

            /// As `readable`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn readable(&self) -> io::Result<()> {
                self.0.readable().await
            }

            /// As `try_read`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.try_read(buf)
            }

            /// As `try_read_vectored`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
                self.0.try_read_vectored(bufs)
            }

            /// As `try_read_buf`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                self.0.try_read_buf(buf)
            }

            /// The peer's address.
            ///
            /// # Errors
            /// When not connected.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.0.peer_addr()
            }

            /// The local address.
            ///
            /// # Errors
            /// When the socket is gone.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.0.local_addr()
            }
        }

        impl WriteHalf<'_> {
            /// As `ready`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                self.0.ready(interest).await
            }

            /// As `writable`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn writable(&self) -> io::Result<()> {
                self.0.writable().await
            }

            /// As `try_write`.
            ///
            /// # Errors
            /// As `try_write`.
            pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                self.0.try_write(buf)
            }

            /// As `try_write_vectored`.
            ///
            /// # Errors
            /// As `try_write`.
            pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
                self.0.try_write_vectored(bufs)
            }

            /// The peer's address.
            ///
            /// # Errors
            /// When not connected.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.0.peer_addr()
            }

            /// The local address.
            ///
            /// # Errors
            /// When the socket is gone.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.0.local_addr()
            }
        }

        impl AsyncRead for ReadHalf<'_> {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.0.poll_read_priv(cx, buf)
            }
        }

        impl AsyncWrite for WriteHalf<'_> {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.0.poll_write_priv(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.0.shutdown_std())
            }
        }

        impl AsRef<$stream> for ReadHalf<'_> {
            fn as_ref(&self) -> &$stream {
                self.0
            }
        }

        impl AsRef<$stream> for WriteHalf<'_> {
            fn as_ref(&self) -> &$stream {
                self.0
            }
        }

        /// The owned read half of `into_split`.
        #[derive(Debug)]
        pub struct OwnedReadHalf {
            inner: Arc<$stream>,
        }

        /// The owned write half of `into_split`. Dropping it shuts
        /// the write side down (the peer reads end of stream), unless forgotten.
        #[derive(Debug)]
        pub struct OwnedWriteHalf {
            inner: Arc<$stream>,
            shutdown_on_drop: bool,
        }

        /// The halves given to `reunite` were not of the same stream.
        #[derive(Debug)]
        pub struct ReuniteError(pub OwnedReadHalf, pub OwnedWriteHalf);

        impl fmt::Display for ReuniteError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "tried to reunite halves that are not from the same socket"
                )
            }
        }

        impl Error for ReuniteError {}

        pub(crate) fn split_owned(stream: $stream) -> (OwnedReadHalf, OwnedWriteHalf) {
            let arc = Arc::new(stream);
            (
                OwnedReadHalf { inner: arc.clone() },
                OwnedWriteHalf {
                    inner: arc,
                    shutdown_on_drop: true,
                },
            )
        }

        fn reunite(
            read: OwnedReadHalf,
            mut write: OwnedWriteHalf,
        ) -> Result<$stream, ReuniteError> {
            if Arc::ptr_eq(&read.inner, &write.inner) {
                write.shutdown_on_drop = false;
                drop(write);
                Ok(Arc::try_unwrap(read.inner).expect("$stream: try_unwrap failed in reunite"))
            } else {
                Err(ReuniteError(read, write))
            }
        }

        impl OwnedReadHalf {
            /// Joins the halves back into the stream.
            ///
            /// # Errors
            /// When they are not of the same stream.
            pub fn reunite(self, other: OwnedWriteHalf) -> Result<$stream, ReuniteError> {
                reunite(self, other)
            }

            /// As `poll_peek`.
            pub fn poll_peek(
                &mut self,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<usize>> {
                self.inner.poll_peek(cx, buf)
            }

            /// As `peek`.
            ///
            /// # Errors
            /// As a read.
            pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.inner.peek(buf).await
            }

            /// As `ready`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                self.inner.ready(interest).await
            }

            /// As `readable`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn readable(&self) -> io::Result<()> {
                self.inner.readable().await
            }

            /// As `try_read`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                self.inner.try_read(buf)
            }

            /// As `try_read_vectored`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
                self.inner.try_read_vectored(bufs)
            }

            /// As `try_read_buf`.
            ///
            /// # Errors
            /// As `try_read`.
            pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                self.inner.try_read_buf(buf)
            }

            /// The peer's address.
            ///
            /// # Errors
            /// When not connected.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.inner.peer_addr()
            }

            /// The local address.
            ///
            /// # Errors
            /// When the socket is gone.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.inner.local_addr()
            }
        }

        impl AsyncRead for OwnedReadHalf {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.inner.poll_read_priv(cx, buf)
            }
        }

        impl OwnedWriteHalf {
            /// Joins the halves back into the stream.
            ///
            /// # Errors
            /// When they are not of the same stream.
            pub fn reunite(self, other: OwnedReadHalf) -> Result<$stream, ReuniteError> {
                reunite(other, self)
            }

            /// Drops the half without shutting the write side down.
            pub fn forget(mut self) {
                self.shutdown_on_drop = false;
                drop(self);
            }

            /// As `ready`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                self.inner.ready(interest).await
            }

            /// As `writable`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn writable(&self) -> io::Result<()> {
                self.inner.writable().await
            }

            /// As `try_write`.
            ///
            /// # Errors
            /// As `try_write`.
            pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                self.inner.try_write(buf)
            }

            /// As `try_write_vectored`.
            ///
            /// # Errors
            /// As `try_write`.
            pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
                self.inner.try_write_vectored(bufs)
            }

            /// The peer's address.
            ///
            /// # Errors
            /// When not connected.
            pub fn peer_addr(&self) -> io::Result<$addr> {
                self.inner.peer_addr()
            }

            /// The local address.
            ///
            /// # Errors
            /// When the socket is gone.
            pub fn local_addr(&self) -> io::Result<$addr> {
                self.inner.local_addr()
            }
        }

        impl Drop for OwnedWriteHalf {
            fn drop(&mut self) {
                if self.shutdown_on_drop {
                    let id = self.inner.id;
                    sim_net::release_socket(id, |net| net.tcp_shutdown_write(id));
                }
            }
        }

        impl AsyncWrite for OwnedWriteHalf {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.inner.poll_write_priv(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                let result = self.inner.shutdown_std();
                if result.is_ok() {
                    self.get_mut().shutdown_on_drop = false;
                }
                Poll::Ready(result)
            }
        }

        impl AsRef<$stream> for OwnedReadHalf {
            fn as_ref(&self) -> &$stream {
                &self.inner
            }
        }

        impl AsRef<$stream> for OwnedWriteHalf {
            fn as_ref(&self) -> &$stream {
                &self.inner
            }
        }
    };
}

pub(crate) use stream_halves;
