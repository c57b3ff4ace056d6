//! Real listeners and the simulation: a `std::net::TcpListener` bound
//! before any runtime joins the simulation when the simulation first
//! touches it (adopted at a simulated port, which a connect to the real
//! port goes to), and the ports simulations listen on, with which a real
//! connect refused there is explained.

use super::{lock, new_sock, on_net, reserve_fd, table, thread_core, Phase};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Real ports of adopted listeners, by runtime: the simulated port each
/// listens on instead. The kernel picked the real port, so it differs from
/// run to run; the simulated one is the host's next ephemeral port, the
/// same in every replay, and a connect to the real port goes there.
static ALIASES: Mutex<BTreeMap<(u16, u16), u16>> = Mutex::new(BTreeMap::new());

/// The simulated port that a connect to `port` of the current host in
/// runtime `core` goes to, when `port` is an adopted listener's real one.
fn alias(core: u16, port: u16) -> Option<u16> {
    ALIASES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(core, port))
        .copied()
}

/// A real listener `fd` (made before any runtime) joins the calling
/// thread's simulation: the simulated network listens on the host's next
/// ephemeral port (see [`ALIASES`]), and the descriptor's number now names
/// that listener (its kernel socket is closed, so the real port is free
/// again). Its `getsockname` still answers the real address, which the
/// program has already seen.
pub(super) fn adopt(fd: i32, addr: SocketAddr) -> bool {
    let Some(core) = thread_core().filter(|c| !c.is_shut_down()) else {
        return false;
    };
    if table().contains_key(&fd) {
        return true;
    }
    let at = SocketAddr::new(addr.ip(), 0);
    let Ok(Ok(id)) = on_net(core.id(), |net| net.tcp_listen(at, 128)) else {
        return false;
    };
    // The kernel's socket gives way to a `/dev/null` reservation at the
    // same number, atomically (dup3 closes what the number named).
    let Ok(reserve) = reserve_fd() else {
        let _ = on_net(core.id(), |net| net.tcp_close(id));
        return false;
    };
    // SAFETY: both descriptors are this process's; dup3 replaces `fd`.
    let rc = unsafe { libc::syscall(libc::SYS_dup3, reserve, fd, libc::O_CLOEXEC) };
    sim_os::reserved::release_fd(reserve);
    if rc < 0 {
        let _ = on_net(core.id(), |net| net.tcp_close(id));
        return false;
    }
    if let Ok(Ok(local)) = on_net(core.id(), |net| net.tcp_local_addr(id)) {
        ALIASES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((core.id(), addr.port()), local.port());
    }
    let sock = new_sock(core.id(), Phase::Listening(id), addr.is_ipv6(), false);
    lock(&sock).shown = Some(addr);
    table().insert(fd, sock);
    sim_os::sockets::count_sim_fd(true);
    true
}

/// The port a simulated connect to `port` of the current host goes to: a
/// real listener of this process on that port (made before any runtime)
/// joins the simulation first, and the connect goes to the simulated port
/// it listens on.
pub(crate) fn connect_port(core: u16, port: u16) -> u16 {
    if let Some(aliased) = alias(core, port) {
        return aliased;
    }
    if let Some(fd) = sim_os::real_sockets::listener_on(port) {
        if let Some(addr) = sim_os::real_sockets::listener_addr(fd) {
            adopt(fd, addr);
        }
    }
    alias(core, port).unwrap_or(port)
}

/// Ports the simulations of this process listen on (with how many
/// listeners): a real connect refused on such a port is explained (see
/// `SocketHooks::simulation_listens`).
static LISTENING: Mutex<BTreeMap<u16, u32>> = Mutex::new(BTreeMap::new());

/// Counts a simulated TCP listener on `port` opened (`true`) or closed.
pub(crate) fn note_listening(port: u16, open: bool) {
    let mut ports = LISTENING.lock().unwrap_or_else(|e| e.into_inner());
    let count = ports.entry(port).or_insert(0);
    if open {
        *count += 1;
    } else {
        *count = count.saturating_sub(1);
        if *count == 0 {
            ports.remove(&port);
        }
    }
}

/// Whether a simulation of this process listens on TCP `port`.
pub(super) fn simulation_listens(port: u16) -> bool {
    LISTENING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&port)
}

