//! The namespace: the directory tree of inodes, path walks (symlinks
//! included), and the operations on names (create, link, unlink, rename,
//! list, stat, modes and times). Each change is journaled for durability.

use super::*;

impl Disk {
    pub(super) fn entries(&self, dir: Ino) -> io::Result<&BTreeMap<OsString, Ino>> {
        match &self.inode(dir).body {
            Body::Dir(entries) => Ok(entries),
            _ => Err(errno(libc::ENOTDIR)),
        }
    }

    pub(super) fn entries_mut(&mut self, dir: Ino) -> &mut BTreeMap<OsString, Ino> {
        match &mut self.inode_mut(dir).body {
            Body::Dir(entries) => entries,
            _ => panic!("sim: inode {dir} is not a directory"),
        }
    }

    // ----- paths --------------------------------------------------------

    /// Walks `path` and returns the inodes from the root to its end, with
    /// their names. `follow_last` follows a symlink in the last component.
    pub(super) fn walk(&self, path: &Path, follow_last: bool) -> io::Result<Vec<(Ino, OsString)>> {
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
            // Passing through a directory takes its search (x) permission,
            // as for the owner on Linux (the other bits are checked so too).
            if self.inode(here).kind() == Kind::Dir && self.inode(here).mode & 0o100 == 0 {
                return Err(errno(libc::EACCES));
            }
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

    pub(super) fn lookup(&self, path: &Path, follow_last: bool) -> io::Result<Ino> {
        Ok(self.walk(path, follow_last)?.last().expect("non-empty").0)
    }

    /// The directory that holds `path`'s last component, and that name.
    pub(super) fn parent_of(&self, path: &Path) -> io::Result<(Ino, OsString)> {
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

    pub(super) fn check_writable_dir(&self, dir: Ino) -> io::Result<()> {
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

    pub(super) fn link_name(&mut self, dir: Ino, name: OsString, ino: Ino) {
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

    pub(super) fn unlink_name(&mut self, dir: Ino, name: &OsStr) -> Ino {
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

    pub(super) fn drop_link(&mut self, dir: Ino, ino: Ino) {
        let is_dir = self.inode(ino).kind() == Kind::Dir;
        let inode = self.inode_mut(ino);
        inode.nlink = inode.nlink.saturating_sub(if is_dir { 2 } else { 1 });
        inode.ctime_ns = now_ns();
        if is_dir {
            self.inode_mut(dir).nlink -= 1;
        }
        self.release_if_dead(ino);
    }

    pub(super) fn touch_dir(&mut self, dir: Ino) {
        let now = now_ns();
        let inode = self.inode_mut(dir);
        inode.mtime_ns = now;
        inode.ctime_ns = now;
    }

    /// An inode with no names and no handles frees its space (its bytes
    /// stay for a crash that brings a name back).
    pub(super) fn release_if_dead(&mut self, ino: Ino) {
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
    pub(super) fn create_dir_inner(&mut self, path: &Path, mode: u32) -> io::Result<()> {
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
    pub(super) fn create_dir_all_inner(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        self.see(path);
        match self.lookup(path, true) {
            Ok(ino) if self.inode(ino).kind() == Kind::Dir => return Ok(()),
            Ok(_) => return Err(errno(libc::EEXIST)),
            Err(_) => {}
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.create_dir_all_inner(parent, mode)?;
        }
        match self.create_dir_inner(path, mode) {
            // Someone made it in between, or it ends in "..".
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => match self.lookup(path, true) {
                Ok(ino) if self.inode(ino).kind() == Kind::Dir => Ok(()),
                _ => Err(e),
            },
            other => other,
        }
    }

    /// `rmdir`.
    pub(super) fn remove_dir_inner(&mut self, path: &Path) -> io::Result<()> {
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
    pub(super) fn remove_file_inner(&mut self, path: &Path) -> io::Result<()> {
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
    pub(super) fn remove_dir_all_inner(&mut self, path: &Path) -> io::Result<()> {
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

    pub(super) fn remove_tree(&mut self, path: PathBuf, budget: &mut usize) -> io::Result<()> {
        assert!(*budget > 0, "sim: a directory cycle under {path:?}");
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
                self.remove_file_inner(&child)?;
            }
        }
        self.remove_dir_inner(&path)
    }

    /// `rename`: atomic while the host runs; replaces a file, or an empty
    /// directory, at the destination.
    pub(super) fn rename_inner(&mut self, from: &Path, to: &Path) -> io::Result<()> {
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
    pub(super) fn hard_link_inner(&mut self, src: &Path, dst: &Path) -> io::Result<()> {
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
    pub(super) fn symlink_inner(&mut self, target: &Path, link: &Path) -> io::Result<()> {
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

    /// A Unix socket's file at `path` (a bind): a new one, or the one a
    /// socket bound there before left (binding over it takes it, as the
    /// network does; Linux would want it unlinked first).
    ///
    /// # Errors
    /// `EADDRINUSE` when something else is at `path`; as `mkfifo`.
    pub fn bind_socket_file(&mut self, path: &Path) -> io::Result<()> {
        self.see(path);
        let (dir, name) = self.parent_of(path)?;
        if let Some(&ino) = self.entries(dir)?.get(&name) {
            return match self.inode(ino).kind() {
                Kind::Socket => Ok(()),
                _ => Err(errno(libc::EADDRINUSE)),
            };
        }
        self.check_writable_dir(dir)?;
        self.changing(path);
        let ino = self.alloc(Body::Socket, 0o755 & !UMASK);
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

    pub(super) fn stat_ino(&self, ino: Ino) -> FakeStat {
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

    pub(super) fn set_mode_ino(&mut self, ino: Ino, mode: u32) {
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
}

/// Queues `path`'s components at the front of `pending` (a symlink's
/// target goes before what followed the link).
pub(super) fn push_components(pending: &mut VecDeque<OsString>, path: &Path, front: bool) {
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
