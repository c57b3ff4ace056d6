//! `std::net` on the simulated network: the [`SocketHooks`] that `sim-os`'s
//! interposed socket calls ask (see `sim_os::sockets`).
//!
//! A descriptor maps to a `Sock`: which simulation it belongs to (by
//! runtime id), where it is in its life (fresh, bound, listening,
//! connecting, connected; or a bound datagram socket, `datagram.rs`) and
//! its options. `dup` shares the `Sock`; the
//! socket closes with its last descriptor. A blocking call waits through
//! `wait.rs`, in virtual time.
//!
//! `tokio::net`'s `from_std` takes a simulated descriptor's socket with
//! [`take`], and `into_std` gives a socket a descriptor with [`give`]
//! (`handover.rs`).

mod adopt;
mod datagram;
mod handover;
mod options;
mod unix;
mod wait;

pub(crate) use adopt::udp_alias;
pub use adopt::{adopt_real_datagram, adopt_real_listener};
pub(crate) use adopt::{connect_port, note_listening};
pub use handover::{
    alias, family, forget, give, give_as, is_sim, take, watchable, Taken, Watchable,
};

use crate::net::{try_with_socket_net, Network, SocketId};
use sim_os::reserved::{release_fd, reserve_fd};
use sim_os::sockets::SocketHooks;
use sim_runtime::Core;
use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Where a simulated socket is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Made, maybe bound (`bind` picks the port at once).
    Fresh(Option<SocketAddr>),
    /// `listen`ed.
    Listening(SocketId),
    /// A non-blocking `connect` under way.
    Connecting(SocketId),
    /// A connection (connected or accepted).
    Connected(SocketId),
    /// A datagram socket, bound (by `bind`, or by its first use).
    Datagram(SocketId),
    /// Its connect failed (the errno, for `SO_ERROR` once), or its
    /// simulation ended.
    Failed(i32),
}

/// What a simulated descriptor is, beside its phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// A TCP or UDP socket.
    Inet,
    /// An unnamed Unix stream (a `socketpair` end).
    Unix,
    /// The reading end of an anonymous pipe (`pipe2`): a Unix stream end
    /// that is only read.
    PipeReader,
    /// The writing end of an anonymous pipe: only written.
    PipeWriter,
}

/// Two descriptors for the ends of a new simulated Unix stream pair, of
/// `families`; `None` outside a simulation.
fn stream_pair(families: [Family; 2], nonblocking: bool) -> Option<Result<(i32, i32), i32>> {
    let core = thread_core()?;
    if core.is_shut_down() {
        return None;
    }
    let Ok((a, b)) = on_net(core.id(), |net| net.unix_pair()) else {
        return Some(Err(libc::ENOTCONN));
    };
    let end = |id, family| {
        let sock = new_sock(core.id(), Phase::Connected(id), false, nonblocking);
        lock(&sock).family = family;
        register(sock)
    };
    Some(
        end(a, families[0]).and_then(|fd_a| match end(b, families[1]) {
            Ok(fd_b) => Ok((fd_a, fd_b)),
            Err(e) => {
                let _ = Hooks.close(fd_a);
                Err(e)
            }
        }),
    )
}

/// One simulated socket, shared by its descriptors.
#[derive(Debug)]
pub(crate) struct Sock {
    /// The runtime whose network holds it.
    core: u16,
    phase: Phase,
    ipv6: bool,
    /// A datagram (UDP) socket, not a stream.
    udp: bool,
    /// TCP or UDP, an unnamed Unix stream, or a pipe's end.
    family: Family,
    /// A descriptor that names a socket `tokio::net` owns (its `as_raw_fd`,
    /// see [`alias`]): closing it leaves the socket open.
    borrowed: bool,
    /// A Unix stream socket's bound path, before it listens or connects.
    unix_path: Option<std::path::PathBuf>,
    nonblocking: bool,
    read_shut: bool,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
    /// The address `getsockname` answers, when not the simulated one (an
    /// adopted listener's real address).
    shown: Option<SocketAddr>,
    /// Options kept as set and read back (`SO_REUSEADDR`, `SO_KEEPALIVE`,
    /// ...): the simulated network has no behaviour for them.
    kept: BTreeMap<(i32, i32), Vec<u8>>,
}

