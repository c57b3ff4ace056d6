//! `std::fs` during a run: libc's file calls go to the simulated disk of
//! the running host wherever `tokio::fs` would, so both APIs see one disk.
//!
//! The rule, the same for both APIs: **a run never changes the real
//! filesystem.** While a simulation is current on the calling thread, the
//! libc calls std makes (`open`, `read`, `write`, `fstat`, `mkdir`,
//! `unlink`, `rename`, `opendir`, ...) are answered by the simulated disk
//! (through [`FileHooks`], which `sim-fs` installs):
//! - on paths under the temporary directory, always (tests make scratch
//!   state there, often with `tempfile`, which uses `std::fs`);
//! - on any other path the run changes (creates, writes, removes, renames,
//!   chmods): the change goes to the host's disk, which shows the real
//!   filesystem beneath it, and from then on that path (its ancestors and
//!   descendants too) is answered by the disk, so a read sees the change.
//!
//! Everything else is the real filesystem, read-only: fixtures in the
//! source tree, `/proc`, the binary itself. Those are inputs, like stdin.
//! Devices (`/dev/null`, a tty) stay real; a change under `/proc` or
//! `/sys` is refused with `EPERM` and a message on stderr that names the
//! call and the path. `sim-fs` reports, at the end of a run, what it wrote
//! outside the temporary directory.
//!
//! Descriptors of simulated files are real numbers (each reserves a
//! `/dev/null` descriptor), so they never collide with real ones.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What the simulated disk answers. Errors are errno values. Every method
/// acts on the disk of the host whose task is running.
pub trait FileHooks: Sync {
    /// Whether `path` (absolute, with no `.` or `..`) is simulated.
    fn claims(&self, path: &Path) -> bool;
    /// Whether a change (create, write, remove, rename, chmod) to `path`,
    /// which [`FileHooks::claims`] does not claim, goes to the simulated
    /// disk all the same (which claims the path from then on, so reads
    /// see the change); false refuses it.
    fn takes_change(&self, path: &Path) -> bool;
    /// The path of a simulated directory descriptor (for `*at` calls).
    fn dir_path(&self, fd: i32) -> Option<PathBuf>;
    /// Whether `fd` is a simulated descriptor.
    fn is_fake(&self, fd: i32) -> bool;
    /// `open`: a new simulated descriptor.
    fn open(&self, path: &Path, flags: i32, mode: u32) -> Result<i32, i32>;
    /// `close`.
    fn close(&self, fd: i32) -> Result<(), i32>;
    /// `read` (at the position, which moves) or `pread` (at `at`).
    fn read(&self, fd: i32, buf: &mut [u8], at: Option<u64>) -> Result<usize, i32>;
    /// `write` or `pwrite`.
    fn write(&self, fd: i32, buf: &[u8], at: Option<u64>) -> Result<usize, i32>;
    /// `lseek`.
    fn seek(&self, fd: i32, offset: i64, whence: i32) -> Result<u64, i32>;
    /// `fstat`.
    fn fstat(&self, fd: i32) -> Result<FakeStat, i32>;
    /// `stat` (`follow`) or `lstat`.
    fn stat(&self, path: &Path, follow: bool) -> Result<FakeStat, i32>;
    /// `fsync`/`fdatasync`.
    fn fsync(&self, fd: i32) -> Result<(), i32>;
    /// `ftruncate`.
    fn ftruncate(&self, fd: i32, len: u64) -> Result<(), i32>;
    /// `fchmod`.
    fn fchmod(&self, fd: i32, mode: u32) -> Result<(), i32>;
    /// `chmod`.
    fn chmod(&self, path: &Path, mode: u32) -> Result<(), i32>;
    /// `mkdir`.
    fn mkdir(&self, path: &Path, mode: u32) -> Result<(), i32>;
    /// `mkfifo`: a simulated named pipe.
    fn mkfifo(&self, path: &Path, mode: u32) -> Result<(), i32>;
    /// `rmdir`.
    fn rmdir(&self, path: &Path) -> Result<(), i32>;
    /// `unlink`.
    fn unlink(&self, path: &Path) -> Result<(), i32>;
    /// `rename`.
    fn rename(&self, from: &Path, to: &Path) -> Result<(), i32>;
    /// `link`.
    fn link(&self, from: &Path, to: &Path) -> Result<(), i32>;
    /// `symlink`: `link` points at `target`.
    fn symlink(&self, target: &Path, link: &Path) -> Result<(), i32>;
    /// `readlink`.
    fn readlink(&self, path: &Path) -> Result<PathBuf, i32>;
    /// `realpath`.
    fn realpath(&self, path: &Path) -> Result<PathBuf, i32>;
    /// The entries of a simulated directory descriptor: name, inode and
    /// `d_type`.
    fn list(&self, fd: i32) -> Result<Vec<(OsString, u64, u8)>, i32>;
    /// `dup`: a new descriptor sharing the open file (and its position).
    fn dup(&self, fd: i32) -> Result<i32, i32>;
}

