//! File data through open handles: open, read, write, length, and the
//! disk's faults on them (errors, short writes, latency draws).

use super::*;

impl Disk {
    pub(super) fn check(&self, h: &Handle) -> io::Result<()> {
        if h.boot != self.boot || !self.inodes.contains_key(&h.ino) {
            // The host crashed since this handle was opened.
            return Err(errno(libc::EBADF));
        }
        Ok(())
    }

    /// `open`, with std's checks of the flag combination.
    pub(super) fn open_inner(&mut self, path: &Path, flags: &OpenFlags) -> io::Result<Handle> {
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
            self.set_len_inner(&handle, 0)?;
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
            "sim: closing inode {} with no open handle",
            h.ino
        );
        inode.open -= 1;
        self.release_if_dead(h.ino);
    }

    pub(super) fn file_mut(&mut self, ino: Ino) -> io::Result<&mut FileData> {
        match &mut self.inode_mut(ino).body {
            Body::File(f) => Ok(f),
            Body::Dir(_) => Err(errno(libc::EISDIR)),
            Body::Symlink(_) | Body::Fifo | Body::Socket => Err(errno(libc::EINVAL)),
        }
    }

    /// `pread`.
    pub(super) fn read_at_inner(
        &mut self,
        h: &Handle,
        offset: u64,
        buf: &mut [u8],
    ) -> io::Result<usize> {
        self.check(h)?;
        if !h.read {
            return Err(errno(libc::EBADF));
        }
        self.file_mut(h.ino)?;
        if self.chance(self.config.read_error_rate) {
            self.notes
                .push(format!("fs eio read {} (injected)", self.name_of(h.ino)));
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
                "fs corrupt read {} bit={} (injected)",
                self.name_of(h.ino),
                offset * 8 + bit
            ));
        }
        self.inode_mut(h.ino).atime_ns = now_ns();
        Ok(n)
    }

    /// `pwrite`, or an append when the handle appends. Returns the bytes
    /// written and the offset after them.
    pub(super) fn write_at_inner(
        &mut self,
        h: &Handle,
        offset: u64,
        bytes: &[u8],
    ) -> io::Result<(usize, u64)> {
        self.check(h)?;
        if !h.write {
            return Err(errno(libc::EBADF));
        }
        let len = self.file_mut(h.ino)?.len();
        let offset = if h.append { len } else { offset };
        if self.chance(self.config.write_error_rate) {
            self.notes
                .push(format!("fs eio write {} (injected)", self.name_of(h.ino)));
            return Err(errno(libc::EIO));
        }
        let end = offset.saturating_add(bytes.len() as u64);
        let growth = end.saturating_sub(len);
        let room = self.config.capacity_bytes.saturating_sub(self.used_bytes);
        let n = if growth > room {
            // A short write up to the space there is.
            let fits = (len + room).saturating_sub(offset) as usize;
            if fits == 0 {
                self.notes.push(format!(
                    "fs enospc {}: the disk is full",
                    self.name_of(h.ino)
                ));
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
            self.sync_inner(h)?;
        }
        Ok((n, offset + n as u64))
    }

    /// The length of an open file.
    pub fn len(&self, h: &Handle) -> io::Result<u64> {
        self.check(h)?;
        Ok(self.inode(h.ino).len())
    }

    /// `ftruncate`.
    pub(super) fn set_len_inner(&mut self, h: &Handle, len: u64) -> io::Result<()> {
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
}
