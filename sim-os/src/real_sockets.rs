//! Real sockets beside the simulated network (simulation builds): a
//! `std::net::TcpListener` is the kernel's, and no simulated connection
//! reaches it. The interposed `listen` notes the ports real sockets listen
//! on and by which descriptor, so that the simulation can adopt such a
//! listener when it touches it (see `sockets`), and a connect refused on
//! such a port can say why, instead of a bare "connection refused".

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Ports real sockets of this process listened on, with the descriptor
/// that last did (bounded: the first ones explain a refusal).
static PORTS: Mutex<BTreeMap<u16, i32>> = Mutex::new(BTreeMap::new());

/// How many ports are kept.
#[cfg(simulation)]
const PORTS_MAX: usize = 4096;

/// Whether a real socket of this process listened on `port` (the kernel's
/// network, which the simulation does not reach).
pub fn listened_on(port: u16) -> bool {
    PORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&port)
}

/// The descriptor of a real socket of this process that listens on
/// `port` now (checked: a descriptor noted once may have closed since).
pub fn listener_on(port: u16) -> Option<i32> {
    let fd = *PORTS.lock().unwrap_or_else(|e| e.into_inner()).get(&port)?;
    (listener_addr(fd)?.port() == port).then_some(fd)
}

/// The local address of `fd` when it is a real TCP socket that listens.
pub fn listener_addr(fd: libc::c_int) -> Option<std::net::SocketAddr> {
    if int_option(fd, libc::SO_ACCEPTCONN).unwrap_or(0) == 0 {
        return None;
    }
    local_addr(fd)
}

/// The address of `fd` when it is a real, bound UDP socket.
pub fn datagram_addr(fd: libc::c_int) -> Option<std::net::SocketAddr> {
    if int_option(fd, libc::SO_TYPE) != Some(libc::SOCK_DGRAM) {
        return None;
    }
    local_addr(fd).filter(|a| a.port() != 0)
}

/// An `int` socket option of level `SOL_SOCKET` on a real socket (`None`
/// when `fd` is no socket).
fn int_option(fd: libc::c_int, option: libc::c_int) -> Option<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into an int of its full size.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            option,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    (rc == 0).then_some(value)
}

/// `getsockname` of a real socket, for IPv4 and IPv6.
fn local_addr(fd: libc::c_int) -> Option<std::net::SocketAddr> {
    // SAFETY: getsockname into a zeroed storage of its full size; the
    // storage is read as the family it says it holds.
    unsafe {
        let mut storage: libc::sockaddr_storage = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        if libc::getsockname(
            fd,
            (&mut storage as *mut libc::sockaddr_storage).cast(),
            &mut len,
        ) != 0
        {
            return None;
        }
        match libc::c_int::from(storage.ss_family) {
            libc::AF_INET => {
                let a = &*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>();
                let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
                Some(std::net::SocketAddr::new(
                    ip.into(),
                    u16::from_be(a.sin_port),
                ))
            }
            libc::AF_INET6 => {
                let a = &*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>();
                let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
                Some(std::net::SocketAddr::new(
                    ip.into(),
                    u16::from_be(a.sin6_port),
                ))
            }
            _ => None,
        }
    }
}

/// Notes the port of `fd`, a real socket that now listens.
#[cfg(simulation)]
pub(crate) fn note(fd: libc::c_int) {
    let Some(addr) = local_addr(fd) else {
        return;
    };
    let mut ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
    if ports.len() < PORTS_MAX || ports.contains_key(&addr.port()) {
        ports.insert(addr.port(), fd);
    }
}
