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
}

impl Kind {
    fn type_bits(self) -> u32 {
        match self {
            Kind::File => libc::S_IFREG,
            Kind::Dir => libc::S_IFDIR,
            Kind::Symlink => libc::S_IFLNK,
            Kind::Fifo => libc::S_IFIFO,
        }
    }
}

enum Body {
    File(FileData),
    Dir(BTreeMap<OsString, Ino>),
    Symlink(PathBuf),
    Fifo,
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
        }
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::File(f) => f.len(),
            Body::Dir(_) => 4096,
            Body::Symlink(target) => target.as_os_str().len() as u64,
            Body::Fifo => 0,
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

    /// Brings the real entries on `path`'s way into this disk, for the
    /// directories that mirror real ones. Each is looked up once; then it
    /// is the host's, to change or remove.
    /// `path` made absolute (from the working directory) and normalized.
    fn absolute(&self, path: &Path) -> PathBuf {
        sim_os::files::normalize(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        })
    }

    /// Notes a change to `path`: outside the temporary directory, the path
    /// joins `changed_outside` (and the trace says so, for the first few).
    fn changing(&mut self, path: &Path) {
        if !self.records_changes {
            return;
        }
        let absolute = self.absolute(path);
        // The scratch area (the temporary directory, not a checkout under
        // it) is always simulated; every other change is recorded.
        if crate::std_fs::is_scratch(&absolute) || self.changed_outside.contains(&absolute) {
            return;
        }
        if self.changed_outside.len() < OUTSIDE_NOTES_MAX {
            // Relative to the working directory when inside it, so the
            // trace is the same in every checkout.
            let shown = match absolute.strip_prefix(&self.cwd) {
                Ok(inside) => format!("./{}", inside.display()),
                Err(_) => absolute.display().to_string(),
            };
            self.notes.push(format!(
                "disk: {shown} changed outside the temporary directory: on this host's \
                 simulated disk only, the real file is untouched"
            ));
        }
        self.changed_outside.insert(absolute);
        ANY_CHANGED_OUTSIDE.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether `path` is, is inside, or holds a path this host changed
    /// outside the temporary directory.
    pub fn shadows(&self, path: &Path) -> bool {
        if self.changed_outside.is_empty() {
            return false;
        }
        let absolute = self.absolute(path);
        if absolute
            .ancestors()
            .any(|a| self.changed_outside.contains(a))
        {
            return true;
        }
        // A changed path below `absolute` sorts right after it.
        self.changed_outside
            .range(absolute.clone()..)
            .next()
            .is_some_and(|p| p.starts_with(&absolute))
    }

    /// The paths outside the temporary directory this host changed.
    pub fn changed_outside(&self) -> &BTreeSet<PathBuf> {
        &self.changed_outside
    }

    fn see(&mut self, path: &Path) {
        if self.origins.is_empty() {
            return;
        }
        let absolute = self.absolute(path);
        let mut dir = ROOT;
        for part in absolute.components().skip(1) {
            let name = part.as_os_str();
            let child = match self.entries(dir).ok().and_then(|e| e.get(name)) {
                Some(&child) => child,
                None => match self.import(dir, name) {
                    Some(child) => child,
                    None => return,
                },
            };
            if self.inode(child).kind() != Kind::Dir {
                return;
            }
            dir = child;
        }
    }

    /// Mirrors every real entry of `dir` (for a listing).
    fn see_all(&mut self, dir: Ino) {
        let Some(origin) = self.origins.get(&dir).cloned() else {
            return;
        };
        let Ok(listing) = sim_runtime::outside::outside(|| std::fs::read_dir(&origin)) else {
            return;
        };
        let mut names: Vec<OsString> = listing
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        names.sort();
        for name in names {
            let present = self.entries(dir).is_ok_and(|e| e.contains_key(&name));
            if !present {
                self.import(dir, &name);
            }
        }
    }

    /// Copies the real entry `name` of mirrored `dir` in, durably.
    fn import(&mut self, dir: Ino, name: &OsStr) -> Option<Ino> {
        use std::os::unix::fs::MetadataExt;
        let origin = self.origins.get(&dir)?.join(name);
        if self.whiteouts.contains(&(dir, name.to_os_string())) {
            return None;
        }
        let meta = sim_runtime::outside::outside(|| std::fs::symlink_metadata(&origin)).ok()?;
        let body = if meta.is_dir() {
            Body::Dir(BTreeMap::new())
        } else if meta.file_type().is_symlink() {
            Body::Symlink(sim_runtime::outside::outside(|| std::fs::read_link(&origin)).ok()?)
        } else if meta.is_file() {
            if meta.len() > MIRROR_FILE_MAX_BYTES {
                self.notes.push(format!(
                    "fs mirror skipped {} ({} bytes)",
                    name.to_string_lossy(),
                    meta.len()
                ));
                return None;
            }
            let bytes = sim_runtime::outside::outside(|| std::fs::read(&origin)).ok()?;
            let mut data = FileData::default();
            data.write_at(0, &bytes);
            data.sync();
            self.used_bytes += bytes.len() as u64;
            Body::File(data)
        } else {
            // Devices, sockets, FIFOs: not mirrored.
            return None;
        };
        let is_dir = matches!(body, Body::Dir(_));
        let ino = self.alloc(body, meta.mode() & 0o7777);
        self.inode_mut(ino).nlink = if is_dir { 2 } else { 1 };
        if is_dir {
            self.inode_mut(dir).nlink += 1;
            self.origins.insert(ino, origin.clone());
            self.durable_dirs.entry(ino).or_default();
        }
        self.entries_mut(dir).insert(name.to_os_string(), ino);
        self.durable_dirs
            .entry(dir)
            .or_default()
            .insert(name.to_os_string(), ino);
        // The name and inode, not the absolute path: a checkout elsewhere
        // gives the same trace.
        self.notes
            .push(format!("fs mirror {} as ino={ino}", name.to_string_lossy()));
        Some(ino)
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

    fn entries(&self, dir: Ino) -> io::Result<&BTreeMap<OsString, Ino>> {
        match &self.inode(dir).body {
            Body::Dir(entries) => Ok(entries),
            _ => Err(errno(libc::ENOTDIR)),
        }
    }

    fn entries_mut(&mut self, dir: Ino) -> &mut BTreeMap<OsString, Ino> {
        match &mut self.inode_mut(dir).body {
            Body::Dir(entries) => entries,
            _ => panic!("sim-fs: inode {dir} is not a directory"),
        }
    }

    // ----- paths --------------------------------------------------------

    /// Walks `path` and returns the inodes from the root to its end, with
    /// their names. `follow_last` follows a symlink in the last component.
    fn walk(&self, path: &Path, follow_last: bool) -> io::Result<Vec<(Ino, OsString)>> {
        if path.as_os_str().is_empty() {
            return Err(errno(libc::ENOENT));
        }
        let mut stack: Vec<(Ino, OsString)> = vec![(ROOT, OsString::from("/"))];
        let mut pending: VecDeque<OsString> = VecDeque::new();
        let start = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        push_components(&mut pending, &start, false);
        let mut hops = 0;
        let mut steps = 0;
        while let Some(part) = pending.pop_front() {
            steps += 1;
            if steps > WALK_STEPS_MAX {
                return Err(errno(libc::ENAMETOOLONG));
            }
            if part == "/" {
                stack.truncate(1);
                continue;
            }
            if part == ".." {
                if stack.len() > 1 {
                    stack.pop();
                }
                continue;
            }
            let here = stack.last().expect("the root stays").0;
            let child = *self.entries(here)?.get(&part).ok_or(errno(libc::ENOENT))?;
            let is_last = pending.is_empty();
            if let Body::Symlink(target) = &self.inode(child).body {
                if !is_last || follow_last {
                    hops += 1;
                    if hops > SYMLINK_HOPS_MAX {
                        return Err(errno(libc::ELOOP));
                    }
                    push_components(&mut pending, target, true);
                    continue;
                }
            }
            stack.push((child, part));
        }
        Ok(stack)
    }

    fn lookup(&self, path: &Path, follow_last: bool) -> io::Result<Ino> {
        Ok(self.walk(path, follow_last)?.last().expect("non-empty").0)
    }

    /// The directory that holds `path`'s last component, and that name.
    fn parent_of(&self, path: &Path) -> io::Result<(Ino, OsString)> {
        let name = match path.components().next_back() {
            Some(Component::Normal(name)) => name.to_os_string(),
            // "/", "..", "": nothing to create or remove there.
            Some(_) => return Err(errno(libc::EEXIST)),
            None => return Err(errno(libc::ENOENT)),
        };
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let dir = match parent {
            Some(p) => self.lookup(p, true)?,
            None => self.lookup(Path::new("."), true)?,
        };
        if self.inode(dir).kind() != Kind::Dir {
            return Err(errno(libc::ENOTDIR));
        }
        Ok((dir, name))
    }

    fn check_writable_dir(&self, dir: Ino) -> io::Result<()> {
        if self.inode(dir).mode & 0o200 == 0 {
            return Err(errno(libc::EACCES));
        }
        Ok(())
    }

    /// The absolute path with every symlink resolved.
    pub fn canonicalize(&mut self, path: &Path) -> io::Result<PathBuf> {
        self.see(path);
        let stack = self.walk(path, true)?;
        let mut out = PathBuf::from("/");
        for (_, name) in stack.iter().skip(1) {
            out.push(name);
        }
        Ok(out)
    }

    // ----- namespace changes ------------------------------------------------

    fn record(&mut self, op: NsOp) {
        self.journal.push_back(op);
        if self.journal.len() > JOURNAL_MAX {
            self.commit(1);
        }
    }

    fn link_name(&mut self, dir: Ino, name: OsString, ino: Ino) {
        self.whiteouts.remove(&(dir, name.clone()));
        let previous = self.entries_mut(dir).insert(name.clone(), ino);
        debug_assert!(previous.is_none(), "linking over a name");
        self.inode_mut(ino).nlink += 1;
        if self.inode(ino).kind() == Kind::Dir {
            // The child's "..".
            self.inode_mut(dir).nlink += 1;
        }
        self.touch_dir(dir);
        self.record(NsOp::Link { dir, name, ino });
    }

    fn unlink_name(&mut self, dir: Ino, name: &OsStr) -> Ino {
        let ino = self
            .entries_mut(dir)
            .remove(name)
            .expect("unlinking a present name");
        self.drop_link(dir, ino);
        self.touch_dir(dir);
        if self.origins.contains_key(&dir) {
            self.whiteouts.insert((dir, name.to_os_string()));
        }
        self.record(NsOp::Unlink {
            dir,
            name: name.to_os_string(),
        });
        ino
    }

    fn drop_link(&mut self, dir: Ino, ino: Ino) {
        let is_dir = self.inode(ino).kind() == Kind::Dir;
        let inode = self.inode_mut(ino);
        inode.nlink = inode.nlink.saturating_sub(if is_dir { 2 } else { 1 });
        inode.ctime_ns = now_ns();
        if is_dir {
            self.inode_mut(dir).nlink -= 1;
        }
        self.release_if_dead(ino);
    }

    fn touch_dir(&mut self, dir: Ino) {
        let now = now_ns();
        let inode = self.inode_mut(dir);
        inode.mtime_ns = now;
        inode.ctime_ns = now;
    }

    /// An inode with no names and no handles frees its space (its bytes
    /// stay for a crash that brings a name back).
    fn release_if_dead(&mut self, ino: Ino) {
        let inode = self.inode(ino);
        if inode.nlink == 0 && inode.open == 0 {
            let len = match &inode.body {
                Body::File(f) => f.len(),
                _ => 0,
            };
            self.used_bytes -= len;
        }
    }

    /// `mkdir`.
    pub fn create_dir(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.see(path);
        let (dir, name) = self.parent_of(path)?;
        if self.entries(dir)?.contains_key(&name) {
            return Err(errno(libc::EEXIST));
        }
        self.changing(path);
        self.check_writable_dir(dir)?;
        let ino = self.alloc(Body::Dir(BTreeMap::new()), mode & !UMASK);
        // Its own ".".
        self.inode_mut(ino).nlink = 1;
        self.link_name(dir, name, ino);
        Ok(())
    }

    /// `mkdir -p`.
    pub fn create_dir_all(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.see(path);
        match self.lookup(path, true) {
            Ok(ino) if self.inode(ino).kind() == Kind::Dir => return Ok(()),
            Ok(_) => return Err(errno(libc::EEXIST)),
            Err(_) => {}
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dir_all(parent, mode)?;
        }
        match self.create_dir(path, mode) {
            // Someone made it in between, or it ends in "..".
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => match self.lookup(path, true) {
                Ok(ino) if self.inode(ino).kind() == Kind::Dir => Ok(()),
                _ => Err(e),
            },
            other => other,
        }
    }

    /// `rmdir`.
    pub fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        self.changing(path);
        self.see(path);
        let (dir, name) = self.parent_of(path)?;
        let ino = *self.entries(dir)?.get(&name).ok_or(errno(libc::ENOENT))?;
        match &self.inode(ino).body {
            Body::Dir(entries) if entries.is_empty() => {}
            Body::Dir(_) => return Err(errno(libc::ENOTEMPTY)),
            _ => return Err(errno(libc::ENOTDIR)),
        }
        self.check_writable_dir(dir)?;
        self.unlink_name(dir, &name);
        Ok(())
    }

    /// `unlink`.
    pub fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        self.changing(path);
        self.see(path);
        let (dir, name) = self.parent_of(path)?;
        let ino = *self.entries(dir)?.get(&name).ok_or(errno(libc::ENOENT))?;
        if self.inode(ino).kind() == Kind::Dir {
            return Err(errno(libc::EISDIR));
        }
        self.check_writable_dir(dir)?;
        self.unlink_name(dir, &name);
        Ok(())
    }

    /// `rm -r`: what `std::fs::remove_dir_all` does (symlinks are removed,
    /// never followed).
    pub fn remove_dir_all(&mut self, path: &Path) -> io::Result<()> {
        self.changing(path);
        self.see(path);
        let ino = self.lookup(path, false)?;
        if self.inode(ino).kind() != Kind::Dir {
            return Err(errno(libc::ENOTDIR));
        }
        // Depth first, children in name order; bounded by the inodes.
        let mut budget = self.inodes.len() + 1;
        self.remove_tree(path.to_path_buf(), &mut budget)
    }

    fn remove_tree(&mut self, path: PathBuf, budget: &mut usize) -> io::Result<()> {
        assert!(*budget > 0, "sim-fs: a directory cycle under {path:?}");
        *budget -= 1;
        let ino = self.lookup(&path, false)?;
        let children: Vec<(OsString, Kind)> = self
            .entries(ino)?
            .iter()
            .map(|(name, child)| (name.clone(), self.inode(*child).kind()))
            .collect();
        for (name, kind) in children {
            let child = path.join(&name);
            if kind == Kind::Dir {
                self.remove_tree(child, budget)?;
            } else {
                self.remove_file(&child)?;
            }
        }
        self.remove_dir(&path)
    }

    /// `rename`: atomic while the host runs; replaces a file, or an empty
    /// directory, at the destination.
    pub fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        self.changing(from);
        self.changing(to);
        self.see(from);
        self.see(to);
        let (from_dir, from_name) = self.parent_of(from)?;
        let ino = *self
            .entries(from_dir)?
            .get(&from_name)
            .ok_or(errno(libc::ENOENT))?;
        let (to_dir, to_name) = self.parent_of(to)?;
        let moving_dir = self.inode(ino).kind() == Kind::Dir;
        if moving_dir {
            // A directory cannot move under itself.
            let to_parent = self.walk(to.parent().unwrap_or(Path::new("/")), true)?;
            if to_parent.iter().any(|(i, _)| *i == ino) {
                return Err(errno(libc::EINVAL));
            }
        }
        let target = self.entries(to_dir)?.get(&to_name).copied();
        if target == Some(ino) {
            return Ok(());
        }
        if let Some(target) = target {
            match (&self.inode(target).body, moving_dir) {
                (Body::Dir(_), false) => return Err(errno(libc::EISDIR)),
                (Body::Dir(entries), true) if !entries.is_empty() => {
                    return Err(errno(libc::ENOTEMPTY))
                }
                (Body::Dir(_), true) => {}
                (_, true) => return Err(errno(libc::ENOTDIR)),
                (_, false) => {}
            }
        }
        self.check_writable_dir(from_dir)?;
        self.check_writable_dir(to_dir)?;
        if let Some(target) = target {
            self.entries_mut(to_dir).remove(&to_name);
            self.drop_link(to_dir, target);
        }
        self.entries_mut(from_dir).remove(&from_name);
        if self.origins.contains_key(&from_dir) {
            self.whiteouts.insert((from_dir, from_name.clone()));
        }
        self.whiteouts.remove(&(to_dir, to_name.clone()));
        self.entries_mut(to_dir).insert(to_name.clone(), ino);
        if moving_dir && from_dir != to_dir {
            self.inode_mut(from_dir).nlink -= 1;
            self.inode_mut(to_dir).nlink += 1;
        }
        self.touch_dir(from_dir);
        self.touch_dir(to_dir);
        self.inode_mut(ino).ctime_ns = now_ns();
        self.record(NsOp::Rename {
            from_dir,
            from: from_name,
            to_dir,
            to: to_name,
        });
        Ok(())
    }

    /// `link`: a second name for a file.
    pub fn hard_link(&mut self, src: &Path, dst: &Path) -> io::Result<()> {
        self.changing(dst);
        self.see(src);
        self.see(dst);
        let ino = self.lookup(src, false)?;
        if self.inode(ino).kind() == Kind::Dir {
            return Err(errno(libc::EPERM));
        }
        let (dir, name) = self.parent_of(dst)?;
        if self.entries(dir)?.contains_key(&name) {
            return Err(errno(libc::EEXIST));
        }
        self.check_writable_dir(dir)?;
        self.link_name(dir, name, ino);
        self.inode_mut(ino).ctime_ns = now_ns();
        Ok(())
    }

    /// `symlink`: `link` points at `target` (not checked to exist).
    pub fn symlink(&mut self, target: &Path, link: &Path) -> io::Result<()> {
        self.changing(link);
        self.see(link);
        let (dir, name) = self.parent_of(link)?;
        if self.entries(dir)?.contains_key(&name) {
            return Err(errno(libc::EEXIST));
        }
        self.check_writable_dir(dir)?;
        let ino = self.alloc(Body::Symlink(target.to_path_buf()), 0o777);
        self.link_name(dir, name, ino);
        Ok(())
    }

    /// `mkfifo`: a named pipe at `path`.
    pub fn mkfifo(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.see(path);
        let (dir, name) = self.parent_of(path)?;
        if self.entries(dir)?.contains_key(&name) {
            return Err(errno(libc::EEXIST));
        }
        self.check_writable_dir(dir)?;
        self.changing(path);
        let ino = self.alloc(Body::Fifo, mode & !UMASK);
        self.link_name(dir, name, ino);
        Ok(())
    }

    /// The inode at `path` if it is a named pipe (following symlinks):
    /// what `tokio::net::unix::pipe` opens.
    pub fn fifo_at(&mut self, path: &Path) -> io::Result<Option<Ino>> {
        self.see(path);
        let ino = self.lookup(path, true)?;
        Ok((self.inode(ino).kind() == Kind::Fifo).then_some(ino))
    }

    /// `readlink`.
    pub fn read_link(&mut self, path: &Path) -> io::Result<PathBuf> {
        self.see(path);
        let ino = self.lookup(path, false)?;
        match &self.inode(ino).body {
            Body::Symlink(target) => Ok(target.clone()),
            _ => Err(errno(libc::EINVAL)),
        }
    }

    /// The entries of a directory, in name order.
    pub fn read_dir(&mut self, path: &Path) -> io::Result<Vec<Entry>> {
        self.see(path);
        let ino = self.lookup(path, true)?;
        self.see_all(ino);
        if self.inode(ino).mode & 0o400 == 0 {
            return Err(errno(libc::EACCES));
        }
        Ok(self
            .entries(ino)?
            .iter()
            .map(|(name, child)| Entry {
                name: name.clone(),
                ino: *child,
                kind: self.inode(*child).kind(),
            })
            .collect())
    }

    // ----- attributes ---------------------------------------------------

    fn stat_ino(&self, ino: Ino) -> FakeStat {
        let inode = self.inode(ino);
        FakeStat {
            mode: inode.kind().type_bits() | inode.mode,
            size: inode.len(),
            ino,
            dev: 0x5f5_0000 + u64::from(self.node),
            nlink: inode.nlink,
            uid: UID,
            gid: UID,
            atime_ns: inode.atime_ns,
            mtime_ns: inode.mtime_ns,
            ctime_ns: inode.ctime_ns,
            btime_ns: inode.btime_ns,
        }
    }

    /// `stat` (`follow` true) or `lstat`.
    pub fn stat_path(&mut self, path: &Path, follow: bool) -> io::Result<FakeStat> {
        self.see(path);
        Ok(self.stat_ino(self.lookup(path, follow)?))
    }

    /// `fstat`.
    pub fn stat(&self, h: &Handle) -> io::Result<FakeStat> {
        self.check(h)?;
        Ok(self.stat_ino(h.ino))
    }

    /// `chmod` (follows symlinks).
    pub fn set_mode_path(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.changing(path);
        self.see(path);
        let ino = self.lookup(path, true)?;
        self.set_mode_ino(ino, mode);
        Ok(())
    }

    /// `fchmod`.
    pub fn set_mode(&mut self, h: &Handle, mode: u32) -> io::Result<()> {
        self.check(h)?;
        self.set_mode_ino(h.ino, mode);
        Ok(())
    }

    fn set_mode_ino(&mut self, ino: Ino, mode: u32) {
        let inode = self.inode_mut(ino);
        inode.mode = mode & 0o7777;
        inode.ctime_ns = now_ns();
    }

    /// Sets a file's modification and access times (ns since the epoch).
    pub fn set_times(
        &mut self,
        h: &Handle,
        atime_ns: Option<u64>,
        mtime_ns: Option<u64>,
    ) -> io::Result<()> {
        self.check(h)?;
        let inode = self.inode_mut(h.ino);
        if let Some(t) = atime_ns {
            inode.atime_ns = t;
        }
        if let Some(t) = mtime_ns {
            inode.mtime_ns = t;
        }
        inode.ctime_ns = now_ns();
        Ok(())
    }

    // ----- open files -----------------------------------------------------

    fn check(&self, h: &Handle) -> io::Result<()> {
        if h.boot != self.boot || !self.inodes.contains_key(&h.ino) {
            // The host crashed since this handle was opened.
            return Err(errno(libc::EBADF));
        }
        Ok(())
    }

    /// `open`, with std's checks of the flag combination.
    pub fn open(&mut self, path: &Path, flags: &OpenFlags) -> io::Result<Handle> {
        if flags.write || flags.append || flags.truncate || flags.create || flags.create_new {
            self.changing(path);
        }
        self.see(path);
        let custom = flags.custom_flags;
        // O_TMPFILE includes the O_DIRECTORY bit: compare whole.
        if custom & libc::O_TMPFILE == libc::O_TMPFILE || custom & libc::O_PATH != 0 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "sim: opening {path:?} with O_TMPFILE or O_PATH: the simulated disk does \
                     not support these flags; create a named file instead"
                ),
            ));
        }
        let append = flags.append || custom & libc::O_APPEND != 0;
        let truncate = flags.truncate || custom & libc::O_TRUNC != 0;
        let create_new =
            flags.create_new || (custom & libc::O_CREAT != 0 && custom & libc::O_EXCL != 0);
        let create = flags.create || custom & libc::O_CREAT != 0;
        let write = flags.write || append;
        // std's rules.
        if !flags.read && !flags.write && !flags.append {
            return Err(errno(libc::EINVAL));
        }
        if !flags.write && !flags.append && (flags.truncate || flags.create || flags.create_new) {
            return Err(errno(libc::EINVAL));
        }
        if flags.append && flags.truncate && !flags.create_new {
            return Err(errno(libc::EINVAL));
        }
        let nofollow = custom & libc::O_NOFOLLOW != 0;
        let existing = if create_new {
            match self.lookup(path, false) {
                Ok(_) => return Err(errno(libc::EEXIST)),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => None,
                Err(e) => return Err(e),
            }
        } else {
            match self.lookup(path, !nofollow) {
                Ok(ino) => Some(ino),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) && create => None,
                Err(e) => return Err(e),
            }
        };
        let ino = match existing {
            Some(ino) => {
                let inode = self.inode(ino);
                match inode.kind() {
                    Kind::Symlink => return Err(errno(libc::ELOOP)),
                    Kind::Fifo => {
                        return Err(io::Error::new(
                            io::ErrorKind::Unsupported,
                            format!(
                                "sim: {} is a simulated named pipe (FIFO): open it with \
                                 tokio::net::unix::pipe::OpenOptions, not as a file",
                                path.display()
                            ),
                        ))
                    }
                    Kind::Dir if write => return Err(errno(libc::EISDIR)),
                    Kind::File if custom & libc::O_DIRECTORY != 0 => {
                        return Err(errno(libc::ENOTDIR))
                    }
                    _ => {}
                }
                if (flags.read && inode.mode & 0o400 == 0) || (write && inode.mode & 0o200 == 0) {
                    return Err(errno(libc::EACCES));
                }
                ino
            }
            None => {
                let (dir, name) = self.parent_of(path)?;
                self.check_writable_dir(dir)?;
                let ino = self.alloc(Body::File(FileData::default()), flags.mode & !UMASK);
                self.link_name(dir, name, ino);
                ino
            }
        };
        let handle = Handle {
            ino,
            boot: self.boot,
            sync_writes: custom & (libc::O_SYNC | libc::O_DSYNC) != 0,
            append,
            read: flags.read,
            write,
        };
        self.inode_mut(ino).open += 1;
        if truncate && self.inode(ino).kind() == Kind::File {
            self.set_len(&handle, 0)?;
        }
        Ok(handle)
    }

    /// Another handle on the same open file (`try_clone`).
    pub fn dup(&mut self, h: &Handle) -> io::Result<Handle> {
        self.check(h)?;
        self.inode_mut(h.ino).open += 1;
        Ok(*h)
    }

    /// `close`.
    pub fn close(&mut self, h: &Handle) {
        if self.check(h).is_err() {
            return;
        }
        let inode = self.inode_mut(h.ino);
        assert!(
            inode.open > 0,
            "sim-fs: closing inode {} with no open handle",
            h.ino
        );
        inode.open -= 1;
        self.release_if_dead(h.ino);
    }

    fn file_mut(&mut self, ino: Ino) -> io::Result<&mut FileData> {
        match &mut self.inode_mut(ino).body {
            Body::File(f) => Ok(f),
            Body::Dir(_) => Err(errno(libc::EISDIR)),
            Body::Symlink(_) | Body::Fifo => Err(errno(libc::EINVAL)),
        }
    }

    /// `pread`.
    pub fn read_at(&mut self, h: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.check(h)?;
        if !h.read {
            return Err(errno(libc::EBADF));
        }
        self.file_mut(h.ino)?;
        if self.chance(self.config.read_error_rate) {
            self.notes.push(format!("fs eio read ino={}", h.ino));
            return Err(errno(libc::EIO));
        }
        let n = match &self.inode(h.ino).body {
            Body::File(f) => f.read_at(offset, buf),
            _ => unreachable!("checked to be a file"),
        };
        if n > 0 && self.chance(self.config.corruption_rate) {
            let node = self.node;
            let bit = decision::below(
                || format!("disk {node} damage"),
                &mut self.rng,
                n as u64 * 8,
            );
            buf[(bit / 8) as usize] ^= 1 << (bit % 8);
            self.notes.push(format!(
                "fs corrupt read ino={} bit={}",
                h.ino,
                offset * 8 + bit
            ));
        }
        self.inode_mut(h.ino).atime_ns = now_ns();
        Ok(n)
    }

    /// `pwrite`, or an append when the handle appends. Returns the bytes
    /// written and the offset after them.
    pub fn write_at(&mut self, h: &Handle, offset: u64, bytes: &[u8]) -> io::Result<(usize, u64)> {
        self.check(h)?;
        if !h.write {
            return Err(errno(libc::EBADF));
        }
        let len = self.file_mut(h.ino)?.len();
        let offset = if h.append { len } else { offset };
        if self.chance(self.config.write_error_rate) {
            self.notes.push(format!("fs eio write ino={}", h.ino));
            return Err(errno(libc::EIO));
        }
        let end = offset.saturating_add(bytes.len() as u64);
        let growth = end.saturating_sub(len);
        let room = self.config.capacity_bytes.saturating_sub(self.used_bytes);
        let n = if growth > room {
            // A short write up to the space there is.
            let fits = (len + room).saturating_sub(offset) as usize;
            if fits == 0 {
                self.notes.push(format!("fs enospc ino={}", h.ino));
                return Err(errno(libc::ENOSPC));
            }
            fits.min(bytes.len())
        } else {
            bytes.len()
        };
        let file = self.file_mut(h.ino)?;
        file.write_at(offset, &bytes[..n]);
        let new_len = file.len();
        self.used_bytes += new_len - len;
        let now = now_ns();
        let inode = self.inode_mut(h.ino);
        inode.mtime_ns = now;
        inode.ctime_ns = now;
        if h.sync_writes {
            self.sync(h)?;
        }
        Ok((n, offset + n as u64))
    }

    /// The length of an open file.
    pub fn len(&self, h: &Handle) -> io::Result<u64> {
        self.check(h)?;
        Ok(self.inode(h.ino).len())
    }

    /// `ftruncate`.
    pub fn set_len(&mut self, h: &Handle, len: u64) -> io::Result<()> {
        self.check(h)?;
        if !h.write {
            return Err(errno(libc::EINVAL));
        }
        let old = self.file_mut(h.ino)?.len();
        if len > old && len - old > self.config.capacity_bytes.saturating_sub(self.used_bytes) {
            return Err(errno(libc::ENOSPC));
        }
        self.file_mut(h.ino)?.set_len(len);
        self.used_bytes = self.used_bytes + len - old;
        let now = now_ns();
        let inode = self.inode_mut(h.ino);
        inode.mtime_ns = now;
        inode.ctime_ns = now;
        Ok(())
    }

    /// `fsync` (and `fdatasync`): a file's data becomes durable; a
    /// directory's entries do.
    pub fn sync(&mut self, h: &Handle) -> io::Result<()> {
        self.check(h)?;
        let ino = h.ino;
        match self.inode(ino).kind() {
            Kind::Dir => {
                if let Some(last) = self.journal.iter().rposition(|op| op.touches(ino)) {
                    self.commit(last + 1);
                }
                Ok(())
            }
            Kind::File => {
                let dirty = matches!(&self.inode(ino).body, Body::File(f) if f.is_dirty());
                if dirty && self.chance(self.config.sync_error_rate) {
                    self.file_mut(ino)?.drop_dirty();
                    self.notes
                        .push(format!("fs eio fsync ino={ino} (dirty pages dropped)"));
                    return Err(errno(libc::EIO));
                }
                self.file_mut(ino)?.sync();
                Ok(())
            }
            Kind::Symlink | Kind::Fifo => Ok(()),
        }
    }

    // ----- durability -----------------------------------------------------

    /// Makes the first `count` journal entries durable.
    fn commit(&mut self, count: usize) {
        assert!(count <= self.journal.len(), "committing past the journal");
        for op in self.journal.drain(..count).collect::<Vec<_>>() {
            apply(&mut self.durable_dirs, &self.inodes, op);
        }
        self.collect_garbage();
    }

    /// Forgets inodes that no tree, journal entry or handle can reach.
    fn collect_garbage(&mut self) {
        let mut live: BTreeSet<Ino> = BTreeSet::new();
        live.insert(ROOT);
        for entries in self.durable_dirs.values() {
            live.extend(entries.values().copied());
        }
        for op in &self.journal {
            if let NsOp::Link { ino, .. } = op {
                live.insert(*ino);
            }
        }
        self.inodes
            .retain(|ino, inode| live.contains(ino) || inode.nlink > 0 || inode.open > 0);
        self.durable_dirs.retain(|ino, _| live.contains(ino));
    }

    /// A crash of the host: every handle closes, a prefix of the
    /// uncommitted namespace changes survives, and every file's unsynced
    /// writes are resolved sector by sector. Draws from the seed.
    pub fn crash(&mut self) {
        self.boot += 1;
        let pending = self.journal.len();
        let node = self.node;
        let kept = decision::below(
            || format!("disk {node} crash"),
            &mut self.rng,
            pending as u64 + 1,
        ) as usize;
        self.commit(kept);
        self.journal.clear();
        self.notes.push(format!(
            "fs crash host={}: namespace changes kept {kept} of {pending}",
            self.node
        ));
        // The current tree becomes the durable one.
        let reachable = self.durable_reachable();
        self.inodes.retain(|ino, _| reachable.contains(ino));
        for inode in self.inodes.values_mut() {
            inode.open = 0;
            inode.nlink = 0;
        }
        let dirs: Vec<(Ino, BTreeMap<OsString, Ino>)> = self
            .inodes
            .iter()
            .filter(|(_, inode)| inode.kind() == Kind::Dir)
            .map(|(ino, _)| {
                (
                    *ino,
                    self.durable_dirs.get(ino).cloned().unwrap_or_default(),
                )
            })
            .collect();
        self.inode_mut(ROOT).nlink = 1;
        for (dir, entries) in dirs {
            // Its own ".".
            self.inode_mut(dir).nlink += 1;
            for child in entries.values() {
                let is_dir = self.inode(*child).kind() == Kind::Dir;
                // The child's name, and its ".." in here.
                self.inode_mut(*child).nlink += 1;
                if is_dir {
                    self.inode_mut(dir).nlink += 1;
                }
            }
            *self.entries_mut(dir) = entries;
        }
        self.used_bytes = 0;
        let files: Vec<Ino> = self.inodes.keys().copied().collect();
        for ino in files {
            let inode = self.inodes.get_mut(&ino).expect("a live inode");
            if let Body::File(f) = &mut inode.body {
                let rng = &mut self.rng;
                let node = self.node;
                let outcome =
                    f.crash(&mut |n| decision::below(|| format!("disk {node} crash"), rng, n));
                self.used_bytes += f.len();
                if outcome.sectors_lost + outcome.sectors_kept > 0
                    || outcome.len_before != outcome.len_after
                {
                    self.notes.push(format!(
                        "fs crash ino={ino}: len {}->{}, dirty sectors kept {} lost {}",
                        outcome.len_before,
                        outcome.len_after,
                        outcome.sectors_kept,
                        outcome.sectors_lost
                    ));
                }
            }
        }
        self.durable_dirs.retain(|ino, _| reachable.contains(ino));
    }

    fn durable_reachable(&self) -> BTreeSet<Ino> {
        let mut seen = BTreeSet::new();
        let mut queue = vec![ROOT];
        // Bounded: each inode enters once.
        while let Some(ino) = queue.pop() {
            if !seen.insert(ino) {
                continue;
            }
            if let Some(entries) = self.durable_dirs.get(&ino) {
                queue.extend(entries.values().copied());
            }
        }
        seen
    }
}

