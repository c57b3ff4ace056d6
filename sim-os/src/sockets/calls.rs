//! The interposed socket calls: a simulated descriptor goes to the
//! [`SocketHooks`](super::SocketHooks); a real one to libc, except a
//! blocking call on a simulated thread, which would stop the whole run
//! (refused, see `threads::refuse_real_block`), and a real listener the
//! simulation touches (adopted, see the module's documentation).

use super::{addr, hooks, sim_fd};
use crate::symbols::real;

pub(super) fn set_errno(code: i32) {
    // SAFETY: errno is thread-local and always writable.
    unsafe { *libc::__errno_location() = code };
}

pub(super) fn fail<T: From<i8>>(code: i32) -> T {
    set_errno(code);
    T::from(-1)
}

fn to_c_int(r: Result<(), i32>) -> i32 {
    r.map_or_else(fail, |()| 0)
}

pub(super) fn to_isize(r: Result<usize, i32>) -> isize {
    r.map_or_else(fail, |n| n as isize)
}

/// `socket`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn socket(domain: i32, kind: i32, protocol: i32) -> i32 {
    if let Some(made) = hooks().and_then(|h| h.socket(domain, kind)) {
        return made.unwrap_or_else(fail);
    }
    real!(c"socket", fn(domain: i32, kind: i32, protocol: i32) -> i32)
}

/// `socketpair`.
///
/// # Safety
/// libc's contract: `fds` points at two writable `int`s.
#[no_mangle]
pub unsafe extern "C" fn socketpair(domain: i32, kind: i32, protocol: i32, fds: *mut i32) -> i32 {
    if let Some(made) = hooks().and_then(|h| h.socketpair(domain, kind)) {
        // SAFETY: the caller's two `int`s.
        return unsafe { give_two(made, fds) };
    }
    real!(
        c"socketpair",
        fn(domain: i32, kind: i32, protocol: i32, fds: *mut i32) -> i32
    )
}

/// Writes two descriptors into the caller's `fds`, or fails.
///
/// # Safety
/// `fds` points at two writable `int`s.
unsafe fn give_two(made: Result<(i32, i32), i32>, fds: *mut i32) -> i32 {
    match made {
        Ok((a, b)) => {
            // SAFETY: the caller's two `int`s.
            unsafe {
                *fds = a;
                *fds.add(1) = b;
            }
            0
        }
        Err(e) => fail(e),
    }
}

/// `pipe2`: a simulated pipe during a run.
///
/// # Safety
/// libc's contract: `fds` points at two writable `int`s.
#[no_mangle]
pub unsafe extern "C" fn pipe2(fds: *mut i32, flags: i32) -> i32 {
    if let Some(made) = hooks().and_then(|h| h.pipe(flags)) {
        // SAFETY: the caller's two `int`s.
        return unsafe { give_two(made, fds) };
    }
    real!(c"pipe2", fn(fds: *mut i32, flags: i32) -> i32)
}

/// `pipe`: a simulated pipe during a run.
///
/// # Safety
/// libc's contract: `fds` points at two writable `int`s.
#[no_mangle]
pub unsafe extern "C" fn pipe(fds: *mut i32) -> i32 {
    if let Some(made) = hooks().and_then(|h| h.pipe(0)) {
        // SAFETY: the caller's two `int`s.
        return unsafe { give_two(made, fds) };
    }
    real!(c"pipe", fn(fds: *mut i32) -> i32)
}

/// `bind`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn bind(fd: i32, at: *const libc::sockaddr, len: libc::socklen_t) -> i32 {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's address of `len` bytes.
        if let Some(path) = unsafe { addr::read_unix(at, len) } {
            return to_c_int(h.bind_unix(fd, &path));
        }
        // SAFETY: as above.
        return match unsafe { addr::read(at, len) } {
            Some(a) => to_c_int(h.bind(fd, a)),
            None => fail(libc::EAFNOSUPPORT),
        };
    }
    real!(
        c"bind",
        fn(fd: i32, at: *const libc::sockaddr, len: libc::socklen_t) -> i32
    )
}

