//! The attributes of a file: `stat` and its family, `chmod`, `access`.

use super::common::*;
use super::*;

/// `fstat64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fstat64(fd: i32, buf: *mut libc::stat64) -> i32 {
    if let Some(hooks) = fd_hooks(fd) {
        return match hooks.fstat(fd) {
            Ok(s) => {
                fill_stat64(&s, buf);
                0
            }
            Err(e) => fail(e),
        };
    }
    real!(c"fstat64", fn(fd: i32, buf: *mut libc::stat64) -> i32)
}

/// A stat of a simulated path into `buf`: the call's return, `None` when
/// the path is not the simulation's (libc answers).
///
/// # Safety
/// `path` and `buf` are what `fstatat64` takes: a NUL-terminated path (or
/// null) and a writable `stat64`.
unsafe fn stat_common(
    dirfd: i32,
    path: *const libc::c_char,
    buf: *mut libc::stat64,
    follow: bool,
) -> Option<i32> {
    let hooks = hooks()?;
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let p = unsafe { claimed(hooks, dirfd, path) }?;
    Some(match hooks.stat(&p, follow) {
        Ok(s) => {
            fill_stat64(&s, buf);
            0
        }
        Err(e) => fail(e),
    })
}

/// `stat64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn stat64(path: *const libc::c_char, buf: *mut libc::stat64) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { stat_common(libc::AT_FDCWD, path, buf, true) } {
        return r;
    }
    real!(
        c"stat64",
        fn(path: *const libc::c_char, buf: *mut libc::stat64) -> i32
    )
}

/// `lstat64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn lstat64(path: *const libc::c_char, buf: *mut libc::stat64) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { stat_common(libc::AT_FDCWD, path, buf, false) } {
        return r;
    }
    real!(
        c"lstat64",
        fn(path: *const libc::c_char, buf: *mut libc::stat64) -> i32
    )
}

/// `fstatat64`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fstatat64(
    dirfd: i32,
    path: *const libc::c_char,
    buf: *mut libc::stat64,
    flags: i32,
) -> i32 {
    // SAFETY: a non-null path is NUL-terminated (libc's contract), so its first byte is readable.
    let empty = !path.is_null() && unsafe { *path } == 0;
    if empty && flags & libc::AT_EMPTY_PATH != 0 {
        if fd_hooks(dirfd).is_some() {
            // SAFETY: the caller's descriptor and buffer, passed on.
            return unsafe { fstat64(dirfd, buf) };
        }
    } else if let Some(r) =
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        unsafe {
            stat_common(dirfd, path, buf, flags & libc::AT_SYMLINK_NOFOLLOW == 0)
        }
    {
        return r;
    }
    real!(
        c"fstatat64",
        fn(dirfd: i32, path: *const libc::c_char, buf: *mut libc::stat64, flags: i32) -> i32
    )
}

/// What the `statx` override asks first: a simulated file's attributes
/// for (`dirfd`, `path`, `flags`), if it is one.
///
/// # Safety
/// `path` is NUL-terminated or null.
pub(crate) unsafe fn statx_simulated(
    dirfd: i32,
    path: *const libc::c_char,
    flags: i32,
) -> Option<Result<FakeStat, i32>> {
    // SAFETY: a non-null path is NUL-terminated (libc's contract), so its first byte is readable.
    let empty = !path.is_null() && unsafe { *path } == 0;
    if empty && flags & libc::AT_EMPTY_PATH != 0 {
        let hooks = fd_hooks(dirfd)?;
        return Some(hooks.fstat(dirfd));
    }
    let hooks = hooks()?;
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let p = unsafe { claimed(hooks, dirfd, path) }?;
    Some(hooks.stat(&p, flags & libc::AT_SYMLINK_NOFOLLOW == 0))
}

/// `chmod`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn chmod(path: *const libc::c_char, mode: libc::mode_t) -> i32 {
    if let Some(hooks) = hooks() {
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        match unsafe { claimed_change(hooks, libc::AT_FDCWD, path) } {
            Some(p) => return to_c_int(hooks.chmod(&p, mode)),
            // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
            None => return fail(unsafe { refuse_real_change("chmod", path) }),
        }
    }
    real!(
        c"chmod",
        fn(path: *const libc::c_char, mode: libc::mode_t) -> i32
    )
}

/// `fchmod`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn fchmod(fd: i32, mode: libc::mode_t) -> i32 {
    if let Some(hooks) = fd_hooks(fd) {
        return to_c_int(hooks.fchmod(fd, mode));
    }
    real!(c"fchmod", fn(fd: i32, mode: libc::mode_t) -> i32)
}
