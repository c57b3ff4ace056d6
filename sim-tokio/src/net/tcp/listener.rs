use super::stream::escape;
use super::TcpStream;
use crate::net::addr::{each_addr, ToSocketAddrs};
use crate::net::fd::Placeholder;
use sim_net::{with_net, with_socket, SocketId};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{ready, Context, Poll};

/// A TCP listener on a simulated host.
///
/// Connections complete into its backlog before `accept` is called, as the
/// kernel completes them.
pub struct TcpListener {
    id: SocketId,
    ttl: AtomicU32,
    fd: Placeholder,
}

impl TcpListener {
    pub(crate) fn from_id(id: SocketId) -> TcpListener {
        TcpListener {
            id,
            ttl: AtomicU32::new(64),
            fd: Placeholder::default(),
        }
    }

    /// Binds to the first address that works. Port 0 picks the host's next
    /// ephemeral port (deterministically).
    ///
    /// # Errors
    /// `AddrInUse` for a taken port; `AddrNotAvailable` for an address that
    /// is not the host's.
    pub async fn bind<A: ToSocketAddrs>(addr: A) -> io::Result<TcpListener> {
        each_addr(addr, |addr| async move {
            with_net(|net| net.tcp_listen(addr, sim_net::tcp::BACKLOG_DEFAULT))
                .map(TcpListener::from_id)
        })
        .await
    }

    /// Waits for the next connection.
    ///
    /// # Errors
    /// Never in a simulation.
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        std::future::poll_fn(|cx| self.poll_accept(cx)).await
    }

    /// Polls for the next connection.
    pub fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        ready!(crate::sync::budget(cx));
        let (id, peer) = ready!(with_socket(self.id, |net| net.tcp_poll_accept(self.id, cx)))?;
        Poll::Ready(Ok((TcpStream::from_id(id), peer)))
    }

    /// Takes a `std::net::TcpListener` made in the simulation (or a real
    /// one made before any runtime, which joins the simulation at its
    /// address). It should be in non-blocking mode, as tokio requires.
    ///
    /// # Errors
    /// For a socket that is not listening.
    ///
    /// # Panics
    /// Outside a runtime with I/O enabled; in a debug build, for a
    /// listener in blocking mode, as tokio's debug builds do.
    #[track_caller]
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        crate::util::require_io();
        let fd = listener.as_raw_fd();
        if !sim_net::std_net::is_sim(fd) && !sim_net::std_net::adopt_real_listener(fd) {
            let addr = listener
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            return Err(escape(&format!(
                "TcpListener::from_std on a real listener at {addr}"
            )));
        }
        match crate::net::fd::take_std(listener) {
            Some(sim_net::std_net::Phase::Listening(id)) => Ok(TcpListener::from_id(id)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "TcpListener::from_std: the socket is not listening",
            )),
        }
    }

    /// The listener as a `std::net::TcpListener` of the simulation (in
    /// non-blocking mode, as tokio's is): its blocking calls wait in
    /// virtual time.
    ///
    /// # Errors
    /// With no descriptor left.
    pub fn into_std(self) -> io::Result<std::net::TcpListener> {
        let std = crate::net::fd::give_std(sim_net::std_net::Phase::Listening(self.id))?;
        // The socket lives on under the descriptor: this handle must not
        // close it.
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(std::mem::take(&mut this.fd));
        Ok(std)
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the listener is gone (its host crashed).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        with_socket(self.id, |net| net.tcp_local_addr(self.id))
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// Never.
    pub fn ttl(&self) -> io::Result<u32> {
        Ok(self.ttl.load(Ordering::Relaxed))
    }

    /// Sets `IP_TTL` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        self.ttl.store(ttl, Ordering::Relaxed);
        Ok(())
    }
}

impl TryFrom<std::net::TcpListener> for TcpListener {
    type Error = io::Error;

    fn try_from(stream: std::net::TcpListener) -> Result<Self, Self::Error> {
        Self::from_std(stream)
    }
}

impl Drop for TcpListener {
    fn drop(&mut self) {
        let id = self.id;
        sim_net::release_socket(id, |net| net.tcp_close(id));
    }
}

impl fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("TcpListener");
        if let Some(Ok(local)) =
            sim_net::try_with_socket(self.id, |net| net.tcp_local_addr(self.id))
        {
            d.field("local", &local);
        }
        d.finish()
    }
}

impl AsRawFd for TcpListener {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(true)
    }
}

impl AsFd for TcpListener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the listener.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}