type Shared = Arc<Mutex<Sock>>;

/// Simulated socket descriptors of the process. Process-wide: a listener
/// made on the test's thread is accepted on by a simulated thread.
static TABLE: Mutex<BTreeMap<i32, Shared>> = Mutex::new(BTreeMap::new());

fn table() -> MutexGuard<'static, BTreeMap<i32, Shared>> {
    TABLE.lock().unwrap_or_else(|e| e.into_inner())
}

fn lock(sock: &Shared) -> MutexGuard<'_, Sock> {
    sock.lock().unwrap_or_else(|e| e.into_inner())
}

fn get(fd: i32) -> Result<Shared, i32> {
    table().get(&fd).cloned().ok_or(libc::EBADF)
}

/// The errno for an `io::Error` of the simulated network.
pub(crate) fn errno_of(e: &io::Error) -> i32 {
    if let Some(code) = e.raw_os_error() {
        return code;
    }
    use io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused => libc::ECONNREFUSED,
        ConnectionReset => libc::ECONNRESET,
        ConnectionAborted => libc::ECONNABORTED,
        BrokenPipe => libc::EPIPE,
        NotConnected => libc::ENOTCONN,
        AddrInUse => libc::EADDRINUSE,
        AddrNotAvailable => libc::EADDRNOTAVAIL,
        WouldBlock => libc::EAGAIN,
        TimedOut => libc::ETIMEDOUT,
        InvalidInput => libc::EINVAL,
        Unsupported => libc::EOPNOTSUPP,
        _ => libc::EIO,
    }
}

/// Files `sock` under a new descriptor.
fn register(sock: Shared) -> Result<i32, i32> {
    let fd = reserve_fd()?;
    table().insert(fd, sock);
    sim_os::sockets::count_sim_fd(true);
    Ok(fd)
}

/// Drops descriptor `fd`'s entry and its reservation; the socket itself
/// when no other descriptor shares it.
fn unregister(fd: i32) -> Option<Shared> {
    let sock = table().remove(&fd)?;
    sim_os::sockets::count_sim_fd(false);
    release_fd(fd);
    Some(sock)
}

fn new_sock(core: u16, phase: Phase, ipv6: bool, nonblocking: bool) -> Shared {
    Arc::new(Mutex::new(Sock {
        core,
        phase,
        ipv6,
        udp: matches!(phase, Phase::Datagram(_)),
        family: Family::Inet,
        borrowed: false,
        unix_path: None,
        nonblocking,
        read_shut: false,
        read_timeout: None,
        write_timeout: None,
        shown: None,
        kept: BTreeMap::new(),
    }))
}

/// The runtime of the calling thread's simulation: the current one, a
/// simulated thread's, or the newest alive on the thread.
fn thread_core() -> Option<Rc<Core>> {
    sim_runtime::context::thread_core()
}

/// Runs `f` on the network of `core_id`, which must be the calling
/// thread's simulation (a socket of an ended or another thread's
/// simulation fails with `ENOTCONN`).
fn on_net<R>(core_id: u16, f: impl FnOnce(&Rc<Network>) -> R) -> Result<R, i32> {
    let core = thread_core().filter(|c| c.id() == core_id);
    let core = core
        .or_else(|| sim_runtime::context::lookup(core_id))
        .filter(|c| !c.is_shut_down())
        .ok_or(libc::ENOTCONN)?;
    let _enter = (sim_runtime::context::current_id() != Some(core_id))
        .then(|| sim_runtime::context::Enter::new(core.clone()));
    try_with_socket_net(f).ok_or(libc::ENOTCONN)
}

