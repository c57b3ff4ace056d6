use super::TcpStream;
use crate::io::{AsyncRead, AsyncWrite, Interest, ReadBuf, Ready};
use bytes_dep::BufMut;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The read half of [`TcpStream::split`].
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// The write half of [`TcpStream::split`]. Shutting it down sends a FIN.
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

pub(crate) fn split(stream: &mut TcpStream) -> (ReadHalf<'_>, WriteHalf<'_>) {
    (ReadHalf(&*stream), WriteHalf(&*stream))
}

impl ReadHalf<'_> {
    /// As [`TcpStream::poll_peek`].
    pub fn poll_peek(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<usize>> {
        self.0.poll_peek(cx, buf)
    }

    /// As [`TcpStream::peek`].
    ///
    /// # Errors
    /// As a read.
    pub async fn peek(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.peek(buf).await
    }

    /// As [`TcpStream::ready`].
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// As [`TcpStream::readable`].
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn readable(&self) -> io::Result<()> {
        self.0.readable().await
    }

    /// As [`TcpStream::try_read`].
    ///
    /// # Errors
    /// As [`TcpStream::try_read`].
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }

    /// As [`TcpStream::try_read_vectored`].
    ///
    /// # Errors
    /// As [`TcpStream::try_read`].
    pub fn try_read_vectored(&self, bufs: &mut [io::IoSliceMut<'_>]) -> io::Result<usize> {
        self.0.try_read_vectored(bufs)
    }

    /// As [`TcpStream::try_read_buf`].
    ///
    /// # Errors
    /// As [`TcpStream::try_read`].
    pub fn try_read_buf<B: BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        self.0.try_read_buf(buf)
    }

    /// The peer's address.
    ///
    /// # Errors
    /// When not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The local address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

impl WriteHalf<'_> {
    /// As [`TcpStream::ready`].
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn ready(&self, interest: Interest) -> io::Result<Ready> {
        self.0.ready(interest).await
    }

    /// As [`TcpStream::writable`].
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn writable(&self) -> io::Result<()> {
        self.0.writable().await
    }

    /// As [`TcpStream::try_write`].
    ///
    /// # Errors
    /// As [`TcpStream::try_write`].
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    /// As [`TcpStream::try_write_vectored`].
    ///
    /// # Errors
    /// As [`TcpStream::try_write`].
    pub fn try_write_vectored(&self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    /// The peer's address.
    ///
    /// # Errors
    /// When not connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.0.peer_addr()
    }

    /// The local address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
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

impl AsRef<TcpStream> for ReadHalf<'_> {
    fn as_ref(&self) -> &TcpStream {
        self.0
    }
}

impl AsRef<TcpStream> for WriteHalf<'_> {
    fn as_ref(&self) -> &TcpStream {
        self.0
    }
}
