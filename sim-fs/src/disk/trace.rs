//! The disk's operations as the trace tells them: each public operation
//! that reads, writes or changes the disk leaves one note, with the path,
//! its arguments and the outcome (bytes, offset, error):
//!
//! ```text
//! fs open /tmp/wal write,create,append -> ok
//! fs write /tmp/wal @0 +4 -> 4
//! fs fsync /tmp/wal -> ok
//! fs rename /tmp/snap.tmp -> /tmp/snap: ok
//! fs set_len /tmp/wal 0 -> ENOSPC
//! ```
//!
//! A file is named by the path it was last opened, created or renamed
//! under (`ino N` when the disk never saw one). So a crash between two
//! operations can be placed from the report's last events alone. The
//! operations themselves are the `*_inner` methods of the other files.

use super::*;

/// The most of a path a note shows: longer ones keep their end.
const PATH_SHOWN_MAX: usize = 120;

/// `e` as its errno's name (`ENOENT`), or its text.
fn outcome_err(e: &io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EEXIST) => "EEXIST",
        Some(libc::EIO) => "EIO",
        Some(libc::ENOSPC) => "ENOSPC",
        Some(libc::EBADF) => "EBADF",
        Some(libc::EISDIR) => "EISDIR",
        Some(libc::ENOTDIR) => "ENOTDIR",
        Some(libc::ENOTEMPTY) => "ENOTEMPTY",
        Some(libc::EACCES) => "EACCES",
        Some(libc::EPERM) => "EPERM",
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::ELOOP) => "ELOOP",
        Some(libc::EXDEV) => "EXDEV",
        Some(code) => return format!("errno {code}"),
        None => return format!("{:?}", e.kind()),
    };
    name.to_string()
}

fn outcome<T>(result: &io::Result<T>, ok: impl FnOnce(&T) -> String) -> String {
    match result {
        Ok(value) => ok(value),
        Err(e) => outcome_err(e),
    }
}

fn shown(path: &Path) -> String {
    let text = path.display().to_string();
    if text.len() <= PATH_SHOWN_MAX {
        return text;
    }
    let mut cut = text.len() - PATH_SHOWN_MAX;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    format!("...{}", &text[cut..])
}

impl Disk {
    /// Whether operations are noted: not while a fresh disk makes its
    /// skeleton.
    fn noting(&self) -> bool {
        self.records_changes
    }

    fn note_op(&mut self, text: String) {
        if self.noting() {
            self.notes.push(text);
        }
    }

    /// Remembers that `path` names what it now names (and its parent
    /// directory its parent), for later notes on inodes.
    fn remember(&mut self, path: &Path) {
        if !self.noting() {
            return;
        }
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        if let Ok(ino) = self.lookup(&absolute, false) {
            self.names.insert(ino, absolute.clone());
        }
        if let Some(parent) = absolute.parent() {
            if let Ok(dir) = self.lookup(parent, true) {
                self.names.insert(dir, parent.to_path_buf());
            }
        }
    }

    /// The path a note gives inode `ino`.
    pub(super) fn name_of(&self, ino: Ino) -> String {
        match self.names.get(&ino) {
            Some(path) => shown(path),
            None if ino == ROOT => "/".to_string(),
            None => format!("ino {ino}"),
        }
    }