/// `listen`: a real socket's port is noted (see `real_sockets`).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn listen(fd: i32, backlog: i32) -> i32 {
    if let Some(h) = sim_fd(fd) {
        return to_c_int(h.listen(fd, backlog));
    }
    let rc = real!(c"listen", fn(fd: i32, backlog: i32) -> i32);
    if rc == 0 {
        crate::real_sockets::note(fd);
    }
    rc
}

/// `accept`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn accept(
    fd: i32,
    at: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
) -> i32 {
    // SAFETY: the caller's arguments, passed on.
    unsafe { accept4(fd, at, len, 0) }
}

/// `accept4`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn accept4(
    fd: i32,
    at: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
    flags: i32,
) -> i32 {
    if let Some(h) = sim_fd(fd).or_else(|| adopt(fd)) {
        return match h.accept(fd, flags) {
            Ok((new, peer)) => {
                match h.family(new) {
                    // SAFETY: the caller's buffer of `*len` bytes.
                    Some(libc::AF_UNIX) => unsafe {
                        addr::write_unix(&h.unix_name(new, true).unwrap_or_default(), at, len)
                    },
                    // SAFETY: as above.
                    _ => unsafe { addr::write(peer, at, len) },
                }
                new
            }
            Err(e) => fail(e),
        };
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(errno) = crate::threads::refuse_real_block(fd, "accept") {
        return fail(errno);
    }
    real!(
        c"accept4",
        fn(fd: i32, at: *mut libc::sockaddr, len: *mut libc::socklen_t, flags: i32) -> i32
    )
}

/// A real listener `fd` that a simulated thread accepts on joins the
/// simulation (see the module's documentation).
fn adopt(fd: i32) -> Option<&'static dyn super::SocketHooks> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if !crate::threads::on_sim_thread() {
        return None;
    }
    let local = crate::real_sockets::listener_addr(fd)?;
    let h = hooks()?;
    h.adopt_listener(fd, local).then_some(h)
}

/// `connect`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn connect(fd: i32, at: *const libc::sockaddr, len: libc::socklen_t) -> i32 {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's address of `len` bytes.
        if let Some(path) = unsafe { addr::read_unix(at, len) } {
            return to_c_int(h.connect_unix(fd, &path));
        }
        // SAFETY: as above.
        return match unsafe { addr::read(at, len) } {
            Some(a) => to_c_int(h.connect(fd, a)),
            None => fail(libc::EAFNOSUPPORT),
        };
    }
    let rc = real!(
        c"connect",
        fn(fd: i32, at: *const libc::sockaddr, len: libc::socklen_t) -> i32
    );
    // SAFETY: errno is thread-local and always readable.
    if rc != 0 && unsafe { *libc::__errno_location() } == libc::ECONNREFUSED {
        // SAFETY: the caller's address of `len` bytes.
        if let Some(to) = unsafe { addr::read(at, len) } {
            explain_refusal(to);
        }
    }
    rc
}

/// A real connect refused on loopback where a simulation of this process
/// listens: the kernel's network cannot reach it, and a bare "connection
/// refused" would not say why. Written on stderr and noted as an escape;
/// errno is left as it was.
fn explain_refusal(to: std::net::SocketAddr) {
    let listens = super::HOOKS
        .get()
        .is_some_and(|h| h.simulation_listens(to.port()));
    if !to.ip().is_loopback() || !listens {
        return;
    }
    // SAFETY: errno is thread-local and always readable/writable.
    let errno = unsafe { *libc::__errno_location() };
    let message = format!(
        "sim: escape refused: a real socket connected to {to}, where a \
         simulation of this process listens; the kernel's network does not \
         reach a simulation. This thread is outside it (a thread started before \
         any runtime, as in a plain #[test] whose server runs on a thread of \
         its own): connect from inside the simulation, from a thread started \
         while the server's runtime lives or from the runtime itself."
    );
    eprintln!("{message}");
    sim_runtime::sweep::note_escape(&message);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Defines `getsockname` or `getpeername`.
macro_rules! name_call {
    ($name:ident, $cname:literal, $method:ident, $peer:literal) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// libc's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            fd: i32,
            at: *mut libc::sockaddr,
            len: *mut libc::socklen_t,
        ) -> i32 {
            if let Some(h) = sim_fd(fd) {
                match h.family(fd) {
                    Some(libc::AF_UNIX) => {
                        return match h.unix_name(fd, $peer) {
                            Ok(path) => {
                                // SAFETY: the caller's buffer of `*len` bytes.
                                unsafe { addr::write_unix(&path, at, len) };
                                0
                            }
                            Err(e) => fail(e),
                        };
                    }
                    Some(_) => return fail(libc::ENOTSOCK),
                    None => {}
                }
                return match h.$method(fd) {
                    Ok(a) => {
                        // SAFETY: the caller's buffer of `*len` bytes.
                        unsafe { addr::write(a, at, len) };
                        0
                    }
                    Err(e) => fail(e),
                };
            }
            real!(
                $cname,
                fn(fd: i32, at: *mut libc::sockaddr, len: *mut libc::socklen_t) -> i32
            )
        }
    };
}

