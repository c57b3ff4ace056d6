//! Durability: the journal of namespace changes and what a sync commits
//! (a file's data, a directory's changes up to its last one).

use super::*;

impl Disk {
    pub(super) fn record(&mut self, op: NsOp) {
        self.journal.push_back(op);
        if self.journal.len() > JOURNAL_MAX {
            self.commit(1);
        }
    }

    /// `fsync` (and `fdatasync`): a file's data becomes durable; a
    /// directory's entries do.
    pub(super) fn sync_inner(&mut self, h: &Handle) -> io::Result<()> {
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
                    let name = self.name_of(ino);
                    self.notes.push(format!(
                        "fs eio fsync {name} (injected; dirty pages dropped)"
                    ));
                    return Err(errno(libc::EIO));
                }
                self.file_mut(ino)?.sync();
                Ok(())
            }
            Kind::Symlink | Kind::Fifo | Kind::Socket => Ok(()),
        }
    }

    // ----- durability -----------------------------------------------------

    /// Makes the first `count` journal entries durable.
    pub(super) fn commit(&mut self, count: usize) {
        assert!(count <= self.journal.len(), "committing past the journal");
        for op in self.journal.drain(..count).collect::<Vec<_>>() {
            apply(&mut self.durable_dirs, &self.inodes, op);
        }
        self.collect_garbage();
    }
}

/// Applies one namespace change to the durable tree.
pub(super) fn apply(
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
