use super::{TcpListener, TcpStream};
use crate::net::fd::Placeholder;
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Mutex;
use std::time::Duration;

/// Linux's floor for `SO_SNDBUF` after doubling (`SOCK_MIN_SNDBUF` on x86-64).
const SEND_BUFFER_MIN_BYTES: u32 = 4608;
/// Linux's floor for `SO_RCVBUF` after doubling (`SOCK_MIN_RCVBUF` on x86-64).
const RECV_BUFFER_MIN_BYTES: u32 = 2304;
/// Linux's default `net.core.wmem_max` and `net.core.rmem_max`.
const BUFFER_REQUEST_MAX_BYTES: u32 = 212_992;

/// What Linux stores for a requested buffer size: the request capped at the
/// sysctl maximum, doubled for the kernel's own bookkeeping, never below the
/// floor. Programs read this value back, so the simulation gives it as well.
fn kernel_buffer_bytes(requested: u32, floor_bytes: u32) -> u32 {
    (requested.min(BUFFER_REQUEST_MAX_BYTES) * 2).max(floor_bytes)
}

#[derive(Debug, Clone, Default)]
struct Options {
    v6: bool,
    bound: Option<SocketAddr>,
    keepalive: bool,
    reuseaddr: bool,
    reuseport: bool,
    send_buffer_size: u32,
    recv_buffer_size: u32,
    linger: Option<Duration>,
    nodelay: bool,
    tclass_v6: u32,
    tos_v4: u32,
    device: Option<Vec<u8>>,
}

/// A TCP socket not yet connected or listening: set options, bind, then
/// `connect` or `listen`. Options are recorded; those with an effect in the
/// simulation (`nodelay`, `linger`) carry over to the connection.
pub struct TcpSocket {
    options: Mutex<Options>,
    fd: Placeholder,
}

impl TcpSocket {
    fn new(v6: bool) -> TcpSocket {
        TcpSocket {
            options: Mutex::new(Options {
                v6,
                send_buffer_size: sim_net::tcp::WINDOW_BYTES as u32,
                recv_buffer_size: sim_net::tcp::WINDOW_BYTES as u32,
                ..Options::default()
            }),
            fd: Placeholder::default(),
        }
    }

    fn opts(&self) -> std::sync::MutexGuard<'_, Options> {
        self.options.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new IPv4 socket.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn new_v4() -> io::Result<TcpSocket> {
        Ok(TcpSocket::new(false))
    }

    /// A new IPv6 socket.
    ///
    /// # Errors
    /// Never in a simulation.
    pub fn new_v6() -> io::Result<TcpSocket> {
        Ok(TcpSocket::new(true))
    }