/// Polls `op` on the network of `core_id` once, or (blocking) until it is
/// ready or `timeout` of virtual time passed (`EAGAIN`).
fn drive<R>(
    core_id: u16,
    blocking: bool,
    timeout: Option<Duration>,
    mut op: impl FnMut(&Rc<Network>, &mut Context<'_>) -> Poll<Result<R, i32>>,
) -> Result<R, i32> {
    if !blocking {
        let mut cx = Context::from_waker(Waker::noop());
        let done = on_net(core_id, |net| op(net, &mut cx))?;
        wait::turn_point();
        return match done {
            Poll::Ready(r) => r,
            Poll::Pending => Err(libc::EAGAIN),
        };
    }
    let core = thread_core()
        .filter(|c| c.id() == core_id)
        .or_else(|| sim_runtime::context::lookup(core_id))
        .ok_or(libc::ENOTCONN)?;
    let future = std::future::poll_fn(|cx| match on_net(core_id, |net| op(net, cx)) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(r)) => Poll::Ready(r),
        Err(e) => Poll::Ready(Err(e)),
    });
    wait::wait(&core, future, timeout)
}

/// A descriptor's socket and what a call needs of it, read under its lock
/// (never held while a call waits).
struct View {
    core: u16,
    phase: Phase,
    ipv6: bool,
    udp: bool,
    family: Family,
    nonblocking: bool,
    read_shut: bool,
    read_timeout: Option<Duration>,
    write_timeout: Option<Duration>,
}

fn view(fd: i32) -> Result<(Shared, View), i32> {
    let sock = get(fd)?;
    let v = {
        let s = lock(&sock);
        View {
            core: s.core,
            phase: s.phase,
            ipv6: s.ipv6,
            udp: s.udp,
            family: s.family,
            nonblocking: s.nonblocking,
            read_shut: s.read_shut,
            read_timeout: s.read_timeout,
            write_timeout: s.write_timeout,
        }
    };
    Ok((sock, v))
}

/// The connection of a socket, after finishing a connect under way.
fn connection(fd: i32, sock: &Shared, v: &View) -> Result<SocketId, i32> {
    match v.phase {
        Phase::Connected(id) => Ok(id),
        Phase::Connecting(id) => {
            let done = drive(v.core, !v.nonblocking, None, |net, cx| {
                net.tcp_poll_connect(id, cx)
                    .map(|r| r.map_err(|e| errno_of(&e)))
            });
            let mut s = lock(sock);
            match done {
                Ok(()) => {
                    s.phase = Phase::Connected(id);
                    Ok(id)
                }
                Err(libc::EAGAIN) => Err(libc::EAGAIN),
                Err(e) => {
                    s.phase = Phase::Failed(e);
                    let _ = fd;
                    Err(e)
                }
            }
        }
        Phase::Failed(_) | Phase::Fresh(_) | Phase::Listening(_) | Phase::Datagram(_) => {
            Err(libc::ENOTCONN)
        }
    }
}

/// The hooks `sim-os` asks.
struct Hooks;

impl SocketHooks for Hooks {
    fn socket(&self, domain: i32, kind: i32) -> Option<Result<i32, i32>> {
        let flags = kind;
        let kind = kind & !(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC);
        let udp = kind == libc::SOCK_DGRAM;
        if domain == libc::AF_UNIX && kind == libc::SOCK_STREAM {
            return unix::socket(flags);
        }
        if !(udp || kind == libc::SOCK_STREAM)
            || (domain != libc::AF_INET && domain != libc::AF_INET6)
        {
            return None;
        }
        let core = thread_core()?;
        if core.is_shut_down() {
            return None;
        }
        let nonblocking = kind & libc::SOCK_NONBLOCK != 0;
        let sock = new_sock(
            core.id(),
            Phase::Fresh(None),
            domain == libc::AF_INET6,
            nonblocking,
        );
        lock(&sock).udp = udp;
        Some(register(sock))
    }

    fn socketpair(&self, domain: i32, kind: i32) -> Option<Result<(i32, i32), i32>> {
        let nonblocking = kind & libc::SOCK_NONBLOCK != 0;
        let kind = kind & !(libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC);
        if domain != libc::AF_UNIX || kind != libc::SOCK_STREAM {
            return None;
        }
        stream_pair([Family::Unix, Family::Unix], nonblocking)
    }

