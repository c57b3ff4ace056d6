//! Real `std::fs::Metadata` values for simulated files: [`fabricate_metadata`]
//! and the `statx` that answers it.

pub use crate::files::FakeStat;

/// The path `fabricate_metadata` asks std to stat; the `statx` override
/// answers it from a thread-local instead of the disk. A control character
/// keeps it away from any real path.
#[cfg(simulation)]
const FAKE_STAT_PATH: &str = "/\u{1}sim-fs-stat";

#[cfg(simulation)]
thread_local! {
    static FAKE_STAT: std::cell::Cell<Option<FakeStat>> = const { std::cell::Cell::new(None) };
}

/// A `std::fs::Metadata` that reports `stat`. std has no constructor for
/// one, so this asks std to stat a reserved path and answers that `statx`
/// call itself (simulation builds only).
///
/// # Panics
/// If std did not ask `statx` (a platform where it stats another way): the
/// simulated filesystem cannot report metadata there, and says so.
#[cfg(simulation)]
pub fn fabricate_metadata(stat: FakeStat) -> std::fs::Metadata {
    FAKE_STAT.with(|slot| slot.set(Some(stat)));
    let result = std::fs::symlink_metadata(FAKE_STAT_PATH);
    let leftover = FAKE_STAT.with(|slot| slot.take());
    match result {
        Ok(metadata) if leftover.is_none() => metadata,
        _ => panic!(
            "sim: could not build a std::fs::Metadata for a simulated file: std did not call \
             the interposed statx. Simulated tokio::fs needs Linux with glibc's statx."
        ),
    }
}

/// Outside simulation builds nothing answers the reserved path: simulated
/// files exist only in simulations.
///
/// # Panics
/// Always, saying so.
#[cfg(not(simulation))]
pub fn fabricate_metadata(stat: FakeStat) -> std::fs::Metadata {
    panic!(
        "sim: metadata of a simulated file (inode {}) outside a simulation build: build with \
         `cargo sim`",
        stat.ino
    )
}

#[cfg(simulation)]
pub use overrides::statx;

#[cfg(simulation)]
mod overrides {
    use super::{FAKE_STAT, FAKE_STAT_PATH};

    fn timestamp(ns: u64) -> libc::statx_timestamp {
        // SAFETY: a plain C struct, valid when zeroed.
        let mut t: libc::statx_timestamp = unsafe { std::mem::zeroed() };
        t.tv_sec = (ns / 1_000_000_000) as i64;
        t.tv_nsec = (ns % 1_000_000_000) as u32;
        t
    }

    /// `statx`: answers the reserved path from the thread-local a
    /// `fabricate_metadata` call put there; everything else goes to the
    /// kernel.
    ///
    /// # Safety
    /// libc's contract for `statx`.
    #[no_mangle]
    pub unsafe extern "C" fn statx(
        dirfd: libc::c_int,
        path: *const libc::c_char,
        flags: libc::c_int,
        mask: libc::c_uint,
        buf: *mut libc::statx,
    ) -> libc::c_int {
        if !path.is_null() && !buf.is_null() {
            // SAFETY: libc's contract: a NUL-terminated path.
            let name = unsafe { std::ffi::CStr::from_ptr(path) };
            if name.to_bytes() == FAKE_STAT_PATH.as_bytes() {
                if let Some(s) = FAKE_STAT.with(|slot| slot.take()) {
                    // SAFETY: a plain C struct, valid when zeroed.
                    let mut out: libc::statx = unsafe { std::mem::zeroed() };
                    out.stx_mask = libc::STATX_BASIC_STATS | libc::STATX_BTIME;
                    out.stx_blksize = 4096;
                    out.stx_nlink = s.nlink;
                    out.stx_uid = s.uid;
                    out.stx_gid = s.gid;
                    out.stx_mode = s.mode as u16;
                    out.stx_ino = s.ino;
                    out.stx_size = s.size;
                    out.stx_blocks = s.size.div_ceil(512);
                    out.stx_atime = timestamp(s.atime_ns);
                    out.stx_btime = timestamp(s.btime_ns);
                    out.stx_ctime = timestamp(s.ctime_ns);
                    out.stx_mtime = timestamp(s.mtime_ns);
                    out.stx_dev_major = (s.dev >> 32) as u32;
                    out.stx_dev_minor = s.dev as u32;
                    // SAFETY: the caller's buffer.
                    unsafe { *buf = out };
                    return 0;
                }
            }
        }
        // A simulated file (std::fs under the temporary directory).
        // SAFETY: the caller's NUL-terminated path.
        if let Some(result) = unsafe { crate::files::statx_simulated(dirfd, path, flags) } {
            return match result {
                Ok(s) => {
                    FAKE_STAT.with(|slot| slot.set(Some(s)));
                    let reserved = std::ffi::CString::new(FAKE_STAT_PATH).expect("no NUL");
                    // SAFETY: the reserved path, answered from the slot
                    // into the caller's buffer.
                    unsafe { statx(libc::AT_FDCWD, reserved.as_ptr(), flags, mask, buf) }
                }
                Err(e) => {
                    // SAFETY: errno is thread-local.
                    unsafe { *libc::__errno_location() = e };
                    -1
                }
            };
        }
        // SAFETY: the same arguments, to the kernel.
        unsafe { libc::syscall(libc::SYS_statx, dirfd, path, flags, mask, buf) as libc::c_int }
    }
}
