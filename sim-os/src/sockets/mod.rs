//! `std::net` during a run: the TCP and UDP sockets a simulation's code
//! makes with libc's calls (`std::net::TcpListener`, `TcpStream`,
//! `UdpSocket`, a dependency's blocking client) are sockets of the
//! simulated network, as `tokio::net`'s are (through [`SocketHooks`], which
//! `sim-net` installs).
//!
//! - A socket is simulated when the thread that makes it is in a
//!   simulation: inside a runtime, on a simulated thread, or a thread
//!   with a runtime alive. Outside any, it is the kernel's.
//! - A blocking call (accept, connect, a read, a write that waits for the
//!   window) waits in virtual time: the run goes on meanwhile, the seed
//!   orders it, and `SO_RCVTIMEO`/`SO_SNDTIMEO` are virtual deadlines.
//! - A real listener made before any runtime (a plain `#[test]` that binds
//!   a `std::net::TcpListener` and then builds a runtime) joins the
//!   simulation the first time the simulation touches it: an accept on a
//!   simulated thread, or a simulated connect to its port.
//!
//! Descriptors of simulated sockets are real numbers (each reserves a
//! `/dev/null` descriptor), so they never collide with real ones.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

#[cfg(simulation)]
mod addr;
#[cfg(simulation)]
mod calls;
#[cfg(simulation)]
mod messages;

#[cfg(simulation)]
pub use calls::*;
#[cfg(simulation)]
pub use messages::*;

