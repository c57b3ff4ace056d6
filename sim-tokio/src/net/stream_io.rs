//! The I/O of stream sockets (`TcpStream`, `UnixStream`): both are
//! endpoints of `sim-net`'s connection engine, so readiness, `try_*`,
//! `peek`, `AsyncRead` and `AsyncWrite` are written once, here, and added
//! to each type by `stream_io!`.

/// Adds the stream I/O methods and `AsyncRead`/`AsyncWrite` to `$stream`,
/// which has a field `id: SocketId`.
macro_rules! stream_io {
    ($stream:ident) => {
        impl $stream {
            /// Polls for data to peek at, without taking it.
            pub fn poll_peek(
                &self,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<usize>> {
                ready!(crate::sync::budget(cx));
                let dst = buf.initialize_unfilled();
                let n =
                    ready!(with_socket(self.id, |net| net.tcp_poll_read(self.id, cx, dst, true)))?;
                buf.advance(n);
                Poll::Ready(Ok(n))
            }

            pub(crate) fn poll_ready_interest(
                &self,
                interest: Interest,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<Ready>> {
                with_socket(self.id, |net| {
                    let mut ready = Ready::EMPTY;
                    if interest.is_readable() && net.tcp_read_ready(self.id) {
                        ready |= Ready::READABLE;
                    }
                    if interest.is_writable() && net.tcp_write_ready(self.id) {
                        ready |= Ready::WRITABLE;
                    }
                    // The hang-ups come with the interest they close, as
                    // tokio reports them.
                    if interest.is_readable() && net.tcp_read_closed(self.id) {
                        ready |= Ready::READ_CLOSED;
                    }
                    if interest.is_writable() && net.tcp_write_closed(self.id) {
                        ready |= Ready::WRITE_CLOSED;
                    }
                    if !ready.is_empty() {
                        return Poll::Ready(Ok(ready));
                    }
                    if interest.is_readable() {
                        net.tcp_register_read(self.id, cx.waker());
                    }
                    if interest.is_writable() {
                        net.tcp_register_write(self.id, cx.waker());
                    }
                    Poll::Pending
                })
            }

            /// Waits for any of `interest`.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
                std::future::poll_fn(|cx| self.poll_ready_interest(interest, cx)).await
            }

            /// Waits until a read would not wait.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn readable(&self) -> io::Result<()> {
                self.ready(Interest::READABLE).await.map(drop)
            }

            /// Polls for read readiness.
            pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_ready_interest(Interest::READABLE, cx)
                    .map_ok(drop)
            }

            /// Reads what is there now; `WouldBlock` if nothing is.
            ///
            /// # Errors
            /// `WouldBlock`, `ConnectionReset`, or `NotConnected`.
            pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
                let mut cx = Context::from_waker(Waker::noop());
                match with_socket(self.id, |net| {
                    net.tcp_poll_read(self.id, &mut cx, buf, false)
                }) {
                    Poll::Ready(result) => result,
                    Poll::Pending => Err(would_block()),
                }
            }

            /// As [`Self::try_read`], into several buffers.
            ///
            /// # Errors
            /// As [`Self::try_read`].
            pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
                let total: usize = bufs.iter().map(|b| b.len()).sum();
                let mut tmp = vec![0u8; total];
                let n = self.try_read(&mut tmp)?;
                let mut copied = 0;
                for buf in bufs.iter_mut() {
                    if copied == n {
                        break;
                    }
                    let take = buf.len().min(n - copied);
                    buf[..take].copy_from_slice(&tmp[copied..copied + take]);
                    copied += take;
                }
                Ok(n)
            }

            /// As [`Self::try_read`], into a `BufMut`.
            ///
            /// # Errors
            /// As [`Self::try_read`].
            pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
                let mut tmp = vec![0u8; buf.remaining_mut().min(64 * 1024)];
                let n = self.try_read(&mut tmp)?;
                buf.put_slice(&tmp[..n]);
                Ok(n)
            }

            /// Waits until a write would not wait.
            ///
            /// # Errors
            /// Never in a simulation.
            pub async fn writable(&self) -> io::Result<()> {
                self.ready(Interest::WRITABLE).await.map(drop)
            }

            /// Polls for write readiness.
            pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_ready_interest(Interest::WRITABLE, cx)
                    .map_ok(drop)
            }

            /// Writes what the window takes now; `WouldBlock` if it takes nothing.
            ///
            /// # Errors
            /// `WouldBlock`, `BrokenPipe`, or `NotConnected`.
            pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
                let mut cx = Context::from_waker(Waker::noop());
                match with_socket(self.id, |net| net.tcp_poll_write(self.id, &mut cx, buf)) {
                    Poll::Ready(result) => result,
                    Poll::Pending => Err(would_block()),
                }
            }

            /// As [`Self::try_write`], from several buffers.
            ///
            /// # Errors
            /// As [`Self::try_write`].
            pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
                let joined: Vec<u8> = bufs.iter().flat_map(|b| b.iter().copied()).collect();
                self.try_write(&joined)
            }

            /// Runs `f` if `interest` is ready now.
            ///
            /// # Errors
            /// `WouldBlock` when not ready; otherwise `f`'s result.
            pub fn try_io<R>(
                &self,
                interest: Interest,
                f: impl FnOnce() -> io::Result<R>,
            ) -> io::Result<R> {
                crate::net::readiness::try_io(
                    |cx| self.poll_ready_interest(interest, cx),
                    f,
                    || {
                        with_socket(self.id, |net| {
                            net.tcp_clear_ready(
                                self.id,
                                interest.is_readable(),
                                interest.is_writable(),
                            )
                        })
                    },
                )
            }

            /// Runs `f` each time `interest` is ready, until it does not block.
            ///
            /// # Errors
            /// `f`'s error other than `WouldBlock`.
            pub async fn async_io<R>(
                &self,
                interest: Interest,
                f: impl FnMut() -> io::Result<R>,
            ) -> io::Result<R> {
                crate::net::readiness::async_io(|| self.ready(interest), f).await
            }

            /// Waits for data and copies it without taking it.
            ///
            /// # Errors
            /// As a read.
            pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
                std::future::poll_fn(|cx| {
                    ready!(crate::sync::budget(cx));
                    with_socket(self.id, |net| net.tcp_poll_read(self.id, cx, buf, true))
                })
                .await
            }

            #[inline]
            pub(crate) fn poll_read_priv(
                &self,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                ready!(crate::sync::budget(cx));
                let dst = buf.initialize_unfilled();
                let n =
                    ready!(with_socket(self.id, |net| net.tcp_poll_read(self.id, cx, dst, false)))?;
                buf.advance(n);
                Poll::Ready(Ok(()))
            }

            #[inline]
            pub(crate) fn poll_write_priv(
                &self,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                ready!(crate::sync::budget(cx));
                with_socket(self.id, |net| net.tcp_poll_write(self.id, cx, buf))
            }

            pub(crate) fn shutdown_std(&self) -> io::Result<()> {
                with_socket(self.id, |net| net.tcp_shutdown_write(self.id))
            }
        }

        impl AsyncRead for $stream {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut ReadBuf<'_>,
            ) -> Poll<io::Result<()>> {
                self.poll_read_priv(cx, buf)
            }
        }

        impl AsyncWrite for $stream {
            fn poll_write(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.poll_write_priv(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                // Nothing is buffered: every write is already on its way.
                Poll::Ready(Ok(()))
            }

            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(self.shutdown_std())
            }
        }
    };
}

pub(crate) use stream_io;
