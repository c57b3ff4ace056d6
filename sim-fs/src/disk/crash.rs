//! Crash resolution: what a crash of the host keeps of its disk. Synced
//! data stays; unsynced writes are lost, applied or torn at sector
//! granularity; a prefix of the unsynced namespace changes survives, so a
//! rename is all or nothing.

use super::*;

/// How many lost namespace changes a crash's note names.
const LOST_SHOWN_MAX: usize = 8;

impl Disk {
    /// A namespace change in words, by path.
    fn describe_change(&self, op: &NsOp) -> String {
        let at = |dir: Ino, name: &OsStr| {
            let dir = self.name_of(dir);
            let sep = if dir.ends_with('/') { "" } else { "/" };
            format!("{dir}{sep}{}", name.to_string_lossy())
        };
        match op {
            NsOp::Link { dir, name, .. } => format!("create {}", at(*dir, name)),
            NsOp::Unlink { dir, name } => format!("remove {}", at(*dir, name)),
            NsOp::Rename {
                from_dir,
                from,
                to_dir,
                to,
            } => format!("rename {} -> {}", at(*from_dir, from), at(*to_dir, to)),
        }
    }

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
        let inodes = &self.inodes;
        self.names.retain(|ino, _| inodes.contains_key(ino));
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
        // Named before the names change: what the crash takes away.
        let lost: Vec<String> = self
            .journal
            .iter()
            .skip(kept)
            .take(LOST_SHOWN_MAX)
            .map(|op| self.describe_change(op))
            .collect();
        self.commit(kept);
        self.journal.clear();
        let mut note = format!(
            "fs crash host={}: namespace changes kept {kept} of {pending}",
            self.node
        );
        if !lost.is_empty() {
            note.push_str("; lost: ");
            note.push_str(&lost.join(", "));
            if pending - kept > lost.len() {
                note.push_str(&format!(" and {} more", pending - kept - lost.len()));
            }
        }
        self.notes.push(note);
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
        self.refresh_names();
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
                    let name = self.name_of(ino);
                    self.notes.push(format!(
                        "fs crash {name}: len {}->{}, unsynced sectors kept {} lost {}",
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

    /// After a crash, names files by the tree that survived (a rename the
    /// crash took back gives the file its old name again).
    fn refresh_names(&mut self) {
        let mut names = BTreeMap::new();
        let mut queue = vec![(ROOT, PathBuf::from("/"))];
        // Bounded: each inode enters once.
        while let Some((ino, path)) = queue.pop() {
            if names.contains_key(&ino) {
                continue;
            }
            if let Ok(entries) = self.entries(ino) {
                for (name, child) in entries {
                    queue.push((*child, path.join(name)));
                }
            }
            names.insert(ino, path);
        }
        self.names = names;
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