    fn pipe(&self, flags: i32) -> Option<Result<(i32, i32), i32>> {
        let nonblocking = flags & libc::O_NONBLOCK != 0;
        stream_pair([Family::PipeReader, Family::PipeWriter], nonblocking)
    }

    fn is_sim(&self, fd: i32) -> bool {
        table().contains_key(&fd)
    }

    fn unix_name(&self, fd: i32, peer: bool) -> Result<Vec<u8>, i32> {
        use std::os::unix::ffi::OsStrExt;
        let (sock, v) = view(fd)?;
        let id = match v.phase {
            Phase::Connected(id) => id,
            Phase::Listening(id) if !peer => id,
            Phase::Fresh(_) if !peer => {
                let bound = lock(&sock).unix_path.clone();
                return Ok(bound.map_or_else(Vec::new, |p| p.as_os_str().as_bytes().to_vec()));
            }
            _ if peer => return Err(libc::ENOTCONN),
            _ => return Ok(Vec::new()),
        };
        let path = on_net(v.core, |net| {
            if peer {
                net.unix_peer_path(id)
            } else {
                net.unix_local_path(id)
            }
        })?
        .map_err(|e| errno_of(&e))?;
        Ok(path.map_or_else(Vec::new, |p| p.as_os_str().as_bytes().to_vec()))
    }

    fn family(&self, fd: i32) -> Option<i32> {
        let family = lock(&get(fd).ok()?).family;
        Some(match family {
            Family::Inet => return None,
            Family::Unix => libc::AF_UNIX,
            Family::PipeReader | Family::PipeWriter => 0,
        })
    }

    fn bind(&self, fd: i32, addr: SocketAddr) -> Result<(), i32> {
        let (sock, v) = view(fd)?;
        if v.udp {
            return datagram::bind(&sock, &v, addr).map(drop);
        }
        if v.phase != Phase::Fresh(None) {
            return Err(libc::EINVAL);
        }
        let port = match addr.port() {
            0 => on_net(v.core, |net| net.tcp_pick_port(addr.ip()))?.map_err(|e| errno_of(&e))?,
            port => port,
        };
        lock(&sock).phase = Phase::Fresh(Some(SocketAddr::new(addr.ip(), port)));
        Ok(())
    }

    fn bind_unix(&self, fd: i32, path: &[u8]) -> Result<(), i32> {
        unix::bind(fd, path)
    }

    fn connect_unix(&self, fd: i32, path: &[u8]) -> Result<(), i32> {
        unix::connect(fd, path)
    }

    fn listen(&self, fd: i32, backlog: i32) -> Result<(), i32> {
        let (sock, v) = view(fd)?;
        if v.family == Family::Unix {
            return unix::listen(&sock, &v, backlog);
        }
        if v.udp {
            return Err(libc::EOPNOTSUPP);
        }
        let addr = match v.phase {
            Phase::Listening(_) => return Ok(()),
            Phase::Fresh(Some(addr)) => addr,
            Phase::Fresh(None) => unspecified(v.ipv6),
            _ => return Err(libc::EINVAL),
        };
        let backlog = usize::try_from(backlog).unwrap_or(0).clamp(1, 4096);
        let id = on_net(v.core, |net| net.tcp_listen(addr, backlog))?.map_err(|e| errno_of(&e))?;
        lock(&sock).phase = Phase::Listening(id);
        Ok(())
    }

    fn accept(&self, fd: i32, flags: i32) -> Result<(i32, SocketAddr), i32> {
        let (sock, v) = view(fd)?;
        let Phase::Listening(id) = v.phase else {
            return Err(if v.udp {
                libc::EOPNOTSUPP
            } else {
                libc::EINVAL
            });
        };
        let (conn, peer) = drive(v.core, !v.nonblocking, v.read_timeout, |net, cx| {
            net.tcp_poll_accept(id, cx)
                .map(|r| r.map_err(|e| errno_of(&e)))
        })?;
        let ipv6 = lock(&sock).ipv6;
        let nonblocking = flags & libc::SOCK_NONBLOCK != 0;
        let accepted = new_sock(v.core, Phase::Connected(conn), ipv6, nonblocking);
        lock(&accepted).family = v.family;
        Ok((register(accepted)?, peer))
    }