name_call!(getsockname, c"getsockname", local_addr, false);
name_call!(getpeername, c"getpeername", peer_addr, true);

/// `setsockopt`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn setsockopt(
    fd: i32,
    level: i32,
    name: i32,
    value: *const libc::c_void,
    len: libc::socklen_t,
) -> i32 {
    if let Some(h) = sim_fd(fd) {
        if value.is_null() {
            return fail(libc::EFAULT);
        }
        // SAFETY: the caller's value of `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(value.cast::<u8>(), len as usize) };
        return to_c_int(h.set_option(fd, level, name, bytes));
    }
    real!(
        c"setsockopt",
        fn(fd: i32, level: i32, name: i32, value: *const libc::c_void, len: libc::socklen_t) -> i32
    )
}

/// `getsockopt`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn getsockopt(
    fd: i32,
    level: i32,
    name: i32,
    value: *mut libc::c_void,
    len: *mut libc::socklen_t,
) -> i32 {
    if let Some(h) = sim_fd(fd) {
        if value.is_null() || len.is_null() {
            return fail(libc::EFAULT);
        }
        return match h.option(fd, level, name) {
            Ok(bytes) => {
                // SAFETY: the caller's buffer of `*len` bytes; truncated to it.
                unsafe {
                    let n = (*len as usize).min(bytes.len());
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), n);
                    *len = n as libc::socklen_t;
                }
                0
            }
            Err(e) => fail(e),
        };
    }
    real!(
        c"getsockopt",
        fn(
            fd: i32,
            level: i32,
            name: i32,
            value: *mut libc::c_void,
            len: *mut libc::socklen_t,
        ) -> i32
    )
}

/// `shutdown`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn shutdown(fd: i32, how: i32) -> i32 {
    if let Some(h) = sim_fd(fd) {
        return to_c_int(h.shutdown(fd, how));
    }
    real!(c"shutdown", fn(fd: i32, how: i32) -> i32)
}

/// `recv`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recv(fd: i32, buf: *mut libc::c_void, n: usize, flags: i32) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's buffer of `n` bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
        return to_isize(h.recv(fd, buf, flags).map(|(n, _)| n));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if flags & libc::MSG_DONTWAIT == 0 {
        if let Some(errno) = crate::threads::refuse_real_block(fd, "recv") {
            return fail(errno);
        }
    }
    real!(
        c"recv",
        fn(fd: i32, buf: *mut libc::c_void, n: usize, flags: i32) -> isize
    )
}