/// What the simulated network answers for a simulated descriptor. Errors
/// are errno values.
pub trait SocketHooks: Sync {
    /// `socket`: a simulated descriptor, when the calling thread is in a
    /// simulation and the network simulates `domain` and `kind`; `None`
    /// leaves the call to the kernel.
    fn socket(&self, domain: i32, kind: i32) -> Option<Result<i32, i32>>;
    /// `socketpair`: two connected simulated descriptors, when the calling
    /// thread is in a simulation and the network simulates `domain` and
    /// `kind` (Unix streams); `None` leaves the call to the kernel.
    fn socketpair(&self, domain: i32, kind: i32) -> Option<Result<(i32, i32), i32>>;
    /// Whether `fd` is a simulated socket.
    fn is_sim(&self, fd: i32) -> bool;
    /// `pipe2`: the reading and the writing end of a simulated pipe
    /// (`O_NONBLOCK` of `flags`), when the calling thread is in a
    /// simulation; `None` leaves the call to the kernel.
    fn pipe(&self, flags: i32) -> Option<Result<(i32, i32), i32>>;
    /// The address family of simulated descriptor `fd` when it is not an
    /// IP socket: `AF_UNIX` for an unnamed Unix stream (its address is the
    /// family alone), 0 for a pipe's end (no socket at all).
    fn family(&self, fd: i32) -> Option<i32>;
    /// The path of a simulated Unix stream (`peer`: its peer's), as
    /// bytes: empty when unnamed, a leading NUL for an abstract name.
    fn unix_name(&self, fd: i32, peer: bool) -> Result<Vec<u8>, i32>;
    /// `bind`.
    fn bind(&self, fd: i32, addr: SocketAddr) -> Result<(), i32>;
    /// `bind` of a Unix stream socket to `path` (bytes; a leading NUL for
    /// an abstract name).
    fn bind_unix(&self, fd: i32, path: &[u8]) -> Result<(), i32>;
    /// `connect` of a Unix stream socket to `path`.
    fn connect_unix(&self, fd: i32, path: &[u8]) -> Result<(), i32>;
    /// `listen`.
    fn listen(&self, fd: i32, backlog: i32) -> Result<(), i32>;
    /// `accept4`: the new descriptor (with `SOCK_NONBLOCK` of `flags`) and
    /// the peer's address.
    fn accept(&self, fd: i32, flags: i32) -> Result<(i32, SocketAddr), i32>;
    /// `connect`.
    fn connect(&self, fd: i32, addr: SocketAddr) -> Result<(), i32>;
    /// `recvfrom` (`MSG_PEEK`, `MSG_DONTWAIT` of `flags`); `recv` and
    /// `read` too: the bytes, and a datagram's source.
    fn recv(&self, fd: i32, buf: &mut [u8], flags: i32)
        -> Result<(usize, Option<SocketAddr>), i32>;
    /// `sendto` (`MSG_DONTWAIT` of `flags`; `to` for a datagram socket);
    /// `send` and `write` too, with no address.
    fn send(&self, fd: i32, buf: &[u8], flags: i32, to: Option<SocketAddr>) -> Result<usize, i32>;
    /// `getsockname`.
    fn local_addr(&self, fd: i32) -> Result<SocketAddr, i32>;
    /// `getpeername`.
    fn peer_addr(&self, fd: i32) -> Result<SocketAddr, i32>;
    /// `shutdown` (`SHUT_RD`, `SHUT_WR`, `SHUT_RDWR`).
    fn shutdown(&self, fd: i32, how: i32) -> Result<(), i32>;
    /// `setsockopt`.
    fn set_option(&self, fd: i32, level: i32, name: i32, value: &[u8]) -> Result<(), i32>;
    /// `getsockopt`: the value's bytes.
    fn option(&self, fd: i32, level: i32, name: i32) -> Result<Vec<u8>, i32>;
    /// `O_NONBLOCK` (`ioctl(FIONBIO)`, `fcntl(F_SETFL)`).
    fn set_nonblocking(&self, fd: i32, on: bool) -> Result<(), i32>;
    /// Whether `fd` is in non-blocking mode.
    fn nonblocking(&self, fd: i32) -> Result<bool, i32>;
    /// Bytes readable now (`ioctl(FIONREAD)`).
    fn readable_bytes(&self, fd: i32) -> Result<usize, i32>;
    /// `poll` on simulated descriptors only: sets each `revents` and
    /// returns how many are ready; waits up to `timeout_ms` (negative:
    /// without limit) of virtual time.
    fn poll(&self, fds: &mut [libc::pollfd], timeout_ms: i32) -> Result<usize, i32>;
    /// `close`.
    fn close(&self, fd: i32) -> Result<(), i32>;
    /// `dup`: a new descriptor for the same socket.
    fn dup(&self, fd: i32) -> Result<i32, i32>;
    /// A real listening socket `fd`, made outside any simulation, joins
    /// the calling thread's simulation: true when it is now simulated.
    fn adopt_listener(&self, fd: i32, addr: SocketAddr) -> bool;
    /// Whether a simulation of this process listens on TCP `port` (a real
    /// connect refused there is explained as an escape).
    fn simulation_listens(&self, port: u16) -> bool;
}

pub(crate) static HOOKS: OnceLock<&'static dyn SocketHooks> = OnceLock::new();

/// Simulated sockets open in the process: while zero, descriptor calls
/// pass straight through without asking the hooks.
static SIM_FDS: AtomicUsize = AtomicUsize::new(0);

/// Installs the simulated network's answers (once per process; later
/// calls are ignored).
pub fn set_socket_hooks(hooks: &'static dyn SocketHooks) {
    let _ = HOOKS.set(hooks);
}

/// Counts a simulated socket descriptor opened (`true`) or closed.
pub fn count_sim_fd(opened: bool) {
    if opened {
        SIM_FDS.fetch_add(1, Ordering::Relaxed);
    } else {
        SIM_FDS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The hooks, when `fd` is a simulated socket.
#[cfg(simulation)]
pub(crate) fn sim_fd(fd: i32) -> Option<&'static dyn SocketHooks> {
    if SIM_FDS.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let hooks = HOOKS.get().copied()?;
    hooks.is_sim(fd).then_some(hooks)
}

/// The hooks, for a call that may make a socket.
#[cfg(simulation)]
pub(crate) fn hooks() -> Option<&'static dyn SocketHooks> {
    if sim_runtime::outside::is_outside() {
        return None;
    }
    HOOKS.get().copied()
}