/// The attributes of a simulated file, to be turned into a real
/// `std::fs::Metadata` by the interposition's `fabricate_metadata`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FakeStat {
    /// `S_IFREG`, `S_IFDIR` or `S_IFLNK`, with the permission bits.
    pub mode: u32,
    /// Length in bytes.
    pub size: u64,
    /// Inode number.
    pub ino: u64,
    /// Device number the simulated disk reports (one per host).
    pub dev: u64,
    /// Names that link to the inode.
    pub nlink: u32,
    /// Owner and group (the simulated process's).
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Times in ns since the Unix epoch.
    pub atime_ns: u64,
    /// Last data change.
    pub mtime_ns: u64,
    /// Last attribute change.
    pub ctime_ns: u64,
    /// Creation.
    pub btime_ns: u64,
}

static HOOKS: OnceLock<&'static dyn FileHooks> = OnceLock::new();
/// Simulated descriptors open in the process: while zero, descriptor calls
/// pass straight through without asking the hooks.
static FAKE_FDS: AtomicUsize = AtomicUsize::new(0);

pub use sim_runtime::outside::outside;

#[cfg(simulation)]
fn is_outside() -> bool {
    sim_runtime::outside::is_outside()
}

/// Installs the simulated disk's answers (once per process; later calls
/// are ignored).
pub fn set_file_hooks(hooks: &'static dyn FileHooks) {
    let _ = HOOKS.set(hooks);
}