    /// Sets `SO_KEEPALIVE` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_keepalive(&self, keepalive: bool) -> io::Result<()> {
        self.opts().keepalive = keepalive;
        Ok(())
    }

    /// `SO_KEEPALIVE`.
    ///
    /// # Errors
    /// Never.
    pub fn keepalive(&self) -> io::Result<bool> {
        Ok(self.opts().keepalive)
    }

    /// Sets `SO_REUSEADDR` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.opts().reuseaddr = reuseaddr;
        Ok(())
    }

    /// `SO_REUSEADDR`.
    ///
    /// # Errors
    /// Never.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        Ok(self.opts().reuseaddr)
    }

    /// Sets `SO_REUSEPORT` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.opts().reuseport = reuseport;
        Ok(())
    }

    /// `SO_REUSEPORT`.
    ///
    /// # Errors
    /// Never.
    pub fn reuseport(&self) -> io::Result<bool> {
        Ok(self.opts().reuseport)
    }

    /// Sets `SO_SNDBUF` (recorded). As on Linux, the value read back is
    /// doubled (the kernel's bookkeeping) and clamped to the kernel's bounds.
    ///
    /// # Errors
    /// Never.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.opts().send_buffer_size = kernel_buffer_bytes(size, SEND_BUFFER_MIN_BYTES);
        Ok(())
    }

    /// `SO_SNDBUF`.
    ///
    /// # Errors
    /// Never.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        Ok(self.opts().send_buffer_size)
    }

    /// Sets `SO_RCVBUF` (recorded). As on Linux, the value read back is
    /// doubled (the kernel's bookkeeping) and clamped to the kernel's bounds.
    ///
    /// # Errors
    /// Never.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.opts().recv_buffer_size = kernel_buffer_bytes(size, RECV_BUFFER_MIN_BYTES);
        Ok(())
    }

    /// `SO_RCVBUF`.
    ///
    /// # Errors
    /// Never.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        Ok(self.opts().recv_buffer_size)
    }

    /// Sets `SO_LINGER` (recorded). Deprecated in tokio too.
    ///
    /// # Errors
    /// Never.
    #[deprecated = "`SO_LINGER` causes the socket to block the thread on drop"]
    pub fn set_linger(&self, dur: Option<Duration>) -> io::Result<()> {
        self.opts().linger = dur;
        Ok(())
    }

    /// Sets `SO_LINGER` to zero.
    ///
    /// # Errors
    /// Never.
    pub fn set_zero_linger(&self) -> io::Result<()> {
        self.opts().linger = Some(Duration::ZERO);
        Ok(())
    }

    /// `SO_LINGER`.
    ///
    /// # Errors
    /// Never.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        Ok(self.opts().linger)
    }

    /// Sets `TCP_NODELAY`.
    ///
    /// # Errors
    /// Never.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.opts().nodelay = nodelay;
        Ok(())
    }

    /// `TCP_NODELAY`.
    ///
    /// # Errors
    /// Never.
    pub fn nodelay(&self) -> io::Result<bool> {
        Ok(self.opts().nodelay)
    }

    /// `IPV6_TCLASS`.
    ///
    /// # Errors
    /// Never.
    pub fn tclass_v6(&self) -> io::Result<u32> {
        Ok(self.opts().tclass_v6)
    }

    /// Sets `IPV6_TCLASS` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        self.opts().tclass_v6 = tclass;
        Ok(())
    }

    /// `IP_TOS`.
    ///
    /// # Errors
    /// Never.
    pub fn tos_v4(&self) -> io::Result<u32> {
        Ok(self.opts().tos_v4)
    }

    /// `IP_TOS`.
    ///
    /// # Errors
    /// Never.
    #[deprecated = "use `tos_v4()`"]
    pub fn tos(&self) -> io::Result<u32> {
        self.tos_v4()
    }

    /// Sets `IP_TOS` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn set_tos_v4(&self, tos: u32) -> io::Result<()> {
        self.opts().tos_v4 = tos;
        Ok(())
    }

    /// Sets `IP_TOS` (recorded).
    ///
    /// # Errors
    /// Never.
    #[deprecated = "use `set_tos_v4()`"]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        self.set_tos_v4(tos)
    }

    /// `SO_BINDTODEVICE`.
    ///
    /// # Errors
    /// Never.
    pub fn device(&self) -> io::Result<Option<Vec<u8>>> {
        Ok(self.opts().device.clone())
    }

    /// Sets `SO_BINDTODEVICE` (recorded).
    ///
    /// # Errors
    /// Never.
    pub fn bind_device(&self, interface: Option<&[u8]>) -> io::Result<()> {
        self.opts().device = interface.map(<[u8]>::to_vec);
        Ok(())
    }

    /// The bound address.
    ///
    /// # Errors
    /// `InvalidInput` before `bind`.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.opts()
            .bound
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the socket is not bound"))
    }

    /// Pending socket errors: none are kept in a simulation.
    ///
    /// # Errors
    /// Never.
    pub fn take_error(&self) -> io::Result<Option<io::Error>> {
        Ok(None)
    }

    /// Binds to `addr` (taking effect at `connect` or `listen`).
    ///
    /// # Errors
    /// Never here; a taken port fails at `listen`.
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        // Port 0: the port is chosen now, as the OS does, so `local_addr`
        // tells it before `listen` or `connect`.
        let mut addr = addr;
        if addr.port() == 0 {
            addr.set_port(sim_net::with_net(|net| net.tcp_pick_port(addr.ip()))?);
        }
        self.opts().bound = Some(addr);
        Ok(())
    }

    /// Connects, from the bound address if any.
    ///
    /// # Errors
    /// As [`TcpStream::connect`].
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        let options = self.opts().clone();
        let stream = TcpStream::connect_addr(addr, options.bound).await?;
        stream.set_nodelay(options.nodelay)?;
        with_net_linger(&stream, options.linger)?;
        Ok(stream)
    }

    /// Listens on the bound address (or an ephemeral port of the host).
    ///
    /// # Errors
    /// `AddrInUse` for a taken port.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        let options = self.opts().clone();
        let addr = options.bound.unwrap_or_else(|| {
            if options.v6 {
                SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0))
            } else {
                SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0))
            }
        });
        sim_net::with_net(|net| net.tcp_listen(addr, backlog as usize)).map(TcpListener::from_id)
    }

    /// Takes an unconnected real socket (as `socket2` users make one) and
    /// carries on in the simulation: the real descriptor is closed.
    ///
    /// # Panics
    /// When the real socket is already connected: its traffic would be
    /// outside the simulation.
    #[track_caller]
    pub fn from_std_stream(std_stream: std::net::TcpStream) -> TcpSocket {
        if let Ok(peer) = std_stream.peer_addr() {
            panic!(
                "sim: escape refused: TcpSocket::from_std_stream on a real socket already \
                 connected to {peer}. Its traffic would be outside the simulation; connect \
                 through the simulated TcpSocket instead."
            );
        }
        let v6 = std_stream
            .local_addr()
            .map(|a| a.is_ipv6())
            .unwrap_or(false);
        // The options with an effect here carry over, as they would on the
        // real socket (hyper-util's connector sets TCP_NODELAY through
        // socket2 before handing the socket over).
        let nodelay = std_stream.nodelay().unwrap_or(false);
        let linger = real_linger(&std_stream);
        drop(std_stream);
        let socket = TcpSocket::new(v6);
        {
            let mut options = socket.opts();
            options.nodelay = nodelay;
            options.linger = linger;
        }
        socket
    }
}

