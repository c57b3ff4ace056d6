//! `std::fs` on the simulated disk: the answers to the libc calls that
//! `sim_os::files` interposes, for the scratch area (`scratch.rs`) and the
//! paths a run changed elsewhere. See `sim_os::files` for the rule; this
//! module keeps the simulated descriptors.

use crate::disk::{Handle, Kind, OpenFlags};
use crate::with_disk_on;
use sim_os::files::FileHooks;
use sim_os::interpose::FakeStat;
use sim_os::reserved::{release_fd, reserve_fd};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One simulated descriptor. `dup`s share the position.
#[derive(Clone)]
struct Descriptor {
    node: u32,
    handle: Handle,
    pos: Rc<Cell<u64>>,
    path: PathBuf,
}

thread_local! {
    static DESCRIPTORS: RefCell<BTreeMap<i32, Descriptor>> = const { RefCell::new(BTreeMap::new()) };
}

fn errno_of(e: io::Error) -> i32 {
    e.raw_os_error().unwrap_or(match e.kind() {
        io::ErrorKind::Unsupported => libc::EOPNOTSUPP,
        _ => libc::EIO,
    })
}

fn register(descriptor: Descriptor) -> Result<i32, i32> {
    let fd = reserve_fd()?;
    DESCRIPTORS.with(|d| d.borrow_mut().insert(fd, descriptor));
    sim_os::files::count_fake_fd(true);
    Ok(fd)
}

fn descriptor(fd: i32) -> Result<Descriptor, i32> {
    DESCRIPTORS
        .try_with(|d| d.borrow().get(&fd).cloned())
        .ok()
        .flatten()
        .ok_or(libc::EBADF)
}

fn on_disk<R>(node: u32, f: impl FnOnce(&mut crate::Disk) -> io::Result<R>) -> Result<R, i32> {
    with_disk_on(node, f).map_err(errno_of)
}

fn here<R>(f: impl FnOnce(&mut crate::Disk) -> io::Result<R>) -> Result<R, i32> {
    on_disk(crate::current_node(), f)
}

fn kind_bits(kind: Kind) -> u8 {
    match kind {
        Kind::File => libc::DT_REG,
        Kind::Dir => libc::DT_DIR,
        Kind::Symlink => libc::DT_LNK,
        Kind::Fifo => libc::DT_FIFO,
        Kind::Socket => libc::DT_SOCK,
    }
}

/// The hooks `sim_os::files` calls.
pub(crate) struct StdFs;

impl FileHooks for StdFs {
    fn claims(&self, path: &Path) -> bool {
        crate::scratch::is_scratch(path) || crate::shadowed(path)
    }

    fn takes_change(&self, path: &Path) -> bool {
        // The kernel's own trees are no files to simulate: a change there
        // stays refused.
        !["/proc", "/sys", "/dev"]
            .iter()
            .any(|kernel| path.starts_with(kernel))
    }

    fn dir_path(&self, fd: i32) -> Option<PathBuf> {
        descriptor(fd).ok().map(|d| d.path)
    }

    fn is_fake(&self, fd: i32) -> bool {
        DESCRIPTORS
            .try_with(|d| d.borrow().contains_key(&fd))
            .unwrap_or(false)
    }

    fn open(&self, path: &Path, flags: i32, mode: u32) -> Result<i32, i32> {
        let access = flags & libc::O_ACCMODE;
        let create = flags & libc::O_CREAT != 0;
        let exclusive = flags & libc::O_EXCL != 0;
        let open_flags = OpenFlags {
            read: access == libc::O_RDONLY || access == libc::O_RDWR,
            write: access == libc::O_WRONLY || access == libc::O_RDWR,
            append: flags & libc::O_APPEND != 0,
            truncate: flags & libc::O_TRUNC != 0,
            create: create && !exclusive,
            create_new: create && exclusive,
            mode,
            custom_flags: flags
                & (libc::O_NOFOLLOW
                    | libc::O_DIRECTORY
                    | libc::O_SYNC
                    | libc::O_DSYNC
                    | libc::O_TMPFILE
                    | libc::O_PATH),
        };
        let node = crate::current_node();
        let handle = on_disk(node, |disk| disk.open(path, &open_flags))?;
        register(Descriptor {
            node,
            handle,
            pos: Rc::new(Cell::new(0)),
            path: path.to_path_buf(),
        })
        .inspect_err(|_| with_disk_on(node, |disk| disk.close(&handle)))
    }

    fn close(&self, fd: i32) -> Result<(), i32> {
        let d = DESCRIPTORS
            .with(|t| t.borrow_mut().remove(&fd))
            .ok_or(libc::EBADF)?;
        sim_os::files::count_fake_fd(false);
        release_fd(fd);
        // The disk is gone with its runtime: nothing left to close.
        if sim_runtime::context::current_id().is_some() {
            with_disk_on(d.node, |disk| disk.close(&d.handle));
        }
        Ok(())
    }

    fn read(&self, fd: i32, buf: &mut [u8], at: Option<u64>) -> Result<usize, i32> {
        let d = descriptor(fd)?;
        let offset = at.unwrap_or(d.pos.get());
        let n = on_disk(d.node, |disk| disk.read_at(&d.handle, offset, buf))?;
        if at.is_none() {
            d.pos.set(offset + n as u64);
        }
        Ok(n)
    }