    /// `open`, with std's checks of the flag combination.
    pub fn open(&mut self, path: &Path, flags: &OpenFlags) -> io::Result<Handle> {
        let result = self.open_inner(path, flags);
        if result.is_ok() {
            self.remember(path);
        }
        if self.noting() {
            let mut how = Vec::new();
            for (on, word) in [
                (flags.read, "read"),
                (flags.write, "write"),
                (flags.append, "append"),
                (flags.truncate, "truncate"),
                (flags.create, "create"),
                (flags.create_new, "create_new"),
            ] {
                if on {
                    how.push(word);
                }
            }
            let text = format!(
                "fs open {} {} -> {}",
                shown(path),
                how.join(","),
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }

    /// `pread`.
    pub fn read_at(&mut self, h: &Handle, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let result = self.read_at_inner(h, offset, buf);
        if self.noting() {
            let text = format!(
                "fs read {} @{offset} +{} -> {}",
                self.name_of(h.ino),
                buf.len(),
                outcome(&result, |n| n.to_string())
            );
            self.note_op(text);
        }
        result
    }

    /// `pwrite`, or an append when the handle appends. Returns the bytes
    /// written and the offset after them.
    pub fn write_at(&mut self, h: &Handle, offset: u64, bytes: &[u8]) -> io::Result<(usize, u64)> {
        let result = self.write_at_inner(h, offset, bytes);
        if self.noting() {
            let text = match &result {
                Ok((n, end)) => format!(
                    "fs write {} @{} +{} -> {n}",
                    self.name_of(h.ino),
                    *end - *n as u64,
                    bytes.len()
                ),
                Err(e) => format!(
                    "fs write {} @{offset} +{} -> {}",
                    self.name_of(h.ino),
                    bytes.len(),
                    outcome_err(e)
                ),
            };
            self.note_op(text);
        }
        result
    }

    /// `ftruncate`.
    pub fn set_len(&mut self, h: &Handle, len: u64) -> io::Result<()> {
        let result = self.set_len_inner(h, len);
        if self.noting() {
            let text = format!(
                "fs set_len {} {len} -> {}",
                self.name_of(h.ino),
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }

    /// `fsync` (and `fdatasync`): a file's data becomes durable; a
    /// directory's entries do.
    pub fn sync(&mut self, h: &Handle) -> io::Result<()> {
        let result = self.sync_inner(h);
        if self.noting() {
            let dir = self
                .inodes
                .get(&h.ino)
                .is_some_and(|inode| inode.kind() == Kind::Dir);
            let text = format!(
                "fs fsync {}{} -> {}",
                self.name_of(h.ino),
                if dir { " (dir)" } else { "" },
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }

    /// Notes a namespace operation on `path`, remembering what it names.
    fn note_path_op(&mut self, op: &str, path: &Path, result: &io::Result<()>) {
        if result.is_ok() {
            self.remember(path);
        }
        if self.noting() {
            let text = format!(
                "fs {op} {} -> {}",
                shown(path),
                outcome(result, |_| "ok".into())
            );
            self.note_op(text);
        }
    }

    /// `mkdir`.
    pub fn create_dir(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        let result = self.create_dir_inner(path, mode);
        self.note_path_op("create_dir", path, &result);
        result
    }

    /// `mkdir -p`.
    pub fn create_dir_all(&mut self, path: &Path, mode: u32) -> io::Result<()> {
        let result = self.create_dir_all_inner(path, mode);
        self.note_path_op("create_dir_all", path, &result);
        result
    }

    /// `rmdir`.
    pub fn remove_dir(&mut self, path: &Path) -> io::Result<()> {
        let result = self.remove_dir_inner(path);
        self.note_path_op("remove_dir", path, &result);
        result
    }

    /// `unlink`.
    pub fn remove_file(&mut self, path: &Path) -> io::Result<()> {
        let result = self.remove_file_inner(path);
        self.note_path_op("remove_file", path, &result);
        result
    }

    /// `rm -r`: what `std::fs::remove_dir_all` does (symlinks are removed,
    /// never followed).
    pub fn remove_dir_all(&mut self, path: &Path) -> io::Result<()> {
        let result = self.remove_dir_all_inner(path);
        self.note_path_op("remove_dir_all", path, &result);
        result
    }

    /// `rename`: atomic while the host runs; replaces a file, or an empty
    /// directory, at the destination.
    pub fn rename(&mut self, from: &Path, to: &Path) -> io::Result<()> {
        let result = self.rename_inner(from, to);
        if result.is_ok() {
            self.remember(to);
        }
        if self.noting() {
            let text = format!(
                "fs rename {} -> {}: {}",
                shown(from),
                shown(to),
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }

    /// `link`: a second name for a file.
    pub fn hard_link(&mut self, src: &Path, dst: &Path) -> io::Result<()> {
        let result = self.hard_link_inner(src, dst);
        if self.noting() {
            let text = format!(
                "fs hard_link {} -> {}: {}",
                shown(src),
                shown(dst),
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }

    /// `symlink`: `link` pointing at `target`.
    pub fn symlink(&mut self, target: &Path, link: &Path) -> io::Result<()> {
        let result = self.symlink_inner(target, link);
        if self.noting() {
            let text = format!(
                "fs symlink {} -> {}: {}",
                shown(link),
                shown(target),
                outcome(&result, |_| "ok".into())
            );
            self.note_op(text);
        }
        result
    }
}