/// Counts a simulated descriptor opened (`true`) or closed.
pub fn count_fake_fd(opened: bool) {
    if opened {
        FAKE_FDS.fetch_add(1, Ordering::Relaxed);
    } else {
        FAKE_FDS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Lexically normalises an absolute path: no `.`, no `..`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

#[cfg(simulation)]
pub use overrides::*;

#[cfg(simulation)]
mod overrides {
    use super::*;
    use std::ffi::{CStr, OsStr};
    use std::os::unix::ffi::OsStrExt;
    use std::sync::atomic::AtomicUsize;

    fn hooks() -> Option<&'static dyn FileHooks> {
        // Only inside a run: outside, every call is the real one.
        sim_runtime::context::current_id()?;
        if is_outside() {
            return None;
        }
        HOOKS.get().copied()
    }

    fn fd_hooks(fd: i32) -> Option<&'static dyn FileHooks> {
        if FAKE_FDS.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let hooks = HOOKS.get().copied()?;
        hooks.is_fake(fd).then_some(hooks)
    }

    fn set_errno(code: i32) {
        // SAFETY: errno is thread-local and always writable.
        unsafe { *libc::__errno_location() = code };
    }

    fn fail<T: From<i8>>(code: i32) -> T {
        set_errno(code);
        T::from(-1)
    }

    /// The absolute, normalized path a path argument names.
    ///
    /// # Safety
    /// `path` is NUL-terminated or null.
    unsafe fn absolute(
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
    unsafe fn claimed(
        hooks: &dyn FileHooks,
        dirfd: i32,
        path: *const libc::c_char,
    ) -> Option<PathBuf> {
        let absolute = unsafe { absolute(hooks, dirfd, path) }?;
        hooks.claims(&absolute).then_some(absolute)
    }

    /// Where a path argument of a change points on the simulated disk: the
    /// disk takes every change a run makes (see [`FileHooks::takes_change`]).
    ///
    /// # Safety
    /// `path` is NUL-terminated or null.
    unsafe fn claimed_change(
        hooks: &dyn FileHooks,
        dirfd: i32,
        path: *const libc::c_char,
    ) -> Option<PathBuf> {
        let absolute = unsafe { absolute(hooks, dirfd, path) }?;
        (hooks.claims(&absolute) || hooks.takes_change(&absolute)).then_some(absolute)
    }

    /// A change to the real filesystem during a run: refused, named.
    ///
    /// # Safety
    /// `path` is NUL-terminated or null.
    unsafe fn refuse_real_change(call: &str, path: *const libc::c_char) -> i32 {
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

    /// Resolves the next definition of `name` (libc's), cached in `slot`.
    fn next(slot: &AtomicUsize, name: &CStr) -> usize {
        let mut f = slot.load(Ordering::Relaxed);
        if f == 0 {
            // SAFETY: dlsym with a valid name.
            f = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) } as usize;
            assert!(f != 0, "sim: libc has no {name:?}");
            slot.store(f, Ordering::Relaxed);
        }
        f
    }

    macro_rules! real {
        ($slot:ident, $name:literal, fn($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty) => {{
            static $slot: AtomicUsize = AtomicUsize::new(0);
            let f = next(&$slot, $name);
            // SAFETY: libc's function of that name has this signature.
            let f: unsafe extern "C" fn($($ty),*) -> $ret = unsafe { std::mem::transmute(f) };
            // SAFETY: the caller's arguments, passed on.
            unsafe { f($($arg),*) }
        }};
    }

    unsafe fn real_write(fd: i32, buf: *const libc::c_void, n: usize) -> isize {
        real!(
            WRITE,
            c"write",
            fn(fd: i32, buf: *const libc::c_void, n: usize) -> isize
        )
    }

    fn fill_stat64(s: &FakeStat, out: *mut libc::stat64) {
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

    fn to_c_int(r: Result<(), i32>) -> libc::c_int {
        match r {
            Ok(()) => 0,
            Err(e) => fail(e),
        }
    }

    // ----- open and close -------------------------------------------------

    const WRITES: i32 =
        libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC | libc::O_APPEND;

    unsafe fn open_common(
        dirfd: i32,
        path: *const libc::c_char,
        flags: i32,
        mode: u32,
    ) -> Option<i32> {
        let hooks = hooks()?;
        match unsafe { claimed(hooks, dirfd, path) } {
            Some(p) => Some(hooks.open(&p, flags, mode).unwrap_or_else(fail)),
            None if flags & WRITES != 0 && !writable_real(path) => {
                Some(match unsafe { claimed_change(hooks, dirfd, path) } {
                    Some(p) => hooks.open(&p, flags, mode).unwrap_or_else(fail),
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
        ($name:ident, $cname:literal, $slot:ident) => {
            #[doc = concat!("`", stringify!($name), "`.")]
            ///
            /// # Safety
            /// libc's contract (the mode is read only with `O_CREAT`/`O_TMPFILE`).
            #[no_mangle]
            pub unsafe extern "C" fn $name(
                path: *const libc::c_char,
                flags: i32,
                mode: u32,
            ) -> i32 {
                if let Some(fd) = unsafe { open_common(libc::AT_FDCWD, path, flags, mode) } {
                    return fd;
                }
                real!(
                    $slot,
                    $cname,
                    fn(path: *const libc::c_char, flags: i32, mode: u32) -> i32
                )
            }
        };
        (at $name:ident, $cname:literal, $slot:ident) => {
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
                if let Some(fd) = unsafe { open_common(dirfd, path, flags, mode) } {
                    return fd;
                }
                real!(
                    $slot,
                    $cname,
                    fn(dirfd: i32, path: *const libc::c_char, flags: i32, mode: u32) -> i32
                )
            }
        };
    }

    // ----- blocking calls on real sockets (a simulated thread's escape) ----

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
            RECV,
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
            RECVFROM,
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
            ACCEPT4,
            c"accept4",
            fn(fd: i32, addr: *mut libc::sockaddr, len: *mut libc::socklen_t, flags: i32) -> i32
        )
    }

    open_family!(open, c"open", OPEN);
    open_family!(open64, c"open64", OPEN64);
    open_family!(at openat, c"openat", OPENAT);
    open_family!(at openat64, c"openat64", OPENAT64);

    /// `close`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn close(fd: i32) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            return to_c_int(hooks.close(fd));
        }
        real!(CLOSE, c"close", fn(fd: i32) -> i32)
    }

    /// `dup`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn dup(fd: i32) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            return hooks.dup(fd).unwrap_or_else(fail);
        }
        real!(DUP, c"dup", fn(fd: i32) -> i32)
    }

    /// `fcntl`: on a simulated descriptor, `F_DUPFD(_CLOEXEC)` duplicates it
    /// and the flag queries answer plainly.
    ///
    /// # Safety
    /// libc's contract (the third argument is read as an integer).
    #[no_mangle]
    pub unsafe extern "C" fn fcntl(fd: i32, cmd: i32, arg: libc::c_long) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            return match cmd {
                libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => hooks.dup(fd).unwrap_or_else(fail),
                libc::F_GETFD => libc::FD_CLOEXEC,
                libc::F_SETFD | libc::F_SETFL => 0,
                libc::F_GETFL => libc::O_RDWR,
                _ => fail(libc::EINVAL),
            };
        }
        real!(
            FCNTL,
            c"fcntl",
            fn(fd: i32, cmd: i32, arg: libc::c_long) -> i32
        )
    }

    // ----- data -----------------------------------------------------------

    fn io_result(r: Result<usize, i32>) -> isize {
        match r {
            Ok(n) => n as isize,
            Err(e) => fail(e),
        }
    }

    /// `read`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn read(fd: i32, buf: *mut libc::c_void, n: usize) -> isize {
        if let Some(hooks) = fd_hooks(fd) {
            // SAFETY: the caller's buffer.
            let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
            return io_result(hooks.read(fd, buf, None));
        }
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        if let Some(errno) = crate::threads::refuse_real_block(fd, "read") {
            return fail(errno);
        }
        real!(
            READ,
            c"read",
            fn(fd: i32, buf: *mut libc::c_void, n: usize) -> isize
        )
    }

    /// `pread64`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn pread64(fd: i32, buf: *mut libc::c_void, n: usize, at: i64) -> isize {
        if let Some(hooks) = fd_hooks(fd) {
            // SAFETY: the caller's buffer.
            let buf = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
            return io_result(hooks.read(fd, buf, Some(at as u64)));
        }
        real!(
            PREAD64,
            c"pread64",
            fn(fd: i32, buf: *mut libc::c_void, n: usize, at: i64) -> isize
        )
    }

    /// `write`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn write(fd: i32, buf: *const libc::c_void, n: usize) -> isize {
        if let Some(hooks) = fd_hooks(fd) {
            // SAFETY: the caller's buffer.
            let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
            return io_result(hooks.write(fd, buf, None));
        }
        unsafe { real_write(fd, buf, n) }
    }

    /// `pwrite64`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn pwrite64(
        fd: i32,
        buf: *const libc::c_void,
        n: usize,
        at: i64,
    ) -> isize {
        if let Some(hooks) = fd_hooks(fd) {
            // SAFETY: the caller's buffer.
            let buf = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), n) };
            return io_result(hooks.write(fd, buf, Some(at as u64)));
        }
        real!(
            PWRITE64,
            c"pwrite64",
            fn(fd: i32, buf: *const libc::c_void, n: usize, at: i64) -> isize
        )
    }

    /// `writev`: a simulated descriptor takes the buffers one by one.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn writev(fd: i32, iov: *const libc::iovec, count: i32) -> isize {
        if let Some(hooks) = fd_hooks(fd) {
            let mut total = 0usize;
            for i in 0..count.max(0) as usize {
                // SAFETY: the caller's iovec array of `count` entries.
                let v = unsafe { &*iov.add(i) };
                let buf = unsafe { std::slice::from_raw_parts(v.iov_base.cast::<u8>(), v.iov_len) };
                match hooks.write(fd, buf, None) {
                    Ok(n) => {
                        total += n;
                        if n < buf.len() {
                            break;
                        }
                    }
                    Err(e) if total == 0 => return fail(e),
                    Err(_) => break,
                }
            }
            return total as isize;
        }
        real!(
            WRITEV,
            c"writev",
            fn(fd: i32, iov: *const libc::iovec, count: i32) -> isize
        )
    }

    /// `lseek64`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn lseek64(fd: i32, offset: i64, whence: i32) -> i64 {
        if let Some(hooks) = fd_hooks(fd) {
            return match hooks.seek(fd, offset, whence) {
                Ok(pos) => pos as i64,
                Err(e) => fail(e),
            };
        }
        real!(
            LSEEK64,
            c"lseek64",
            fn(fd: i32, offset: i64, whence: i32) -> i64
        )
    }

    /// `fsync`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn fsync(fd: i32) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            return to_c_int(hooks.fsync(fd));
        }
        real!(FSYNC, c"fsync", fn(fd: i32) -> i32)
    }

    /// `fdatasync`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn fdatasync(fd: i32) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            return to_c_int(hooks.fsync(fd));
        }
        real!(FDATASYNC, c"fdatasync", fn(fd: i32) -> i32)
    }

    /// `ftruncate64`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn ftruncate64(fd: i32, len: i64) -> i32 {
        if let Some(hooks) = fd_hooks(fd) {
            if len < 0 {
                return fail(libc::EINVAL);
            }
            return to_c_int(hooks.ftruncate(fd, len as u64));
        }
        real!(FTRUNCATE64, c"ftruncate64", fn(fd: i32, len: i64) -> i32)
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
        real!(FCHMOD, c"fchmod", fn(fd: i32, mode: libc::mode_t) -> i32)
    }

    /// Defines a kernel copy between two descriptors (`copy_file_range`,
    /// `splice`) that refuses simulated descriptors with `errno`: std then
    /// copies with reads and writes.
    macro_rules! no_kernel_copy {
        ($name:ident, $cname:literal, $slot:ident, $errno:expr) => {
            #[doc = concat!("`", stringify!($name), "`: never between simulated and other files.")]
            ///
            /// # Safety
            /// libc's contract.
            #[no_mangle]
            pub unsafe extern "C" fn $name(
                fd_in: i32,
                off_in: *mut i64,
                fd_out: i32,
                off_out: *mut i64,
                len: usize,
                flags: u32,
            ) -> isize {
                if fd_hooks(fd_in).is_some() || fd_hooks(fd_out).is_some() {
                    return fail($errno);
                }
                real!(
                    $slot,
                    $cname,
                    fn(
                        fd_in: i32,
                        off_in: *mut i64,
                        fd_out: i32,
                        off_out: *mut i64,
                        len: usize,
                        flags: u32,
                    ) -> isize
                )
            }
        };
    }

    no_kernel_copy!(
        copy_file_range,
        c"copy_file_range",
        COPY_FILE_RANGE,
        libc::EXDEV
    );
    no_kernel_copy!(splice, c"splice", SPLICE, libc::EINVAL);

    /// `sendfile64`: as `copy_file_range`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn sendfile64(
        out_fd: i32,
        in_fd: i32,
        offset: *mut i64,
        count: usize,
    ) -> isize {
        if fd_hooks(in_fd).is_some() || fd_hooks(out_fd).is_some() {
            return fail(libc::EINVAL);
        }
        real!(
            SENDFILE64,
            c"sendfile64",
            fn(out_fd: i32, in_fd: i32, offset: *mut i64, count: usize) -> isize
        )
    }

    // ----- attributes -------------------------------------------------------

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
        real!(
            FSTAT64,
            c"fstat64",
            fn(fd: i32, buf: *mut libc::stat64) -> i32
        )
    }

    unsafe fn stat_common(
        dirfd: i32,
        path: *const libc::c_char,
        buf: *mut libc::stat64,
        follow: bool,
    ) -> Option<i32> {
        let hooks = hooks()?;
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
        if let Some(r) = unsafe { stat_common(libc::AT_FDCWD, path, buf, true) } {
            return r;
        }
        real!(
            STAT64,
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
        if let Some(r) = unsafe { stat_common(libc::AT_FDCWD, path, buf, false) } {
            return r;
        }
        real!(
            LSTAT64,
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
        let empty = !path.is_null() && unsafe { *path } == 0;
        if empty && flags & libc::AT_EMPTY_PATH != 0 {
            if fd_hooks(dirfd).is_some() {
                return unsafe { fstat64(dirfd, buf) };
            }
        } else if let Some(r) =
            unsafe { stat_common(dirfd, path, buf, flags & libc::AT_SYMLINK_NOFOLLOW == 0) }
        {
            return r;
        }
        real!(
            FSTATAT64,
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
        let empty = !path.is_null() && unsafe { *path } == 0;
        if empty && flags & libc::AT_EMPTY_PATH != 0 {
            let hooks = fd_hooks(dirfd)?;
            return Some(hooks.fstat(dirfd));
        }
        let hooks = hooks()?;
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
            match unsafe { claimed_change(hooks, libc::AT_FDCWD, path) } {
                Some(p) => return to_c_int(hooks.chmod(&p, mode)),
                None => return fail(unsafe { refuse_real_change("chmod", path) }),
            }
        }
        real!(
            CHMOD,
            c"chmod",
            fn(path: *const libc::c_char, mode: libc::mode_t) -> i32
        )
    }

    // ----- names ------------------------------------------------------------

    /// Runs a one-path change on the simulated disk during a run (or
    /// refuses one the disk does not take), or passes it on outside runs.
    unsafe fn path_change(
        call: &str,
        dirfd: i32,
        path: *const libc::c_char,
        op: impl FnOnce(&dyn FileHooks, &Path) -> Result<(), i32>,
    ) -> Option<i32> {
        let hooks = hooks()?;
        Some(match unsafe { claimed_change(hooks, dirfd, path) } {
            Some(p) => to_c_int(op(hooks, &p)),
            None => fail(unsafe { refuse_real_change(call, path) }),
        })
    }

    /// `mkdir`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn mkdir(path: *const libc::c_char, mode: libc::mode_t) -> i32 {
        if let Some(r) =
            unsafe { path_change("mkdir", libc::AT_FDCWD, path, |h, p| h.mkdir(p, mode)) }
        {
            return r;
        }
        real!(
            MKDIR,
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
            unsafe { path_change("mkfifo", libc::AT_FDCWD, path, |h, p| h.mkfifo(p, mode)) }
        {
            return r;
        }
        real!(
            MKFIFO,
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
        if let Some(r) = unsafe { path_change("mkfifoat", dirfd, path, |h, p| h.mkfifo(p, mode)) } {
            return r;
        }
        real!(
            MKFIFOAT,
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
        if let Some(r) = unsafe { path_change("rmdir", libc::AT_FDCWD, path, |h, p| h.rmdir(p)) } {
            return r;
        }
        real!(RMDIR, c"rmdir", fn(path: *const libc::c_char) -> i32)
    }

    /// `unlink`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn unlink(path: *const libc::c_char) -> i32 {
        if let Some(r) = unsafe { path_change("unlink", libc::AT_FDCWD, path, |h, p| h.unlink(p)) }
        {
            return r;
        }
        real!(UNLINK, c"unlink", fn(path: *const libc::c_char) -> i32)
    }

    /// `unlinkat`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn unlinkat(dirfd: i32, path: *const libc::c_char, flags: i32) -> i32 {
        let remove_dir = flags & libc::AT_REMOVEDIR != 0;
        let op = |h: &dyn FileHooks, p: &Path| if remove_dir { h.rmdir(p) } else { h.unlink(p) };
        if let Some(r) = unsafe { path_change("unlinkat", dirfd, path, op) } {
            return r;
        }
        real!(
            UNLINKAT,
            c"unlinkat",
            fn(dirfd: i32, path: *const libc::c_char, flags: i32) -> i32
        )
    }

    /// Runs a two-path change: on the simulated disk during a run (refused
    /// if the disk does not take either path), real outside runs.
    unsafe fn two_path_change(
        call: &str,
        from: *const libc::c_char,
        to: *const libc::c_char,
        op: impl FnOnce(&dyn FileHooks, &Path, &Path) -> Result<(), i32>,
    ) -> Option<i32> {
        let hooks = hooks()?;
        let a = unsafe { claimed_change(hooks, libc::AT_FDCWD, from) };
        let b = unsafe { claimed_change(hooks, libc::AT_FDCWD, to) };
        Some(match (a, b) {
            (Some(a), Some(b)) => to_c_int(op(hooks, &a, &b)),
            (Some(_), None) => fail(unsafe { refuse_real_change(call, to) }),
            _ => fail(unsafe { refuse_real_change(call, from) }),
        })
    }

    /// `rename`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn rename(from: *const libc::c_char, to: *const libc::c_char) -> i32 {
        if let Some(r) = unsafe { two_path_change("rename", from, to, |h, a, b| h.rename(a, b)) } {
            return r;
        }
        real!(
            RENAME,
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
            if let Some(r) = unsafe { two_path_change("link", from, to, |h, a, b| h.link(a, b)) } {
                return r;
            }
        }
        real!(
            LINKAT,
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
    pub unsafe extern "C" fn symlink(
        target: *const libc::c_char,
        link: *const libc::c_char,
    ) -> i32 {
        let op = |h: &dyn FileHooks, p: &Path| {
            // SAFETY: the caller's contract.
            let target = Path::new(OsStr::from_bytes(
                unsafe { CStr::from_ptr(target) }.to_bytes(),
            ));
            h.symlink(target, p)
        };
        if let Some(r) = unsafe { path_change("symlink", libc::AT_FDCWD, link, op) } {
            return r;
        }
        real!(
            SYMLINK,
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
            if let Some(p) = unsafe { claimed(hooks, libc::AT_FDCWD, path) } {
                return match hooks.readlink(&p) {
                    Ok(target) => {
                        let bytes = target.as_os_str().as_bytes();
                        let n = bytes.len().min(size);
                        // SAFETY: the caller's buffer of `size` bytes.
                        unsafe {
                            std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast::<u8>(), n)
                        };
                        n as isize
                    }
                    Err(e) => fail(e),
                };
            }
        }
        real!(
            READLINK,
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
            REALPATH,
            c"realpath",
            fn(path: *const libc::c_char, resolved: *mut libc::c_char) -> *mut libc::c_char
        )
    }

    // ----- directories ------------------------------------------------------

    /// A `DIR` of a simulated directory: its entries, read in order. The
    /// address is what `readdir64` gets back; `FAKE_DIRS` knows it.
    struct FakeDir {
        fd: i32,
        entries: Vec<(OsString, u64, u8)>,
        next: usize,
        current: libc::dirent64,
    }

    thread_local! {
        static FAKE_DIRS: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    fn is_fake_dir(dirp: *mut libc::DIR) -> bool {
        FAKE_DIRS
            .try_with(|d| d.borrow().contains(&(dirp as usize)))
            .unwrap_or(false)
    }

    fn fake_dir(hooks: &dyn FileHooks, fd: i32) -> *mut libc::DIR {
        match hooks.list(fd) {
            Ok(entries) => {
                let dir = Box::new(FakeDir {
                    fd,
                    entries,
                    next: 0,
                    // SAFETY: a plain C struct, valid when zeroed.
                    current: unsafe { std::mem::zeroed() },
                });
                let ptr = Box::into_raw(dir) as usize;
                FAKE_DIRS.with(|d| d.borrow_mut().push(ptr));
                ptr as *mut libc::DIR
            }
            Err(e) => {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    }

    /// `opendir`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn opendir(path: *const libc::c_char) -> *mut libc::DIR {
        if let Some(hooks) = hooks() {
            if let Some(p) = unsafe { claimed(hooks, libc::AT_FDCWD, path) } {
                return match hooks.open(&p, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                    Ok(fd) => fake_dir(hooks, fd),
                    Err(e) => {
                        set_errno(e);
                        std::ptr::null_mut()
                    }
                };
            }
        }
        real!(
            OPENDIR,
            c"opendir",
            fn(path: *const libc::c_char) -> *mut libc::DIR
        )
    }

    /// `fdopendir`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn fdopendir(fd: i32) -> *mut libc::DIR {
        if let Some(hooks) = fd_hooks(fd) {
            return fake_dir(hooks, fd);
        }
        real!(FDOPENDIR, c"fdopendir", fn(fd: i32) -> *mut libc::DIR)
    }

    /// `readdir64`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn readdir64(dirp: *mut libc::DIR) -> *mut libc::dirent64 {
        if is_fake_dir(dirp) {
            // SAFETY: a pointer `fake_dir` made and `closedir` not yet took.
            let dir = unsafe { &mut *(dirp as *mut FakeDir) };
            let Some((name, ino, kind)) = dir.entries.get(dir.next) else {
                return std::ptr::null_mut();
            };
            dir.next += 1;
            let bytes = name.as_bytes();
            let n = bytes.len().min(dir.current.d_name.len() - 1);
            dir.current.d_ino = *ino;
            dir.current.d_off = dir.next as i64;
            dir.current.d_reclen = std::mem::size_of::<libc::dirent64>() as u16;
            dir.current.d_type = *kind;
            for (slot, byte) in dir.current.d_name.iter_mut().zip(bytes[..n].iter()) {
                *slot = *byte as libc::c_char;
            }
            dir.current.d_name[n] = 0;
            return &mut dir.current;
        }
        real!(
            READDIR64,
            c"readdir64",
            fn(dirp: *mut libc::DIR) -> *mut libc::dirent64
        )
    }

    /// `closedir`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn closedir(dirp: *mut libc::DIR) -> i32 {
        if is_fake_dir(dirp) {
            FAKE_DIRS.with(|d| d.borrow_mut().retain(|p| *p != dirp as usize));
            // SAFETY: made by `fake_dir` with Box::into_raw.
            let dir = unsafe { Box::from_raw(dirp as *mut FakeDir) };
            return unsafe { close(dir.fd) };
        }
        real!(CLOSEDIR, c"closedir", fn(dirp: *mut libc::DIR) -> i32)
    }

    /// `dirfd`.
    ///
    /// # Safety
    /// libc's contract.
    #[no_mangle]
    pub unsafe extern "C" fn dirfd(dirp: *mut libc::DIR) -> i32 {
        if is_fake_dir(dirp) {
            // SAFETY: a live fake DIR.
            return unsafe { &*(dirp as *mut FakeDir) }.fd;
        }
        real!(DIRFD, c"dirfd", fn(dirp: *mut libc::DIR) -> i32)
    }
}