    fn write(&self, fd: i32, buf: &[u8], at: Option<u64>) -> Result<usize, i32> {
        let d = descriptor(fd)?;
        let offset = at.unwrap_or(d.pos.get());
        let (n, next) = on_disk(d.node, |disk| disk.write_at(&d.handle, offset, buf))?;
        if at.is_none() {
            d.pos.set(next);
        }
        Ok(n)
    }

    fn seek(&self, fd: i32, offset: i64, whence: i32) -> Result<u64, i32> {
        let d = descriptor(fd)?;
        let base = match whence {
            libc::SEEK_SET => 0,
            libc::SEEK_CUR => d.pos.get(),
            libc::SEEK_END => on_disk(d.node, |disk| disk.len(&d.handle))?,
            _ => return Err(libc::EINVAL),
        };
        let target = base.checked_add_signed(offset).ok_or(libc::EINVAL)?;
        d.pos.set(target);
        Ok(target)
    }

    fn fstat(&self, fd: i32) -> Result<FakeStat, i32> {
        let d = descriptor(fd)?;
        on_disk(d.node, |disk| disk.stat(&d.handle))
    }

    fn stat(&self, path: &Path, follow: bool) -> Result<FakeStat, i32> {
        here(|disk| disk.stat_path(path, follow))
    }

    fn fsync(&self, fd: i32) -> Result<(), i32> {
        let d = descriptor(fd)?;
        on_disk(d.node, |disk| disk.sync(&d.handle))
    }

    fn ftruncate(&self, fd: i32, len: u64) -> Result<(), i32> {
        let d = descriptor(fd)?;
        on_disk(d.node, |disk| disk.set_len(&d.handle, len))
    }

    fn fchmod(&self, fd: i32, mode: u32) -> Result<(), i32> {
        let d = descriptor(fd)?;
        on_disk(d.node, |disk| disk.set_mode(&d.handle, mode))
    }

    fn chmod(&self, path: &Path, mode: u32) -> Result<(), i32> {
        here(|disk| disk.set_mode_path(path, mode))
    }

    fn mkdir(&self, path: &Path, mode: u32) -> Result<(), i32> {
        here(|disk| disk.create_dir(path, mode))
    }

    fn mkfifo(&self, path: &Path, mode: u32) -> Result<(), i32> {
        here(|disk| disk.mkfifo(path, mode))
    }

    fn rmdir(&self, path: &Path) -> Result<(), i32> {
        here(|disk| disk.remove_dir(path))
    }

    fn unlink(&self, path: &Path) -> Result<(), i32> {
        here(|disk| disk.remove_file(path))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<(), i32> {
        here(|disk| disk.rename(from, to))
    }

    fn link(&self, from: &Path, to: &Path) -> Result<(), i32> {
        here(|disk| disk.hard_link(from, to))
    }

    fn symlink(&self, target: &Path, link: &Path) -> Result<(), i32> {
        here(|disk| disk.symlink(target, link))
    }

    fn readlink(&self, path: &Path) -> Result<PathBuf, i32> {
        here(|disk| disk.read_link(path))
    }

    fn realpath(&self, path: &Path) -> Result<PathBuf, i32> {
        here(|disk| disk.canonicalize(path))
    }

    fn list(&self, fd: i32) -> Result<Vec<(OsString, u64, u8)>, i32> {
        let d = descriptor(fd)?;
        let entries = on_disk(d.node, |disk| disk.read_dir(&d.path))?;
        Ok(entries
            .into_iter()
            .map(|e| (e.name, e.ino, kind_bits(e.kind)))
            .collect())
    }

    fn dup(&self, fd: i32) -> Result<i32, i32> {
        let d = descriptor(fd)?;
        let handle = on_disk(d.node, |disk| disk.dup(&d.handle))?;
        register(Descriptor { handle, ..d })
    }
}

/// The open file behind simulated descriptor `fd`, taken out of it for
/// `tokio::fs::File::from_std`: its host, handle and position. The
/// descriptor is closed; the open file lives on with the caller. `None` for
/// a descriptor that is not a simulated file.
pub fn take_descriptor(fd: i32) -> Option<(u32, Handle, u64)> {
    let d = DESCRIPTORS
        .try_with(|t| t.borrow_mut().remove(&fd))
        .ok()
        .flatten()?;
    sim_os::files::count_fake_fd(false);
    release_fd(fd);
    Some((d.node, d.handle, d.pos.get()))
}

/// A descriptor for an open file of the simulation, at `pos`, for
/// `tokio::fs::File::into_std`: `std::fs` calls on it reach the simulated
/// disk.
///
/// # Errors
/// `EMFILE` when no descriptor is left.
pub fn give_descriptor(node: u32, handle: Handle, pos: u64) -> Result<i32, i32> {
    register(Descriptor {
        node,
        handle,
        pos: Rc::new(Cell::new(pos)),
        path: PathBuf::new(),
    })
}

/// Routes `std::fs` under the temporary directory to the simulated disks
/// (once per process). The runtime builders call it.
pub fn install() {
    // Worked out now, before any run: it calls std (current_exe reads a
    // link), which inside a run would ask these very hooks.
    crate::scratch::is_scratch(Path::new("/"));
    static HOOKS: StdFs = StdFs;
    sim_os::files::set_file_hooks(&HOOKS);
}
