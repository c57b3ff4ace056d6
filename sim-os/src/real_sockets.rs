//! Real sockets beside the simulated network (simulation builds): a
//! `std::net::TcpListener` is the kernel's, and no simulated connection
//! reaches it. The interposed `listen` notes the ports real sockets listen
//! on, so a simulated connect refused on such a port can say why, instead
//! of a bare "connection refused".

use std::collections::BTreeSet;
use std::sync::Mutex;

/// Ports real sockets of this process listened on (bounded: the first
/// ones explain a refusal).
static PORTS: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// How many ports are kept.
#[cfg(simulation)]
const PORTS_MAX: usize = 4096;

/// Whether a real socket of this process listened on `port` (the kernel's
/// network, which the simulation does not reach).
pub fn listened_on(port: u16) -> bool {
    PORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&port)
}

/// Notes the port of `fd`, a socket that now listens.
#[cfg(simulation)]
fn note(fd: libc::c_int) {
    // SAFETY: getsockname into a zeroed storage of its full size.
    let port = unsafe {
        let mut storage: libc::sockaddr_storage = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        if libc::getsockname(
            fd,
            (&mut storage as *mut libc::sockaddr_storage).cast(),
            &mut len,
        ) != 0
        {
            return;
        }
        match libc::c_int::from(storage.ss_family) {
            libc::AF_INET => {
                let addr =
                    &*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>();
                u16::from_be(addr.sin_port)
            }
            libc::AF_INET6 => {
                let addr =
                    &*(&storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>();
                u16::from_be(addr.sin6_port)
            }
            _ => return,
        }
    };
    let mut ports = PORTS.lock().unwrap_or_else(|e| e.into_inner());
    if ports.len() < PORTS_MAX {
        ports.insert(port);
    }
}

/// libc's `listen`, which also notes the socket's port.
///
/// # Safety
/// As libc's.
#[cfg(simulation)]
#[no_mangle]
pub unsafe extern "C" fn listen(fd: libc::c_int, backlog: libc::c_int) -> libc::c_int {
    let Some(real) =
        crate::symbols::libc_fn!(c"listen", fn(libc::c_int, libc::c_int) -> libc::c_int)
    else {
        *libc::__errno_location() = libc::ENOSYS;
        return -1;
    };
    let rc = real(fd, backlog);
    if rc == 0 {
        note(fd);
    }
    rc
}
