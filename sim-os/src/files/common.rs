//! Helpers the interposed calls share: the hooks of the current run, errno,
//! the paths that path arguments name, and the refusal of a real change.

use super::*;
pub(super) use crate::symbols::real;
pub(super) use std::ffi::{CStr, OsStr};
pub(super) use std::os::unix::ffi::OsStrExt;

pub(super) fn hooks() -> Option<&'static dyn FileHooks> {
    // Only inside a run: outside, every call is the real one.
    sim_runtime::context::current_id()?;
    if is_outside() {
        return None;
    }
    HOOKS.get().copied()
}

pub(super) fn fd_hooks(fd: i32) -> Option<&'static dyn FileHooks> {
    if FAKE_FDS.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let hooks = HOOKS.get().copied()?;
    hooks.is_fake(fd).then_some(hooks)
}

pub(super) fn set_errno(code: i32) {
    // SAFETY: errno is thread-local and always writable.
    unsafe { *libc::__errno_location() = code };
}

pub(super) fn fail<T: From<i8>>(code: i32) -> T {
    set_errno(code);
    T::from(-1)
}

/// The absolute, normalized path a path argument names.
///
/// # Safety
/// `path` is NUL-terminated or null.
pub(super) unsafe fn absolute(
    hooks: &dyn FileHooks,
    dirfd: i32,
    path: *const libc::c_char,
) -> Option<PathBuf> {
    if path.is_null() {
        return None;
    }
    // SAFETY: the caller's contract.
    let raw = Path::new(OsStr::from_bytes(
        unsafe { CStr::from_ptr(path) }.to_bytes(),
    ));
    let absolute = if raw.is_absolute() {
        raw.to_path_buf()
    } else if dirfd == libc::AT_FDCWD {
        std::env::current_dir().ok()?.join(raw)
    } else {
        hooks.dir_path(dirfd)?.join(raw)
    };
    Some(normalize(&absolute))
}

/// Where a path argument points, if the simulated disk has it.
///
/// # Safety
/// `path` is NUL-terminated or null.
pub(super) unsafe fn claimed(
    hooks: &dyn FileHooks,
    dirfd: i32,
    path: *const libc::c_char,
) -> Option<PathBuf> {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let absolute = unsafe { absolute(hooks, dirfd, path) }?;
    hooks.claims(&absolute).then_some(absolute)
}

/// Where a path argument of a change points on the simulated disk: the
/// disk takes every change a run makes (see [`FileHooks::takes_change`]).
///
/// # Safety
/// `path` is NUL-terminated or null.
pub(super) unsafe fn claimed_change(
    hooks: &dyn FileHooks,
    dirfd: i32,
    path: *const libc::c_char,
) -> Option<PathBuf> {
    // SAFETY: the caller's path arguments, NUL-terminated or null (libc's contract), passed on.
    let absolute = unsafe { absolute(hooks, dirfd, path) }?;
    (hooks.claims(&absolute) || hooks.takes_change(&absolute)).then_some(absolute)
}

/// A change to the real filesystem during a run: refused, named.
///
/// # Safety
/// `path` is NUL-terminated or null.
pub(super) unsafe fn refuse_real_change(call: &str, path: *const libc::c_char) -> i32 {
    let shown = if path.is_null() {
        String::from("?")
    } else {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned()
    };
    let message = format!(
        "sim: escape refused: {call}({shown:?}) would change the kernel's files (/proc, \
         /sys) during a simulation. Every other file a run changes lives on the host's \
         simulated disk; these stay real and unchanged.\n"
    );
    // Straight to stderr, past any capture, and with the test's failure.
    // SAFETY: a plain write of a valid buffer.
    unsafe { real_write(2, message.as_ptr().cast(), message.len()) };
    sim_runtime::sweep::note_escape(&message);
    libc::EPERM
}

pub(super) unsafe fn real_write(fd: i32, buf: *const libc::c_void, n: usize) -> isize {
    real!(
        c"write",
        fn(fd: i32, buf: *const libc::c_void, n: usize) -> isize
    )
}

pub(super) fn fill_stat64(s: &FakeStat, out: *mut libc::stat64) {
    // SAFETY: a plain C struct, valid when zeroed; `out` is the
    // caller's buffer.
    unsafe {
        let mut st: libc::stat64 = std::mem::zeroed();
        st.st_dev = s.dev;
        st.st_ino = s.ino;
        st.st_mode = s.mode;
        st.st_nlink = u64::from(s.nlink) as _;
        st.st_uid = s.uid;
        st.st_gid = s.gid;
        st.st_size = s.size as i64;
        st.st_blksize = 4096;
        st.st_blocks = s.size.div_ceil(512) as i64;
        st.st_atime = (s.atime_ns / 1_000_000_000) as i64;
        st.st_atime_nsec = (s.atime_ns % 1_000_000_000) as i64;
        st.st_mtime = (s.mtime_ns / 1_000_000_000) as i64;
        st.st_mtime_nsec = (s.mtime_ns % 1_000_000_000) as i64;
        st.st_ctime = (s.ctime_ns / 1_000_000_000) as i64;
        st.st_ctime_nsec = (s.ctime_ns % 1_000_000_000) as i64;
        *out = st;
    }
}

pub(super) fn to_c_int(r: Result<(), i32>) -> libc::c_int {
    match r {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}
