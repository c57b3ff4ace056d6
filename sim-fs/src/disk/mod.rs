//! One host's disk: inodes, the directory tree, open handles, and what of
//! it is durable.
//!
//! The namespace has two versions. `Inode` directories hold the current
//! tree, which every operation sees. `durable_dirs` is the tree a crash
//! keeps for sure; between them sits `journal`, the namespace changes in
//! the order they happened. Syncing a directory commits the journal up to
//! its last change to that directory (as a journaling filesystem commits
//! everything before it). A crash keeps a prefix of the rest, drawn from
//! the seed: every rename is all or nothing, and the tree is always one
//! the host really had.

mod crash;
mod durability;
mod file;
mod mirror;
mod namespace;
mod trace;

use crate::config::DiskConfig;
use crate::data::FileData;
use sim_os::interpose::FakeStat;
use sim_runtime::decision;
use sim_runtime::rng::Rng;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// An inode number.
pub type Ino = u64;

const ROOT: Ino = 1;
/// Symlinks followed in one lookup before `ELOOP`, as Linux.
const SYMLINK_HOPS_MAX: u32 = 40;
/// Namespace changes kept uncommitted; past this the oldest are committed,
/// as a journal commits when it fills.
const JOURNAL_MAX: usize = 4096;
/// Components in one path walk (after symlink expansion).
const WALK_STEPS_MAX: usize = 4096;
/// The permission bits `umask` clears at creation, as the usual default.
const UMASK: u32 = 0o022;
/// The uid and gid of the simulated process: an unprivileged user, so
/// permission bits are enforced.
const UID: u32 = 1000;

/// An error with the errno a real disk gives, so `kind()`,
/// `raw_os_error()` and the message all match.
pub fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

/// What a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A named pipe (`mkfifo`): its bytes live in the pipe, not on the
    /// disk (`tokio::net::unix::pipe::OpenOptions` opens it).
    Fifo,
    /// A Unix socket's file (`UnixListener::bind`): it names the socket,
    /// which lives in the network.
    Socket,
}

impl Kind {
    fn type_bits(self) -> u32 {
        match self {
            Kind::File => libc::S_IFREG,
            Kind::Dir => libc::S_IFDIR,
            Kind::Symlink => libc::S_IFLNK,
            Kind::Fifo => libc::S_IFIFO,
            Kind::Socket => libc::S_IFSOCK,
        }
    }
}

enum Body {
    File(FileData),
    Dir(BTreeMap<OsString, Ino>),
    Symlink(PathBuf),
    Fifo,
    Socket,
}

struct Inode {
    body: Body,
    /// Permission bits.
    mode: u32,
    /// Names that link here (current tree).
    nlink: u32,
    /// Open handles.
    open: u32,
    atime_ns: u64,
    mtime_ns: u64,
    ctime_ns: u64,
    btime_ns: u64,
}

impl Inode {
    fn kind(&self) -> Kind {
        match self.body {
            Body::File(_) => Kind::File,
            Body::Dir(_) => Kind::Dir,
            Body::Symlink(_) => Kind::Symlink,
            Body::Fifo => Kind::Fifo,
            Body::Socket => Kind::Socket,
        }
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::File(f) => f.len(),
            Body::Dir(_) => 4096,
            Body::Symlink(target) => target.as_os_str().len() as u64,
            Body::Fifo | Body::Socket => 0,
        }
    }
}

/// One namespace change.
#[derive(Clone, Debug)]
enum NsOp {
    Link {
        dir: Ino,
        name: OsString,
        ino: Ino,
    },
    Unlink {
        dir: Ino,
        name: OsString,
    },
    Rename {
        from_dir: Ino,
        from: OsString,
        to_dir: Ino,
        to: OsString,
    },
}

impl NsOp {
    fn touches(&self, d: Ino) -> bool {
        match self {
            NsOp::Link { dir, .. } | NsOp::Unlink { dir, .. } => *dir == d,
            NsOp::Rename {
                from_dir, to_dir, ..
            } => *from_dir == d || *to_dir == d,
        }
    }
}

