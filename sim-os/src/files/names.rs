//! The names of files: `mkdir`, `unlink`, `rename`, links, `realpath`.

use super::common::*;
use super::*;

/// Runs a one-path change on the simulated disk during a run (or
/// refuses one the disk does not take), or passes it on outside runs.
///
/// # Safety
/// `path` is what the libc call takes: NUL-terminated, or null.
unsafe fn path_change(
    call: &str,
    dirfd: i32,
    path: *const libc::c_char,
    op: impl FnOnce(&dyn FileHooks, &Path) -> Result<(), i32>,
) -> Option<i32> {
    let hooks = hooks()?;
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    Some(match unsafe { claimed_change(hooks, dirfd, path) } {
        Some(p) => to_c_int(op(hooks, &p)),
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        None => fail(unsafe { refuse_real_change(call, path) }),
    })
}

/// `mkdir`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn mkdir(path: *const libc::c_char, mode: libc::mode_t) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("mkdir", libc::AT_FDCWD, path, |h, p| h.mkdir(p, mode)) }
    {
        return r;
    }
    real!(
        c"mkdir",
        fn(path: *const libc::c_char, mode: libc::mode_t) -> i32
    )
}

/// `mkfifo`: a simulated named pipe during a run (nix's `mkfifo` calls
/// this), so the simulated disk and `tokio::net::unix::pipe` find it.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn mkfifo(path: *const libc::c_char, mode: libc::mode_t) -> i32 {
    if let Some(r) =
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        unsafe { path_change("mkfifo", libc::AT_FDCWD, path, |h, p| h.mkfifo(p, mode)) }
    {
        return r;
    }
    real!(
        c"mkfifo",
        fn(path: *const libc::c_char, mode: libc::mode_t) -> i32
    )
}

/// `mkfifoat`: as [`mkfifo`], relative to `dirfd`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn mkfifoat(
    dirfd: i32,
    path: *const libc::c_char,
    mode: libc::mode_t,
) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("mkfifoat", dirfd, path, |h, p| h.mkfifo(p, mode)) } {
        return r;
    }
    real!(
        c"mkfifoat",
        fn(dirfd: i32, path: *const libc::c_char, mode: libc::mode_t) -> i32
    )
}

/// `rmdir`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const libc::c_char) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("rmdir", libc::AT_FDCWD, path, |h, p| h.rmdir(p)) } {
        return r;
    }
    real!(c"rmdir", fn(path: *const libc::c_char) -> i32)
}

/// `unlink`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn unlink(path: *const libc::c_char) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("unlink", libc::AT_FDCWD, path, |h, p| h.unlink(p)) } {
        return r;
    }
    real!(c"unlink", fn(path: *const libc::c_char) -> i32)
}

/// `unlinkat`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn unlinkat(dirfd: i32, path: *const libc::c_char, flags: i32) -> i32 {
    let remove_dir = flags & libc::AT_REMOVEDIR != 0;
    let op = |h: &dyn FileHooks, p: &Path| if remove_dir { h.rmdir(p) } else { h.unlink(p) };
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("unlinkat", dirfd, path, op) } {
        return r;
    }
    real!(
        c"unlinkat",
        fn(dirfd: i32, path: *const libc::c_char, flags: i32) -> i32
    )
}

/// Runs a two-path change: on the simulated disk during a run (refused
/// if the disk does not take either path), real outside runs.
///
/// # Safety
/// `from` and `to` are what the libc call takes: NUL-terminated, or null.
unsafe fn two_path_change(
    call: &str,
    from: *const libc::c_char,
    to: *const libc::c_char,
    op: impl FnOnce(&dyn FileHooks, &Path, &Path) -> Result<(), i32>,
) -> Option<i32> {
    let hooks = hooks()?;
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let a = unsafe { claimed_change(hooks, libc::AT_FDCWD, from) };
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let b = unsafe { claimed_change(hooks, libc::AT_FDCWD, to) };
    Some(match (a, b) {
        (Some(a), Some(b)) => to_c_int(op(hooks, &a, &b)),
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        (Some(_), None) => fail(unsafe { refuse_real_change(call, to) }),
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        _ => fail(unsafe { refuse_real_change(call, from) }),
    })
}

