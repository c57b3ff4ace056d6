//! The real filesystem beneath a disk: directories that mirror real ones
//! are filled on first sight, and changes outside the temporary directory
//! are recorded (so `std::fs` sends those paths here, and the run's end
//! lists them).

use super::*;

impl Disk {
    /// Brings the real entries on `path`'s way into this disk, for the
    /// directories that mirror real ones. Each is looked up once; then it
    /// is the host's, to change or remove.
    /// `path` made absolute (from the working directory) and normalized.
    pub(super) fn absolute(&self, path: &Path) -> PathBuf {
        sim_os::files::normalize(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        })
    }

    /// Notes a change to `path`: outside the temporary directory, the path
    /// joins `changed_outside` (and the trace says so, for the first few).
    pub(super) fn changing(&mut self, path: &Path) {
        if !self.records_changes {
            return;
        }
        let absolute = self.absolute(path);
        // The scratch area (the temporary directory, not a checkout under
        // it) is always simulated; every other change is recorded.
        if crate::scratch::is_scratch(&absolute) || self.changed_outside.contains(&absolute) {
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

    pub(super) fn see(&mut self, path: &Path) {
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
    pub(super) fn see_all(&mut self, dir: Ino) {
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
    pub(super) fn import(&mut self, dir: Ino, name: &OsStr) -> Option<Ino> {
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
}