/// A real listener `fd` (made outside any simulation) joins the calling
/// thread's simulation, for `tokio::net::TcpListener::from_std`: true
/// when `fd` is now a simulated listener.
pub fn adopt_real_listener(fd: i32) -> bool {
    sim_os::real_sockets::listener_addr(fd).is_some_and(|addr| adopt(fd, addr))
}

/// Real ports of adopted UDP sockets, by runtime: the simulated port each
/// is bound to instead (as [`ALIASES`] for listeners).
static UDP_ALIASES: Mutex<BTreeMap<(u16, u16), u16>> = Mutex::new(BTreeMap::new());

/// Whether [`UDP_ALIASES`] ever held an alias: every datagram's send asks
/// for one, and almost no run adopts a real socket, so the lock is taken
/// only once one did (aliases are never removed).
static ANY_UDP_ALIAS: AtomicBool = AtomicBool::new(false);

/// The simulated port a datagram to `port` of the current host goes to,
/// when `port` is an adopted UDP socket's real one.
pub(crate) fn udp_alias(port: u16) -> Option<u16> {
    if !ANY_UDP_ALIAS.load(Ordering::Acquire) {
        return None;
    }
    let core = crate::net::with_core(|core| core.id());
    UDP_ALIASES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(core, port))
        .copied()
}

/// A real, bound UDP socket `fd` (made before any runtime) joins the
/// calling thread's simulation, for `tokio::net::UdpSocket::from_std`: it
/// is bound to the host's next ephemeral port, where datagrams to the real
/// port go (the kernel picked that port, so it differs from run to run),
/// and its `local_addr` still answers the real address. True when `fd` is
/// now simulated.
pub fn adopt_real_datagram(fd: i32) -> bool {
    let Some(core) = thread_core().filter(|c| !c.is_shut_down()) else {
        return false;
    };
    if table().contains_key(&fd) {
        return true;
    }
    let Some(addr) = sim_os::real_sockets::datagram_addr(fd) else {
        return false;
    };
    let (nonblocking, kept) = real_state(fd);
    let at = SocketAddr::new(addr.ip(), 0);
    let Ok(Ok(id)) = on_net(core.id(), |net| net.udp_bind(at)) else {
        return false;
    };
    let close = || {
        let _ = on_net(core.id(), |net| net.udp_close(id));
    };
    // The kernel's socket gives way to a `/dev/null` reservation at the
    // same number, atomically (dup3 closes what the number named).
    let Ok(reserve) = reserve_fd() else {
        close();
        return false;
    };
    // SAFETY: both descriptors are this process's; dup3 replaces `fd`.
    let rc = unsafe { libc::syscall(libc::SYS_dup3, reserve, fd, libc::O_CLOEXEC) };
    sim_os::reserved::release_fd(reserve);
    if rc < 0 {
        close();
        return false;
    }
    if let Ok(Ok(local)) = on_net(core.id(), |net| {
        let _ = net.udp_show(id, addr);
        net.with_udp_local(id)
    }) {
        UDP_ALIASES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert((core.id(), addr.port()), local.port());
        ANY_UDP_ALIAS.store(true, Ordering::Release);
    }
    let sock = new_sock(core.id(), Phase::Datagram(id), addr.is_ipv6(), nonblocking);
    {
        let mut s = lock(&sock);
        s.udp = true;
        s.kept = kept;
    }
    table().insert(fd, sock);
    sim_os::sockets::count_sim_fd(true);
    true
}

/// What a real datagram socket carries over into the simulation: its
/// non-blocking mode, and the options the simulation acts on (the
/// destination address of received datagrams).
fn real_state(fd: i32) -> (bool, BTreeMap<(i32, i32), Vec<u8>>) {
    // SAFETY: a flags query of an open descriptor.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let mut kept = BTreeMap::new();
    for (level, name) in [
        (libc::IPPROTO_IP, libc::IP_PKTINFO),
        (libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO),
    ] {
        let mut value: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt into an int of its full size.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                level,
                name,
                (&mut value as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        if rc == 0 && value != 0 {
            kept.insert((level, name), value.to_ne_bytes().to_vec());
        }
    }
    (flags >= 0 && flags & libc::O_NONBLOCK != 0, kept)
}