/// `rename`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn rename(from: *const libc::c_char, to: *const libc::c_char) -> i32 {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { two_path_change("rename", from, to, |h, a, b| h.rename(a, b)) } {
        return r;
    }
    real!(
        c"rename",
        fn(from: *const libc::c_char, to: *const libc::c_char) -> i32
    )
}

/// `linkat` (what std's `hard_link` calls).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn linkat(
    fromfd: i32,
    from: *const libc::c_char,
    tofd: i32,
    to: *const libc::c_char,
    flags: i32,
) -> i32 {
    if fromfd == libc::AT_FDCWD && tofd == libc::AT_FDCWD {
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        if let Some(r) = unsafe { two_path_change("link", from, to, |h, a, b| h.link(a, b)) } {
            return r;
        }
    }
    real!(
        c"linkat",
        fn(
            fromfd: i32,
            from: *const libc::c_char,
            tofd: i32,
            to: *const libc::c_char,
            flags: i32,
        ) -> i32
    )
}

/// `symlink`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn symlink(target: *const libc::c_char, link: *const libc::c_char) -> i32 {
    let op = |h: &dyn FileHooks, p: &Path| {
        // SAFETY: the caller's contract.
        let target = Path::new(OsStr::from_bytes(
            unsafe { CStr::from_ptr(target) }.to_bytes(),
        ));
        h.symlink(target, p)
    };
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    if let Some(r) = unsafe { path_change("symlink", libc::AT_FDCWD, link, op) } {
        return r;
    }
    real!(
        c"symlink",
        fn(target: *const libc::c_char, link: *const libc::c_char) -> i32
    )
}

/// `readlink`.
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn readlink(
    path: *const libc::c_char,
    buf: *mut libc::c_char,
    size: usize,
) -> isize {
    if let Some(hooks) = hooks() {
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        if let Some(p) = unsafe { claimed(hooks, libc::AT_FDCWD, path) } {
            return match hooks.readlink(&p) {
                Ok(target) => {
                    let bytes = target.as_os_str().as_bytes();
                    let n = bytes.len().min(size);
                    // SAFETY: the caller's buffer of `size` bytes.
                    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n) };
                    n as isize
                }
                Err(e) => fail(e),
            };
        }
    }
    real!(
        c"readlink",
        fn(path: *const libc::c_char, buf: *mut libc::c_char, size: usize) -> isize
    )
}

/// `realpath` (what std's `canonicalize` calls).
///
/// # Safety
/// libc's contract.
#[no_mangle]
pub unsafe extern "C" fn realpath(
    path: *const libc::c_char,
    resolved: *mut libc::c_char,
) -> *mut libc::c_char {
    if let Some(hooks) = hooks() {
        // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
        if let Some(p) = unsafe { claimed(hooks, libc::AT_FDCWD, path) } {
            return match hooks.realpath(&p) {
                Ok(real) => {
                    let bytes = real.as_os_str().as_bytes();
                    if bytes.len() >= libc::PATH_MAX as usize {
                        set_errno(libc::ENAMETOOLONG);
                        return std::ptr::null_mut();
                    }
                    let out = if resolved.is_null() {
                        // SAFETY: malloc, freed by the caller with free.
                        unsafe { libc::malloc(bytes.len() + 1) }.cast::<libc::c_char>()
                    } else {
                        resolved
                    };
                    if out.is_null() {
                        set_errno(libc::ENOMEM);
                        return out;
                    }
                    // SAFETY: `out` holds PATH_MAX bytes, or len + 1.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            out.cast::<u8>(),
                            bytes.len(),
                        );
                        *out.add(bytes.len()) = 0;
                    }
                    out
                }
                Err(e) => {
                    set_errno(e);
                    std::ptr::null_mut()
                }
            };
        }
    }
    real!(
        c"realpath",
        fn(path: *const libc::c_char, resolved: *mut libc::c_char) -> *mut libc::c_char
    )
}
