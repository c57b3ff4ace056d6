//! Placeholder descriptors: simulated sockets implement `AsRawFd`/`AsFd`
//! with a descriptor made on first use, so that libraries which set
//! options through `socket2::SockRef` succeed. A UDP socket's is a
//! simulated descriptor that names the socket itself (`std_net::alias`):
//! libc calls on it, such as quinn-udp's `sendmsg` and `recvmmsg`, reach
//! the simulated socket. A TCP socket's is a real socket that is never
//! bound or connected: no byte ever crosses it.

use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

#[derive(Debug, Default)]
pub(crate) struct Placeholder {
    fd: OnceLock<OwnedFd>,
}

impl Placeholder {
    /// A simulated descriptor naming socket `phase` (see the module
    /// docs); outside a simulation, a real placeholder as [`Self::raw`].
    pub(crate) fn raw_alias(&self, phase: sim_net::std_net::Phase) -> RawFd {
        if let Some(fd) = self.fd.get() {
            return fd.as_raw_fd();
        }
        match sim_net::std_net::alias(phase) {
            Ok(fd) => {
                // SAFETY: `alias` made `fd` for this placeholder alone.
                let owned = unsafe { OwnedFd::from_raw_fd(fd) };
                // A racing first use set it already: ours closes.
                let _ = self.fd.set(owned);
                self.fd.get().map_or(fd, AsRawFd::as_raw_fd)
            }
            Err(_) => self.raw(false),
        }
    }

    pub(crate) fn raw(&self, stream: bool) -> RawFd {
        self.fd
            .get_or_init(|| {
                let kind = if stream {
                    libc_dep::SOCK_STREAM
                } else {
                    libc_dep::SOCK_DGRAM
                };
                // A real socket, not a simulated one (`outside`): it only
                // holds options.
                // SAFETY: a plain socket(2) call; the result is checked.
                let fd = sim_runtime::outside::outside(|| unsafe {
                    libc_dep::socket(libc_dep::AF_INET, kind | libc_dep::SOCK_CLOEXEC, 0)
                });
                assert!(
                    fd >= 0,
                    "sim: cannot create a placeholder descriptor for a simulated socket: {}",
                    std::io::Error::last_os_error()
                );
                // SAFETY: the descriptor was just created and is owned here.
                unsafe { OwnedFd::from_raw_fd(fd) }
            })
            .as_raw_fd()
    }
}

/// tokio's debug builds refuse a socket in blocking mode in `from_std`
/// (its reads would block the runtime's thread); so does the facade's.
#[track_caller]
pub(crate) fn check_nonblocking(nonblocking: bool) {
    if cfg!(debug_assertions) && !nonblocking {
        panic!(
            "sim: from_std was given a socket in blocking mode, which tokio refuses in debug \
             builds: call set_nonblocking(true) on it first"
        );
    }
}

/// The simulated socket behind a `std::net` socket made in the simulation,
/// taken out of its descriptor for `from_std` (in a debug build, refused in
/// blocking mode, see [`check_nonblocking`]). `None` for a socket of no
/// simulation of this thread (its descriptor is closed).
#[track_caller]
pub(crate) fn take_std(
    socket: impl std::os::unix::io::IntoRawFd,
) -> Option<sim_net::std_net::Phase> {
    let fd = socket.into_raw_fd();
    let Some(taken) = sim_net::std_net::take(fd) else {
        // SAFETY: the descriptor was the socket's, handed over above.
        drop(unsafe { OwnedFd::from_raw_fd(fd) });
        return None;
    };
    check_nonblocking(taken.nonblocking);
    Some(taken.phase)
}

/// A `std::net` socket of the simulation for `into_std`: a new descriptor
/// for `phase` (in non-blocking mode, as tokio's are). The caller's handle
/// must not close the socket afterwards.
///
/// # Errors
/// With no descriptor left.
pub(crate) fn give_std<T: FromRawFd>(phase: sim_net::std_net::Phase) -> std::io::Result<T> {
    let fd = sim_net::std_net::give(phase)?;
    // SAFETY: `give` made `fd` for this socket and hands it over.
    Ok(unsafe { T::from_raw_fd(fd) })
}
