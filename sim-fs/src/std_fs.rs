//! `std::fs` on the simulated disk: the answers to the libc calls that
//! `sim_os::files` interposes, for the scratch area (`scratch.rs`) and the
//! paths a run changed elsewhere. See `sim_os::files` for the rule; this
//! module keeps the simulated descriptors.

use crate::disk::{Handle, Kind, OpenFlags};
use crate::with_disk_on;
use sim_os::files::FileHooks;
use sim_os::interpose::FakeStat;
use sim_os::reserved::{release_fd, reserve_fd};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// One simulated descriptor. `dup`s share the position and the status
/// flags.
#[derive(Clone)]
struct Descriptor {
    node: u32,
    open: Open,
    pos: Rc<Cell<u64>>,
    path: PathBuf,
    /// `F_GETFL`'s answer: the access mode, `O_APPEND`, `O_NONBLOCK`.
    status: Rc<Cell<i32>>,
}

/// What a descriptor has open.
#[derive(Clone)]
enum Open {
    /// A file or directory of the disk.
    File(Handle),
    /// An end of a named pipe.
    Fifo(FifoSlot),
}

/// An end of a named pipe, kept by the layer that keeps FIFOs
/// ([`FifoHooks`]), shared by a descriptor's `dup`s; `None` once taken
/// (`take_fifo_descriptor`).
type FifoSlot = Rc<RefCell<Option<FifoEnd>>>;

/// A FIFO's end as that layer made it.
pub type FifoEnd = Box<dyn Any>;

/// [`FifoHooks::open`]: host, inode, read, write, non-blocking.
pub type FifoOpen = fn(u32, crate::Ino, bool, bool, bool) -> Result<FifoEnd, i32>;

/// The status flags `F_GETFL` reports for an open with `flags`.
fn status_of(flags: i32) -> i32 {
    flags & (libc::O_ACCMODE | libc::O_APPEND | libc::O_NONBLOCK)
}

/// What the layer that keeps the simulated FIFOs (the facade's
/// `tokio::net::unix::pipe`) does for `std::fs` on one: its pipe state
/// lives there, with its wakers.
pub struct FifoHooks {
    /// Opens an end of FIFO `ino` of host `node` for reading, writing or
    /// both, `nonblocking` or not: Linux's answers (`ENXIO` for a
    /// non-blocking writer with no reader), and `EAGAIN` for a blocking
    /// open that would wait for the other side (which `std::fs` does not
    /// simulate).
    pub open: FifoOpen,
    /// A read that does not wait (`EAGAIN` when the pipe is empty and a
    /// writer is open).
    pub read: fn(end: &dyn Any, buf: &mut [u8]) -> Result<usize, i32>,
    /// A write that does not wait (`EAGAIN` when the pipe is full).
    pub write: fn(end: &dyn Any, buf: &[u8]) -> Result<usize, i32>,
}

static FIFO_HOOKS: std::sync::OnceLock<FifoHooks> = std::sync::OnceLock::new();

/// Installs what `std::fs` does on simulated FIFOs (once per process).
pub fn set_fifo_hooks(hooks: FifoHooks) {
    let _ = FIFO_HOOKS.set(hooks);
}