/// An open file on a disk. A crash invalidates every handle (`boot`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    /// The inode.
    pub ino: Ino,
    boot: u32,
    /// Each write is synced before it returns (`O_SYNC`, `O_DSYNC`).
    pub sync_writes: bool,
    /// Writes go to the end (`O_APPEND`).
    pub append: bool,
    /// Opened for reading.
    pub read: bool,
    /// Opened for writing.
    pub write: bool,
}

/// How to open a file: `std::fs::OpenOptions`'s fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFlags {
    /// Read access.
    pub read: bool,
    /// Write access.
    pub write: bool,
    /// Append mode (implies write access).
    pub append: bool,
    /// Truncate to zero on open.
    pub truncate: bool,
    /// Create if missing.
    pub create: bool,
    /// Create, failing if present.
    pub create_new: bool,
    /// Permission bits for a new file (before the umask).
    pub mode: u32,
    /// Extra `O_*` flags.
    pub custom_flags: i32,
}

impl Default for OpenFlags {
    fn default() -> OpenFlags {
        OpenFlags {
            read: false,
            write: false,
            append: false,
            truncate: false,
            create: false,
            create_new: false,
            mode: 0o666,
            custom_flags: 0,
        }
    }
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name in the directory.
    pub name: OsString,
    /// Its inode.
    pub ino: Ino,
    /// What it is.
    pub kind: Kind,
}

/// What a fresh disk holds.
#[derive(Clone, Debug)]
pub struct Skeleton {
    /// The working directory (relative paths start here); made, and
    /// mirrored from the real one.
    pub cwd: PathBuf,
    /// The temporary directory: made, and always empty.
    pub tmp: PathBuf,
    /// Whether the disk shows the real filesystem (outside `tmp`) as it
    /// is, read-only, until the host changes it: fixtures and
    /// configuration files are there, and what the host writes stays on
    /// its disk.
    pub mirror_real: bool,
}

/// The most bytes one mirrored file may have; a bigger real file is left
/// out (and the trace says so).
const MIRROR_FILE_MAX_BYTES: u64 = 64 << 20;

/// How many paths outside the temporary directory one disk names in the
/// trace as it changes them (the rest are counted in the end-of-run
/// report).
const OUTSIDE_NOTES_MAX: usize = 16;

