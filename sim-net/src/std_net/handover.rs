//! A simulated socket handed between a `std` descriptor and `tokio::net`:
//! `from_std` takes it out of its descriptor ([`take`]), `into_std` gives
//! it one ([`give`], [`give_as`]), `as_raw_fd` names it with a borrowed
//! descriptor ([`alias`]), and `AsyncFd` asks what it can watch
//! ([`watchable`]). Options set on a UDP socket's `std` descriptor wait
//! for its alias across the handover.

use super::{get, install, lock, new_sock, register, table, thread_core, unregister, view};
use super::{Family, Phase};
use crate::net::{try_with_socket_net, SocketId};
use std::collections::BTreeMap;
use std::io;
use std::sync::{Mutex, MutexGuard};

/// Options kept on a UDP socket that `tokio::net` took from its `std`
/// descriptor (`from_std`), until its `as_raw_fd` descriptor ([`alias`])
/// takes them: quinn-udp sets `IP_PKTINFO` on the `std` socket and reads
/// packets through the `tokio` one. Emptied as each socket closes
/// ([`forget`]).
static STASHED: Mutex<BTreeMap<SocketId, Kept>> = Mutex::new(BTreeMap::new());

/// Options kept as set (level, name: value).
type Kept = BTreeMap<(i32, i32), Vec<u8>>;

fn stashed() -> MutexGuard<'static, BTreeMap<SocketId, Kept>> {
    STASHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Socket `id` closed: options stashed for it go (see [`alias`]).
pub fn forget(id: SocketId) {
    stashed().remove(&id);
}

/// Whether `fd` is a simulated socket.
pub fn is_sim(fd: i32) -> bool {
    table().contains_key(&fd)
}

/// What an `AsyncFd` can watch of descriptor `fd`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watchable {
    /// A socket of the current simulation: a connection (TCP, or a Unix
    /// stream of `socketpair` or `pipe2`), connected or connecting, a
    /// listener, or a bound datagram socket.
    Socket(SocketId),
    /// A simulated socket not bound or connected yet: nothing to watch.
    Unbound,
    /// Not a simulated socket of this simulation: a real descriptor, or a
    /// simulated file.
    NotSimulated,
}

/// What an `AsyncFd` can watch of descriptor `fd` (see [`Watchable`]).
pub fn watchable(fd: i32) -> Watchable {
    let (Some(core), Ok((_, v))) = (thread_core(), view(fd)) else {
        return Watchable::NotSimulated;
    };
    if v.core != core.id() {
        return Watchable::NotSimulated;
    }
    match v.phase {
        Phase::Connected(id)
        | Phase::Connecting(id)
        | Phase::Listening(id)
        | Phase::Datagram(id) => Watchable::Socket(id),
        Phase::Fresh(_) | Phase::Failed(_) => Watchable::Unbound,
    }
}

/// A socket taken out of its descriptor ([`take`]).
#[derive(Clone, Copy, Debug)]
pub struct Taken {
    /// The connection, listener or datagram socket.
    pub phase: Phase,
    /// What it is.
    pub family: Family,
    /// Whether the descriptor was in non-blocking mode.
    pub nonblocking: bool,
}

/// What simulated descriptor `fd` of this simulation is (`None`: not
/// one).
pub fn family(fd: i32) -> Option<Family> {
    let core = thread_core()?;
    let sock = get(fd).ok()?;
    let s = lock(&sock);
    (s.core == core.id()).then_some(s.family)
}

/// The socket of simulated descriptor `fd`, taken out of it for
/// `tokio::net`'s `from_std` (the descriptor is closed). `None` for a
/// descriptor that is not a simulated socket of this simulation.
pub fn take(fd: i32) -> Option<Taken> {
    family(fd)?;
    let sock = unregister(fd)?;
    let mut s = lock(&sock);
    let taken = Taken {
        phase: s.phase,
        family: s.family,
        nonblocking: s.nonblocking,
    };
    if let Phase::Datagram(id) = taken.phase {
        if !s.kept.is_empty() {
            stashed().insert(id, s.kept.clone());
        }
    }
    // Another descriptor (a dup) still holds it: it stays shared, and its
    // close will not close the socket now owned by tokio.
    s.phase = Phase::Failed(libc::EBADF);
    Some(taken)
}

/// A descriptor for a TCP or UDP socket of the current simulation, for
/// `tokio::net`'s `into_std` (in non-blocking mode, as tokio's are).
///
/// # Errors
/// Outside a simulation, or with no descriptor left.
pub fn give(phase: Phase) -> io::Result<i32> {
    give_as(phase, Family::Inet, true)
}

/// A descriptor for a socket of the current simulation of `family`, in
/// non-blocking mode or not.
///
/// # Errors
/// Outside a simulation, or with no descriptor left.
pub fn give_as(phase: Phase, family: Family, nonblocking: bool) -> io::Result<i32> {
    let core =
        thread_core().ok_or_else(|| io::Error::other("sim: no simulation on this thread"))?;
    install();
    let local = match (family, phase) {
        (Family::Inet, Phase::Listening(id) | Phase::Connected(id)) => {
            try_with_socket_net(|net| net.tcp_local_addr(id)).and_then(Result::ok)
        }
        (Family::Inet, Phase::Datagram(id)) => {
            try_with_socket_net(|net| net.udp_local_addr(id)).and_then(Result::ok)
        }
        _ => None,
    };
    let ipv6 = local.is_some_and(|a| a.is_ipv6());
    let sock = new_sock(core.id(), phase, ipv6, nonblocking);
    lock(&sock).family = family;
    register(sock).map_err(io::Error::from_raw_os_error)
}

/// A descriptor that names a socket `tokio::net` owns (`phase`, of the
/// current simulation), for its `as_raw_fd`: libc calls on it (`sendmsg`
/// and `recvmmsg` of quinn-udp, `socket2` options) reach the simulated
/// socket, and closing it leaves the socket to its owner.
///
/// # Errors
/// Outside a simulation, or with no descriptor left.
pub fn alias(phase: Phase) -> io::Result<i32> {
    let fd = give(phase)?;
    if let Ok(sock) = get(fd) {
        let mut s = lock(&sock);
        s.borrowed = true;
        if let Phase::Datagram(id) = phase {
            s.kept = stashed().remove(&id).unwrap_or_default();
        }
    }
    Ok(fd)
}