impl std::os::unix::io::FromRawFd for TcpSocket {
    /// Takes a real, unconnected socket's descriptor and carries on in the
    /// simulation, as [`TcpSocket::from_std_stream`] does.
    ///
    /// # Safety
    /// `fd` must be an open socket owned by the caller.
    unsafe fn from_raw_fd(fd: RawFd) -> TcpSocket {
        TcpSocket::from_std_stream(std::net::TcpStream::from_raw_fd(fd))
    }
}

impl std::os::unix::io::IntoRawFd for TcpSocket {
    /// Hands out the placeholder descriptor: a real socket that was never
    /// bound or connected. The simulated socket is gone.
    fn into_raw_fd(self) -> RawFd {
        let fd = self.fd.raw(true);
        // SAFETY: `dup` of a descriptor we own; the copy goes to the caller.
        unsafe { libc_dep::dup(fd) }
    }
}

impl fmt::Debug for TcpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpSocket")
            .field("bound", &self.opts().bound)
            .finish()
    }
}

impl AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.raw(true)
    }
}

impl AsFd for TcpSocket {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the placeholder lives as long as the socket.
        unsafe { BorrowedFd::borrow_raw(self.as_raw_fd()) }
    }
}

/// `SO_LINGER` of a real socket, read from the kernel.
fn real_linger(stream: &std::net::TcpStream) -> Option<Duration> {
    let mut value = libc_dep::linger {
        l_onoff: 0,
        l_linger: 0,
    };
    let mut len = std::mem::size_of::<libc_dep::linger>() as libc_dep::socklen_t;
    // SAFETY: `value` and `len` describe a writable `linger` of its size.
    let done = unsafe {
        libc_dep::getsockopt(
            stream.as_raw_fd(),
            libc_dep::SOL_SOCKET,
            libc_dep::SO_LINGER,
            (&mut value as *mut libc_dep::linger).cast(),
            &mut len,
        )
    };
    (done == 0 && value.l_onoff != 0).then(|| Duration::from_secs(value.l_linger.max(0) as u64))
}

fn with_net_linger(stream: &TcpStream, linger: Option<Duration>) -> io::Result<()> {
    sim_net::with_socket(stream.id, |net| net.tcp_set_linger(stream.id, linger))
}
