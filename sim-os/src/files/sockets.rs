//! Blocking calls on real sockets: refused on a simulated thread, which would
//! block the whole run (see `threads::refuse_real_block`).

use super::common::*;

/// `recv`: refused on a simulated thread that would block on a real
/// socket (see `threads::refuse_real_block`).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recv(fd: i32, buf: *mut libc::c_void, n: usize, flags: i32) -> isize {
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

/// `recvfrom`: as [`recv`].
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn recvfrom(
    fd: i32,
    buf: *mut libc::c_void,
    n: usize,
    flags: i32,
    addr: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
) -> isize {
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
            addr: *mut libc::sockaddr,
            len: *mut libc::socklen_t,
        ) -> isize
    )
}

/// `accept4`: as [`recv`], for a listening socket.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn accept4(
    fd: i32,
    addr: *mut libc::sockaddr,
    len: *mut libc::socklen_t,
    flags: i32,
) -> i32 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(errno) = crate::threads::refuse_real_block(fd, "accept") {
        return fail(errno);
    }
    real!(
        c"accept4",
        fn(fd: i32, addr: *mut libc::sockaddr, len: *mut libc::socklen_t, flags: i32) -> i32
    )
}
