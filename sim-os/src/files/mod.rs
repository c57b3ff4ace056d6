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
    /// `fcntl(F_GETFL)`: the access mode, `O_APPEND`, `O_NONBLOCK`.
    fn status_flags(&self, fd: i32) -> Result<i32, i32>;
    /// `fcntl(F_SETFL)`: `O_APPEND` and `O_NONBLOCK` change.
    fn set_status_flags(&self, fd: i32, flags: i32) -> Result<(), i32>;
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
mod attributes;
#[cfg(simulation)]
mod common;
#[cfg(simulation)]
mod data;
#[cfg(simulation)]
mod directories;
#[cfg(simulation)]
mod names;
#[cfg(simulation)]
mod open;

#[cfg(simulation)]
pub use {attributes::*, data::*, directories::*, names::*, open::*};