/// Set once any disk of the process changed a path outside the temporary
/// directory: until then `std::fs` calls outside it skip the disks.
pub(crate) static ANY_CHANGED_OUTSIDE: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A host's disk.
pub struct Disk {
    node: u32,
    boot: u32,
    config: DiskConfig,
    inodes: BTreeMap<Ino, Inode>,
    next_ino: Ino,
    cwd: PathBuf,
    durable_dirs: BTreeMap<Ino, BTreeMap<OsString, Ino>>,
    journal: VecDeque<NsOp>,
    used_bytes: u64,
    rng: Rng,
    /// What happened that the trace should say, drained by the owner.
    notes: Vec<String>,
    /// Directories that mirror a real one: a name missing here is looked
    /// up there, once.
    origins: BTreeMap<Ino, PathBuf>,
    /// Mirrored names the host removed: not looked up again.
    whiteouts: BTreeSet<(Ino, OsString)>,
    /// The paths outside `tmp` the host changed (absolute): `std::fs` on
    /// them, their ancestors and their descendants comes to this disk, as
    /// `tokio::fs` always does, and the end of the run lists them.
    changed_outside: BTreeSet<PathBuf>,
    /// False while the fresh disk makes its skeleton (not the host's
    /// changes: the working directory is real).
    records_changes: bool,
    /// The path each inode was last opened, created or renamed under: how
    /// notes name files (`trace.rs`).
    names: BTreeMap<Ino, PathBuf>,
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Disk {
    /// A fresh disk for host `node`, holding `/`, the temporary directory
    /// and the working directory (what every process expects to find).
    pub fn new(node: u32, seed: u64, config: DiskConfig, skeleton: &Skeleton) -> Disk {
        config.validate();
        let mut disk = Disk {
            node,
            boot: 0,
            config,
            inodes: BTreeMap::new(),
            next_ino: ROOT,
            cwd: PathBuf::from("/"),
            durable_dirs: BTreeMap::new(),
            journal: VecDeque::new(),
            used_bytes: 0,
            // One stream per host: a host's disk draws do not shift
            // another's.
            rng: Rng::new(seed, 0x5f5_0000 + u64::from(node)),
            notes: Vec::new(),
            origins: BTreeMap::new(),
            whiteouts: BTreeSet::new(),
            changed_outside: BTreeSet::new(),
            records_changes: false,
            names: BTreeMap::new(),
        };
        let root = disk.alloc(Body::Dir(BTreeMap::new()), 0o755);
        debug_assert_eq!(root, ROOT);
        disk.inodes.get_mut(&ROOT).expect("root").nlink = 2;
        for dir in [&skeleton.tmp, &skeleton.cwd] {
            if dir.is_absolute() {
                disk.create_dir_all(dir, 0o777)
                    .expect("a fresh disk takes any absolute directory");
            }
        }
        // The skeleton is durable from the start, and no change of the
        // host's: the working directory is real.
        disk.commit(disk.journal.len());
        disk.records_changes = true;
        if skeleton.mirror_real {
            // The root and the working directory's chain mirror the real
            // ones; the temporary directory does not.
            disk.origins.insert(ROOT, PathBuf::from("/"));
            let mut real = PathBuf::from("/");
            let mut at = ROOT;
            for part in skeleton.cwd.components().skip(1) {
                real.push(part);
                let Some(&child) = disk.entries(at).ok().and_then(|e| e.get(part.as_os_str()))
                else {
                    break;
                };
                if real != skeleton.tmp && !skeleton.tmp.starts_with(&real) {
                    disk.origins.insert(child, real.clone());
                }
                at = child;
            }
        }
        disk.cwd = skeleton.cwd.clone();
        disk
    }

    /// The disk's configuration.
    pub fn config(&self) -> &DiskConfig {
        &self.config
    }

    /// Replaces the configuration (faults, latency, capacity).
    pub fn set_config(&mut self, config: DiskConfig) {
        config.validate();
        self.config = config;
    }

    /// Bytes of file data held.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Takes the notes for the trace.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    /// A latency for the next operation, in ns.
    pub fn draw_latency_ns(&mut self) -> u64 {
        let (min, max) = (self.config.latency_min_us, self.config.latency_max_us);
        let us = if max > min {
            let node = self.node;
            min + decision::below(
                || format!("disk {node} latency"),
                &mut self.rng,
                max - min + 1,
            )
        } else {
            min
        };
        us * 1_000
    }

    fn chance(&mut self, rate: f64) -> bool {
        // A zero rate draws nothing, so it changes nothing else in a run.
        let node = self.node;
        rate > 0.0 && decision::unit(|| format!("disk {node} chance"), &mut self.rng) <= rate
    }

    fn alloc(&mut self, body: Body, mode: u32) -> Ino {
        let ino = self.next_ino;
        self.next_ino += 1;
        let now = now_ns();
        self.inodes.insert(
            ino,
            Inode {
                body,
                mode: mode & 0o7777,
                nlink: 0,
                open: 0,
                atime_ns: now,
                mtime_ns: now,
                ctime_ns: now,
                btime_ns: now,
            },
        );
        ino
    }

    fn inode(&self, ino: Ino) -> &Inode {
        self.inodes.get(&ino).expect("a live inode")
    }

    fn inode_mut(&mut self, ino: Ino) -> &mut Inode {
        self.inodes.get_mut(&ino).expect("a live inode")
    }
}

#[cfg(test)]
mod tests;