/// Applies one namespace change to the durable tree.
fn apply(
    durable: &mut BTreeMap<Ino, BTreeMap<OsString, Ino>>,
    inodes: &BTreeMap<Ino, Inode>,
    op: NsOp,
) {
    match op {
        NsOp::Link { dir, name, ino } => {
            if inodes.get(&ino).is_some_and(|i| i.kind() == Kind::Dir) {
                durable.entry(ino).or_default();
            }
            durable.entry(dir).or_default().insert(name, ino);
        }
        NsOp::Unlink { dir, name } => {
            if let Some(entries) = durable.get_mut(&dir) {
                entries.remove(&name);
            }
        }
        NsOp::Rename {
            from_dir,
            from,
            to_dir,
            to,
        } => {
            let moved = durable.get_mut(&from_dir).and_then(|e| e.remove(&from));
            if let Some(ino) = moved {
                durable.entry(to_dir).or_default().insert(to, ino);
            }
        }
    }
}

/// Queues `path`'s components at the front of `pending` (a symlink's
/// target goes before what followed the link).
fn push_components(pending: &mut VecDeque<OsString>, path: &Path, front: bool) {
    let mut parts: Vec<OsString> = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir => parts.push(OsString::from("/")),
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::Normal(name) => parts.push(name.to_os_string()),
            Component::CurDir | Component::Prefix(_) => {}
        }
    }
    if front {
        for part in parts.into_iter().rev() {
            pending.push_front(part);
        }
    } else {
        pending.extend(parts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(seed: u64) -> Disk {
        Disk::new(0, seed, DiskConfig::default(), &skeleton("/work"))
    }

    /// A disk that does not mirror the real filesystem: unit tests see
    /// only what they make.
    fn skeleton(cwd: &str) -> Skeleton {
        Skeleton {
            cwd: PathBuf::from(cwd),
            tmp: PathBuf::from("/tmp"),
            mirror_real: false,
        }
    }

    fn rw_create() -> OpenFlags {
        OpenFlags {
            read: true,
            write: true,
            create: true,
            ..OpenFlags::default()
        }
    }

    fn write_file(d: &mut Disk, path: &str, bytes: &[u8], sync: bool) {
        let h = d.open(Path::new(path), &rw_create()).unwrap();
        d.write_at(&h, 0, bytes).unwrap();
        if sync {
            d.sync(&h).unwrap();
        }
        d.close(&h);
    }

    fn read_file(d: &mut Disk, path: &str) -> io::Result<Vec<u8>> {
        let flags = OpenFlags {
            read: true,
            ..OpenFlags::default()
        };
        let h = d.open(Path::new(path), &flags)?;
        let mut buf = vec![0; d.len(&h)? as usize];
        let n = d.read_at(&h, 0, &mut buf)?;
        d.close(&h);
        buf.truncate(n);
        Ok(buf)
    }

    fn sync_dir(d: &mut Disk, path: &str) {
        let flags = OpenFlags {
            read: true,
            ..OpenFlags::default()
        };
        let h = d.open(Path::new(path), &flags).unwrap();
        d.sync(&h).unwrap();
        d.close(&h);
    }

    #[test]
    fn errors_have_the_real_kinds() {
        let mut d = disk(1);
        let kind = |r: io::Result<()>| r.unwrap_err().kind();
        assert_eq!(
            kind(d.remove_file(Path::new("/nope"))),
            io::ErrorKind::NotFound
        );
        d.create_dir(Path::new("/a"), 0o777).unwrap();
        assert_eq!(
            kind(d.create_dir(Path::new("/a"), 0o777)),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(
            kind(d.remove_file(Path::new("/a"))),
            io::ErrorKind::IsADirectory
        );
        write_file(&mut d, "/a/f", b"x", false);
        assert_eq!(
            kind(d.remove_dir(Path::new("/a"))),
            io::ErrorKind::DirectoryNotEmpty
        );
        assert_eq!(
            kind(d.create_dir(Path::new("/a/f/g"), 0o777)),
            io::ErrorKind::NotADirectory
        );
        d.set_mode_path(Path::new("/a"), 0o555).unwrap();
        assert_eq!(
            kind(d.create_dir(Path::new("/a/g"), 0o777)),
            io::ErrorKind::PermissionDenied
        );
        d.symlink(Path::new("loop"), Path::new("/loop")).unwrap();
        assert_eq!(
            d.stat_path(Path::new("/loop"), true)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ELOOP)
        );
    }

    #[test]
    fn relative_paths_start_at_the_working_directory() {
        let mut d = disk(1);
        write_file(&mut d, "rel", b"here", false);
        assert_eq!(read_file(&mut d, "/work/rel").unwrap(), b"here");
        d.symlink(Path::new("../tmp"), Path::new("/work/t"))
            .unwrap();
        write_file(&mut d, "t/x", b"via link", false);
        assert_eq!(read_file(&mut d, "/tmp/x").unwrap(), b"via link");
        assert_eq!(
            d.canonicalize(Path::new("t/x")).unwrap(),
            Path::new("/tmp/x")
        );
    }

    #[test]
    fn a_synced_file_in_a_synced_directory_survives_every_crash() {
        for seed in 0..200 {
            let mut d = disk(seed);
            d.create_dir(Path::new("/data"), 0o777).unwrap();
            sync_dir(&mut d, "/");
            write_file(&mut d, "/data/log", b"acknowledged", true);
            sync_dir(&mut d, "/data");
            write_file(&mut d, "/data/other", b"maybe", false);
            d.crash();
            assert_eq!(
                read_file(&mut d, "/data/log").unwrap(),
                b"acknowledged",
                "seed {seed}"
            );
        }
    }

    #[test]
    fn without_the_directory_sync_a_new_file_can_vanish() {
        let mut vanished = 0;
        let mut kept = 0;
        for seed in 0..100 {
            let mut d = disk(seed);
            write_file(&mut d, "/tmp/log", b"acknowledged", true);
            d.crash();
            match read_file(&mut d, "/tmp/log") {
                Ok(bytes) => {
                    assert_eq!(bytes, b"acknowledged");
                    kept += 1;
                }
                Err(e) => {
                    assert_eq!(e.kind(), io::ErrorKind::NotFound);
                    vanished += 1;
                }
            }
        }
        assert!(vanished > 0 && kept > 0, "vanished {vanished}, kept {kept}");
    }

    #[test]
    fn rename_is_all_or_nothing_across_a_crash() {
        let mut outcomes = BTreeSet::new();
        for seed in 0..100 {
            let mut d = disk(seed);
            write_file(&mut d, "/tmp/new", b"v2", true);
            write_file(&mut d, "/tmp/current", b"v1", true);
            sync_dir(&mut d, "/tmp");
            d.rename(Path::new("/tmp/new"), Path::new("/tmp/current"))
                .unwrap();
            d.crash();
            let current = read_file(&mut d, "/tmp/current").unwrap();
            let new_exists = d.stat_path(Path::new("/tmp/new"), false).is_ok();
            // Either the old state (v1 and new) or the new one (v2 alone).
            match (current.as_slice(), new_exists) {
                (b"v1", true) | (b"v2", false) => {}
                other => panic!("seed {seed}: an impossible state {other:?}"),
            }
            outcomes.insert(current);
        }
        assert_eq!(outcomes.len(), 2, "both outcomes happen on some seed");
    }

    #[test]
    fn capacity_gives_short_writes_then_enospc() {
        let mut d = Disk::new(
            0,
            1,
            DiskConfig {
                capacity_bytes: 1000,
                ..DiskConfig::default()
            },
            &skeleton("/"),
        );
        let h = d.open(Path::new("/f"), &rw_create()).unwrap();
        assert_eq!(d.write_at(&h, 0, &[1; 800]).unwrap().0, 800);
        assert_eq!(d.write_at(&h, 800, &[1; 800]).unwrap().0, 200);
        let err = d.write_at(&h, 1000, &[1; 10]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        // Overwriting in place needs no room.
        assert_eq!(d.write_at(&h, 0, &[2; 10]).unwrap().0, 10);
        d.close(&h);
        d.remove_file(Path::new("/f")).unwrap();
        assert_eq!(d.used_bytes(), 0);
    }

    #[test]
    fn an_unlinked_open_file_stays_readable() {
        let mut d = disk(3);
        write_file(&mut d, "/tmp/f", b"still here", false);
        let h = d
            .open(
                Path::new("/tmp/f"),
                &OpenFlags {
                    read: true,
                    ..OpenFlags::default()
                },
            )
            .unwrap();
        d.remove_file(Path::new("/tmp/f")).unwrap();
        let mut buf = [0; 10];
        assert_eq!(d.read_at(&h, 0, &mut buf).unwrap(), 10);
        assert_eq!(&buf, b"still here");
        d.close(&h);
    }
}