/// `recvfrom`: on a simulated socket, the datagram's source (or a
/// connection's peer).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recvfrom(
    fd: i32,
    buf: *mut libc::c_void,
    n: usize,
    flags: i32,
    at: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's buffer of `n` bytes.
        let slice = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
        let got = h.recv(fd, slice, flags);
        if let Ok((_, from)) = &got {
            if let Some(from) = from.or_else(|| h.peer_addr(fd).ok()) {
                // SAFETY: the caller's buffer of `*len` bytes.
                unsafe { addr::write(from, at, len) };
            }
        }
        return to_isize(got.map(|(n, _)| n));
    }
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if flags & libc::MSG_DONTWAIT == 0 {
        if let Some(errno) = crate::threads::refuse_real_block(fd, "recvfrom") {
            return fail(errno);
        }
    }
    real!(
        c"recvfrom",
        fn(
            fd: i32,
            buf: *mut libc::c_void,
            n: usize,
            flags: i32,
            at: *mut libc::sockaddr,
            len: *mut libc::socklen_t,
        ) -> isize
    )
}

/// `send`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn send(fd: i32, buf: *const libc::c_void, n: usize, flags: i32) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's buffer of `n` bytes.
        let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
        return to_isize(h.send(fd, buf, flags, None));
    }
    real!(
        c"send",
        fn(fd: i32, buf: *const libc::c_void, n: usize, flags: i32) -> isize
    )
}

/// `sendto`: on a simulated socket, to the address given (a datagram
/// socket) or the connected peer.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn sendto(
    fd: i32,
    buf: *const libc::c_void,
    n: usize,
    flags: i32,
    at: *const libc::sockaddr,
    len: libc::socklen_t,
) -> isize {
    if let Some(h) = sim_fd(fd) {
        // SAFETY: the caller's address of `len` bytes, or null.
        let to = unsafe { addr::read(at, len) };
        if !at.is_null() && to.is_none() {
            return fail(libc::EAFNOSUPPORT);
        }
        // SAFETY: the caller's buffer of `n` bytes.
        let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
        return to_isize(h.send(fd, buf, flags, to));
    }
    real!(
        c"sendto",
        fn(
            fd: i32,
            buf: *const libc::c_void,
            n: usize,
            flags: i32,
            at: *const libc::sockaddr,
            len: libc::socklen_t,
        ) -> isize
    )
}

/// `ioctl`: on a simulated socket, `FIONBIO` and `FIONREAD`.
///
/// # Safety
/// libc's contract (the third argument is read as a pointer).
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: i32, request: libc::c_ulong, arg: *mut libc::c_void) -> i32 {
    if let Some(h) = sim_fd(fd) {
        if arg.is_null() {
            return fail(libc::EFAULT);
        }
        return match request {
            // SAFETY: FIONBIO's argument is an int.
            libc::FIONBIO => to_c_int(h.set_nonblocking(fd, unsafe { *arg.cast::<i32>() } != 0)),
            libc::FIONREAD => match h.readable_bytes(fd) {
                Ok(n) => {
                    // SAFETY: FIONREAD's argument is an int to fill.
                    unsafe { *arg.cast::<i32>() = n.min(i32::MAX as usize) as i32 };
                    0
                }
                Err(e) => fail(e),
            },
            _ => fail(libc::ENOTTY),
        };
    }
    real!(
        c"ioctl",
        fn(fd: i32, request: libc::c_ulong, arg: *mut libc::c_void) -> i32
    )
}

/// `poll`: descriptors all simulated wait in virtual time; a mix of
/// simulated and real ones is refused (`EINVAL`, with a message), as no
/// single wait covers both.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn poll(fds: *mut libc::pollfd, count: libc::nfds_t, timeout_ms: i32) -> i32 {
    if count > 0 && !fds.is_null() {
        // SAFETY: the caller's array of `count` entries.
        let list = unsafe { std::slice::from_raw_parts_mut(fds, count as usize) };
        let simulated = list.iter().filter(|p| sim_fd(p.fd).is_some()).count();
        if simulated == list.len() {
            let h = sim_fd(list[0].fd).expect("checked above");
            return h.poll(list, timeout_ms).map_or_else(fail, |n| n as i32);
        }
        if simulated > 0 {
            eprintln!(
                "sim: poll over simulated sockets and real descriptors at once cannot wait for \
                 both; poll them apart"
            );
            return fail(libc::EINVAL);
        }
    }
    real!(
        c"poll",
        fn(fds: *mut libc::pollfd, count: libc::nfds_t, timeout_ms: i32) -> i32
    )
}