/// Why `std::fs` cannot do `what` on the FIFO at `path`: a line on stderr
/// (an errno alone would not say), and `EOPNOTSUPP`.
fn fifo_refused(what: &str, path: &Path) -> i32 {
    eprintln!(
        "sim: {what} the named pipe {} through std::fs would wait, which is not simulated: open \
         it with O_NONBLOCK (custom_flags) or with tokio::net::unix::pipe::OpenOptions, or make \
         the File a pipe::Receiver/Sender with from_file",
        path.display()
    );
    libc::EOPNOTSUPP
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

impl Descriptor {
    /// The disk's open file (`EINVAL` for a FIFO's end, as `lseek` and
    /// `fsync` on a pipe answer).
    fn file(&self) -> Result<Handle, i32> {
        match &self.open {
            Open::File(handle) => Ok(*handle),
            Open::Fifo(_) => Err(libc::EINVAL),
        }
    }

    /// The FIFO's end, if this descriptor holds one.
    fn fifo(&self) -> Option<&FifoSlot> {
        match &self.open {
            Open::Fifo(end) => Some(end),
            Open::File(_) => None,
        }
    }

    /// A read or write (at the position: a pipe has no offset) on a
    /// FIFO's end: without waiting when the descriptor is non-blocking,
    /// refused otherwise.
    fn fifo_io<R>(
        &self,
        what: &str,
        at: Option<u64>,
        f: impl FnOnce(&FifoHooks, &dyn Any) -> Result<R, i32>,
    ) -> Result<R, i32> {
        let end = self.fifo().expect("fifo_io on a FIFO's descriptor");
        if at.is_some() {
            return Err(libc::ESPIPE);
        }
        if self.status.get() & libc::O_NONBLOCK == 0 {
            return Err(fifo_refused(what, &self.path));
        }
        let hooks = FIFO_HOOKS.get().ok_or(libc::EOPNOTSUPP)?;
        let end = end.borrow();
        f(hooks, end.as_deref().ok_or(libc::EBADF)?)
    }
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
        let fifo = match flags & libc::O_CREAT {
            0 => on_disk(node, |disk| Ok(disk.fifo_at(path).ok().flatten()))?,
            _ => None,
        };
        if let Some(ino) = fifo {
            return open_fifo(node, ino, path, flags);
        }
        let handle = on_disk(node, |disk| disk.open(path, &open_flags))?;
        register(Descriptor {
            node,
            open: Open::File(handle),
            pos: Rc::new(Cell::new(0)),
            path: path.to_path_buf(),
            status: Rc::new(Cell::new(status_of(flags))),
        })
        .inspect_err(|_| with_disk_on(node, |disk| disk.close(&handle)))
    }

    fn close(&self, fd: i32) -> Result<(), i32> {
        let d = DESCRIPTORS
            .with(|t| t.borrow_mut().remove(&fd))
            .ok_or(libc::EBADF)?;
        sim_os::files::count_fake_fd(false);
        release_fd(fd);
        // The disk is gone with its runtime: nothing left to close. A
        // FIFO's end closes when its last descriptor goes (with `d`).
        if let (Open::File(handle), true) = (&d.open, sim_runtime::context::current_id().is_some())
        {
            with_disk_on(d.node, |disk| disk.close(handle));
        }
        Ok(())
    }

    fn read(&self, fd: i32, buf: &mut [u8], at: Option<u64>) -> Result<usize, i32> {
        let d = descriptor(fd)?;
        if d.fifo().is_some() {
            return d.fifo_io("reading", at, |hooks, end| (hooks.read)(end, buf));
        }
        let handle = d.file()?;
        let offset = at.unwrap_or(d.pos.get());
        let n = on_disk(d.node, |disk| disk.read_at(&handle, offset, buf))?;
        if at.is_none() {
            d.pos.set(offset + n as u64);
        }
        Ok(n)
    }

    fn write(&self, fd: i32, buf: &[u8], at: Option<u64>) -> Result<usize, i32> {
        let d = descriptor(fd)?;
        if d.fifo().is_some() {
            return d.fifo_io("writing", at, |hooks, end| (hooks.write)(end, buf));
        }
        let handle = d.file()?;
        let offset = at.unwrap_or(d.pos.get());
        let (n, next) = on_disk(d.node, |disk| disk.write_at(&handle, offset, buf))?;
        if at.is_none() {
            d.pos.set(next);
        }
        Ok(n)
    }

    fn seek(&self, fd: i32, offset: i64, whence: i32) -> Result<u64, i32> {
        let d = descriptor(fd)?;
        if d.fifo().is_some() {
            return Err(libc::ESPIPE);
        }
        let handle = d.file()?;
        let base = match whence {
            libc::SEEK_SET => 0,
            libc::SEEK_CUR => d.pos.get(),
            libc::SEEK_END => on_disk(d.node, |disk| disk.len(&handle))?,
            _ => return Err(libc::EINVAL),
        };
        let target = base.checked_add_signed(offset).ok_or(libc::EINVAL)?;
        d.pos.set(target);
        Ok(target)
    }

    fn fstat(&self, fd: i32) -> Result<FakeStat, i32> {
        let d = descriptor(fd)?;
        match &d.open {
            Open::File(handle) => on_disk(d.node, |disk| disk.stat(handle)),
            Open::Fifo(_) => on_disk(d.node, |disk| disk.stat_path(&d.path, true)),
        }
    }

    fn stat(&self, path: &Path, follow: bool) -> Result<FakeStat, i32> {
        here(|disk| disk.stat_path(path, follow))
    }

    fn fsync(&self, fd: i32) -> Result<(), i32> {
        let d = descriptor(fd)?;
        let handle = d.file()?;
        on_disk(d.node, |disk| disk.sync(&handle))
    }

    fn ftruncate(&self, fd: i32, len: u64) -> Result<(), i32> {
        let d = descriptor(fd)?;
        let handle = d.file()?;
        on_disk(d.node, |disk| disk.set_len(&handle, len))
    }

    fn fchmod(&self, fd: i32, mode: u32) -> Result<(), i32> {
        let d = descriptor(fd)?;
        let handle = d.file()?;
        on_disk(d.node, |disk| disk.set_mode(&handle, mode))
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
        let open = match &d.open {
            Open::File(handle) => Open::File(on_disk(d.node, |disk| disk.dup(handle))?),
            // The end is shared, as the kernel shares an open pipe.
            Open::Fifo(end) => Open::Fifo(end.clone()),
        };
        register(Descriptor { open, ..d })
    }

    fn status_flags(&self, fd: i32) -> Result<i32, i32> {
        Ok(descriptor(fd)?.status.get())
    }

    fn set_status_flags(&self, fd: i32, flags: i32) -> Result<(), i32> {
        // As Linux: only O_APPEND and O_NONBLOCK (of these) change.
        let d = descriptor(fd)?;
        let kept = d.status.get() & !(libc::O_APPEND | libc::O_NONBLOCK);
        d.status
            .set(kept | (flags & (libc::O_APPEND | libc::O_NONBLOCK)));
        Ok(())
    }
}

