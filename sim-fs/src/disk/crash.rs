//! Crash resolution: what a crash of the host keeps of its disk. Synced
//! data stays; unsynced writes are lost, applied or torn at sector
//! granularity; a prefix of the unsynced namespace changes survives, so a
//! rename is all or nothing.

use super::*;

impl Disk {
    /// Forgets inodes that no tree, journal entry or handle can reach.
    pub(super) fn collect_garbage(&mut self) {
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

    pub(super) fn durable_reachable(&self) -> BTreeSet<Ino> {
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
