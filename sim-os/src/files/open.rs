//! `open`, `close`, `dup` and `fcntl`: where a descriptor begins and ends.

use super::common::*;

const WRITES: i32 = libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND;

/// An open of a simulated path: the descriptor or the error's return,
/// `None` when the path is not the simulation's (libc opens it).
///
/// # Safety
/// `path` is what `openat` takes: NUL-terminated, or null.
unsafe fn open_common(dirfd: i32, path: *const libc::c_char, flags: i32, mode: u32) -> Option<i32> {
    let hooks = hooks()?;
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    match unsafe { claimed(hooks, dirfd, path) } {
        Some(p) => Some(hooks.open(&p, flags, mode).unwrap_or_else(fail)),
        None if flags & WRITES != 0 && !writable_real(path) => {
            // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
            Some(match unsafe { claimed_change(hooks, dirfd, path) } {
                Some(p) => hooks.open(&p, flags, mode).unwrap_or_else(fail),
                // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
                None => fail(unsafe { refuse_real_change("open", path) }),
            })
        }
        None => None,
    }
}

/// Real paths a run may still write: devices (`/dev/null`, a tty).
unsafe fn writable_real(path: *const libc::c_char) -> bool {
    // SAFETY: the caller's contract.
    !path.is_null()
        && unsafe { CStr::from_ptr(path) }
            .to_bytes()
            .starts_with(b"/dev/")
}

/// Defines a libc `open`-family function: simulated under the
/// temporary directory during a run, refused for a real change, passed
/// on otherwise.
macro_rules! open_family {
    ($name:ident, $cname:literal) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// libc's contract (the mode is read only with `O_CREAT`/`O_TMPFILE`).
        #[no_mangle]
        pub unsafe extern "C" fn $name(path: *const libc::c_char, flags: i32, mode: u32) -> i32 {
            // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
            if let Some(fd) = unsafe { open_common(libc::AT_FDCWD, path, flags, mode) } {
                return fd;
            }
            real!(
                $cname,
                fn(path: *const libc::c_char, flags: i32, mode: u32) -> i32
            )
        }
    };
    (at $name:ident, $cname:literal) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        ///
        /// # Safety
        /// libc's contract (the mode is read only with `O_CREAT`/`O_TMPFILE`).
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            dirfd: i32,
            path: *const libc::c_char,
            flags: i32,
            mode: u32,
        ) -> i32 {
            // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
            if let Some(fd) = unsafe { open_common(dirfd, path, flags, mode) } {
                return fd;
            }
            real!(
                $cname,
                fn(dirfd: i32, path: *const libc::c_char, flags: i32, mode: u32) -> i32
            )
        }
    };
}

open_family!(open, c"open");
open_family!(open64, c"open64");
open_family!(at openat, c"openat");
open_family!(at openat64, c"openat64");

/// `close`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn close(fd: i32) -> i32 {
    if let Some(sockets) = crate::sockets::sim_fd(fd) {
        return to_c_int(sockets.close(fd));
    }
    if let Some(hooks) = fd_hooks(fd) {
        return to_c_int(hooks.close(fd));
    }
    real!(c"close", fn(fd: i32) -> i32)
}

/// `dup`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn dup(fd: i32) -> i32 {
    if let Some(sockets) = crate::sockets::sim_fd(fd) {
        return sockets.dup(fd).unwrap_or_else(fail);
    }
    if let Some(hooks) = fd_hooks(fd) {
        return hooks.dup(fd).unwrap_or_else(fail);
    }
    real!(c"dup", fn(fd: i32) -> i32)
}

/// `fcntl`: on a simulated descriptor, `F_DUPFD(_CLOEXEC)` duplicates it
/// and the flag queries answer plainly.
///
/// # Safety
/// libc's contract (the third argument is read as an integer).
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: i32, cmd: i32, arg: libc::c_long) -> i32 {
    if let Some(sockets) = crate::sockets::sim_fd(fd) {
        return match cmd {
            libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => sockets.dup(fd).unwrap_or_else(fail),
            libc::F_GETFD => libc::FD_CLOEXEC,
            libc::F_SETFD => 0,
            libc::F_GETFL => match sockets.nonblocking(fd) {
                Ok(true) => libc::O_RDWR | libc::O_NONBLOCK,
                Ok(false) => libc::O_RDWR,
                Err(e) => fail(e),
            },
            libc::F_SETFL => {
                to_c_int(sockets.set_nonblocking(fd, arg as i32 & libc::O_NONBLOCK != 0))
            }
            _ => fail(libc::EINVAL),
        };
    }
    if let Some(hooks) = fd_hooks(fd) {
        return match cmd {
            libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => hooks.dup(fd).unwrap_or_else(fail),
            libc::F_GETFD => libc::FD_CLOEXEC,
            libc::F_SETFD => 0,
            libc::F_GETFL => hooks.status_flags(fd).unwrap_or_else(fail),
            libc::F_SETFL => to_c_int(hooks.set_status_flags(fd, arg as i32)),
            _ => fail(libc::EINVAL),
        };
    }
    real!(c"fcntl", fn(fd: i32, cmd: i32, arg: libc::c_long) -> i32)
}