/// `open` of the FIFO `ino` at `path`: an end from [`FifoHooks`].
fn open_fifo(node: u32, ino: crate::Ino, path: &Path, flags: i32) -> Result<i32, i32> {
    let Some(hooks) = FIFO_HOOKS.get() else {
        // No layer keeps FIFOs in this process (no tokio runtime was
        // built): the disk's own refusal, which names the way.
        eprintln!(
            "sim: {} is a simulated named pipe (FIFO): open it with \
             tokio::net::unix::pipe::OpenOptions, not as a file",
            path.display()
        );
        return Err(libc::EOPNOTSUPP);
    };
    let access = flags & libc::O_ACCMODE;
    let read = access == libc::O_RDONLY || access == libc::O_RDWR;
    let write = access == libc::O_WRONLY || access == libc::O_RDWR;
    let nonblocking = flags & libc::O_NONBLOCK != 0;
    let end = match (hooks.open)(node, ino, read, write, nonblocking) {
        Err(libc::EAGAIN) => return Err(fifo_refused("opening", path)),
        other => other?,
    };
    register(Descriptor {
        node,
        open: Open::Fifo(Rc::new(RefCell::new(Some(end)))),
        pos: Rc::new(Cell::new(0)),
        path: path.to_path_buf(),
        status: Rc::new(Cell::new(status_of(flags))),
    })
}

/// The FIFO end behind simulated descriptor `fd`, taken out of it for
/// `tokio::net::unix::pipe`'s `from_file`, with its status flags (access
/// mode, `O_NONBLOCK`). The descriptor is closed. `None` for a descriptor
/// that holds no FIFO end (then it is left as it was).
pub fn take_fifo_descriptor(fd: i32) -> Option<(FifoEnd, i32)> {
    let d = descriptor(fd).ok()?;
    let end = d.fifo()?.borrow_mut().take()?;
    let status = d.status.get();
    DESCRIPTORS.with(|t| t.borrow_mut().remove(&fd));
    sim_os::files::count_fake_fd(false);
    release_fd(fd);
    Some((end, status))
}

/// The open file behind simulated descriptor `fd`, taken out of it for
/// `tokio::fs::File::from_std`: its host, handle and position. The
/// descriptor is closed; the open file lives on with the caller. `None` for
/// a descriptor that is not a simulated file (a FIFO's end stays).
pub fn take_descriptor(fd: i32) -> Option<(u32, Handle, u64)> {
    let d = descriptor(fd).ok()?;
    let handle = d.file().ok()?;
    DESCRIPTORS.with(|t| t.borrow_mut().remove(&fd));
    sim_os::files::count_fake_fd(false);
    release_fd(fd);
    Some((d.node, handle, d.pos.get()))
}

/// A descriptor for an open file of the simulation, at `pos`, for
/// `tokio::fs::File::into_std`: `std::fs` calls on it reach the simulated
/// disk.
///
/// # Errors
/// `EMFILE` when no descriptor is left.
pub fn give_descriptor(node: u32, handle: Handle, pos: u64) -> Result<i32, i32> {
    let access = match (handle.read, handle.write) {
        (true, true) => libc::O_RDWR,
        (false, true) => libc::O_WRONLY,
        _ => libc::O_RDONLY,
    };
    let append = if handle.append { libc::O_APPEND } else { 0 };
    register(Descriptor {
        node,
        open: Open::File(handle),
        pos: Rc::new(Cell::new(pos)),
        path: PathBuf::new(),
        status: Rc::new(Cell::new(access | append)),
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