    fn connect(&self, fd: i32, addr: SocketAddr) -> Result<(), i32> {
        let (sock, v) = view(fd)?;
        if v.udp {
            return datagram::connect(&sock, &v, addr);
        }
        let bind = match v.phase {
            Phase::Fresh(bind) => bind,
            Phase::Connecting(_) => return Err(libc::EALREADY),
            Phase::Connected(_) => return Err(libc::EISCONN),
            Phase::Listening(_) | Phase::Failed(_) | Phase::Datagram(_) => {
                return Err(libc::EINVAL)
            }
        };
        let id = on_net(v.core, |net| net.tcp_connect(addr, bind))?.map_err(|e| errno_of(&e))?;
        lock(&sock).phase = Phase::Connecting(id);
        if v.nonblocking {
            return Err(libc::EINPROGRESS);
        }
        let (_, v) = view(fd)?;
        connection(fd, &sock, &v).map(drop)
    }

    fn recv(
        &self,
        fd: i32,
        buf: &mut [u8],
        flags: i32,
    ) -> Result<(usize, Option<SocketAddr>), i32> {
        let (sock, v) = view(fd)?;
        if flags & libc::MSG_OOB != 0 {
            // The simulated network has no urgent data.
            return Err(libc::EOPNOTSUPP);
        }
        if v.family == Family::PipeWriter {
            // A pipe's writing end is not open for reading.
            return Err(libc::EBADF);
        }
        if v.udp {
            return datagram::recv(&sock, &v, buf, flags);
        }
        let id = connection(fd, &sock, &v)?;
        if v.read_shut {
            return Ok((0, None));
        }
        let blocking = !v.nonblocking && flags & libc::MSG_DONTWAIT == 0;
        let peek = flags & libc::MSG_PEEK != 0;
        drive(v.core, blocking, v.read_timeout, |net, cx| {
            net.tcp_poll_read(id, cx, buf, peek)
                .map(|r| r.map_err(|e| errno_of(&e)))
        })
        .map(|n| (n, None))
    }

    fn send(&self, fd: i32, buf: &[u8], flags: i32, to: Option<SocketAddr>) -> Result<usize, i32> {
        let (sock, v) = view(fd)?;
        if flags & libc::MSG_OOB != 0 {
            // The simulated network has no urgent data.
            return Err(libc::EOPNOTSUPP);
        }
        if v.family == Family::PipeReader {
            // A pipe's reading end is not open for writing.
            return Err(libc::EBADF);
        }
        if v.udp {
            return datagram::send(&sock, &v, buf, to);
        }
        if to.is_some() {
            // An address on a connection: Linux says it is connected.
            return Err(libc::EISCONN);
        }
        let id = connection(fd, &sock, &v)?;
        let blocking = !v.nonblocking && flags & libc::MSG_DONTWAIT == 0;
        drive(v.core, blocking, v.write_timeout, |net, cx| {
            net.tcp_poll_write(id, cx, buf)
                .map(|r| r.map_err(|e| errno_of(&e)))
        })
    }

    fn local_addr(&self, fd: i32) -> Result<SocketAddr, i32> {
        let (sock, v) = view(fd)?;
        if let Some(shown) = lock(&sock).shown {
            return Ok(shown);
        }
        match v.phase {
            Phase::Fresh(bound) => Ok(bound.unwrap_or_else(|| unspecified(v.ipv6))),
            Phase::Listening(id) | Phase::Connecting(id) | Phase::Connected(id) => {
                on_net(v.core, |net| net.tcp_local_addr(id))?.map_err(|e| errno_of(&e))
            }
            Phase::Datagram(id) => {
                on_net(v.core, |net| net.udp_local_addr(id))?.map_err(|e| errno_of(&e))
            }
            Phase::Failed(_) => Err(libc::EINVAL),
        }
    }

    fn peer_addr(&self, fd: i32) -> Result<SocketAddr, i32> {
        let (_, v) = view(fd)?;
        match v.phase {
            Phase::Connected(id) => {
                on_net(v.core, |net| net.tcp_peer_addr(id))?.map_err(|e| errno_of(&e))
            }
            Phase::Datagram(id) => {
                on_net(v.core, |net| net.udp_peer_addr(id))?.map_err(|_| libc::ENOTCONN)
            }
            _ => Err(libc::ENOTCONN),
        }
    }

    fn shutdown(&self, fd: i32, how: i32) -> Result<(), i32> {
        let (sock, v) = view(fd)?;
        let Phase::Connected(id) = v.phase else {
            return Err(libc::ENOTCONN);
        };
        if how == libc::SHUT_RD || how == libc::SHUT_RDWR {
            lock(&sock).read_shut = true;
        }
        if how == libc::SHUT_WR || how == libc::SHUT_RDWR {
            on_net(v.core, |net| net.tcp_shutdown_write(id))?.map_err(|e| errno_of(&e))?;
        }
        Ok(())
    }

    fn set_option(&self, fd: i32, level: i32, name: i32, value: &[u8]) -> Result<(), i32> {
        options::set(&get(fd)?, level, name, value)
    }

    fn option(&self, fd: i32, level: i32, name: i32) -> Result<Vec<u8>, i32> {
        options::get(&get(fd)?, level, name)
    }

    fn set_nonblocking(&self, fd: i32, on: bool) -> Result<(), i32> {
        lock(&get(fd)?).nonblocking = on;
        Ok(())
    }

    fn nonblocking(&self, fd: i32) -> Result<bool, i32> {
        Ok(lock(&get(fd)?).nonblocking)
    }

    fn readable_bytes(&self, fd: i32) -> Result<usize, i32> {
        let mut buf = vec![0u8; 1 << 16];
        match self.recv(fd, &mut buf, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
            Err(libc::EAGAIN) => Ok(0),
            other => other.map(|(n, _)| n),
        }
    }

    fn poll(&self, fds: &mut [libc::pollfd], timeout_ms: i32) -> Result<usize, i32> {
        wait::poll(fds, timeout_ms)
    }

    fn close(&self, fd: i32) -> Result<(), i32> {
        let sock = unregister(fd).ok_or(libc::EBADF)?;
        // The last descriptor closes the socket (unless `tokio::net` owns
        // it).
        if let Ok(last) = Arc::try_unwrap(sock) {
            let s = last.into_inner().unwrap_or_else(|e| e.into_inner());
            if !s.borrowed {
                close_phase(s.core, s.phase);
            }
        }
        Ok(())
    }

    fn dup(&self, fd: i32) -> Result<i32, i32> {
        register(get(fd)?)
    }

    fn adopt_listener(&self, fd: i32, addr: SocketAddr) -> bool {
        adopt::adopt(fd, addr)
    }

    fn simulation_listens(&self, port: u16) -> bool {
        adopt::simulation_listens(port)
    }
}

/// Closes what a socket holds in its network (nothing for a fresh or
/// failed one, or when its simulation is gone).
fn close_phase(core: u16, phase: Phase) {
    match phase {
        Phase::Listening(id) | Phase::Connecting(id) | Phase::Connected(id) => {
            let _ = on_net(core, |net| net.tcp_close(id));
        }
        Phase::Datagram(id) => {
            let _ = on_net(core, |net| net.udp_close(id));
        }
        Phase::Fresh(_) | Phase::Failed(_) => {}
    }
}

fn unspecified(ipv6: bool) -> SocketAddr {
    if ipv6 {
        SocketAddr::from((std::net::Ipv6Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0))
    }
}

/// Installs the hooks (once per process).
pub fn install() {
    static HOOKS: Hooks = Hooks;
    sim_os::sockets::set_socket_hooks(&HOOKS);
}
