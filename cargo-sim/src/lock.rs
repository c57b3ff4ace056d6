//! The user's `Cargo.lock`, never lost.
//!
//! The patch needs a lock that names the facade, and cargo reads the lock
//! only from the workspace root. So while cargo resolves and builds (and
//! only then: tests run after the lock is back), the root holds the
//! simulation build's lock. Before it is written, the user's lock is saved
//! to a journal in the simulation target directory. The journal is removed
//! once the user's lock is back. A `cargo sim` that was killed (even with
//! `kill -9`) leaves the journal behind, and the next `cargo sim` puts the
//! lock back from it before doing anything else.
//!
//! One `cargo sim` at a time holds the swap (an `flock` on the journal's
//! lock file); another waits for it.

use std::fs::File;
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// The first bytes of a journal whose workspace had no lock file.
const ABSENT: &[u8] = b"# cargo-sim: the workspace had no Cargo.lock\n";

/// Where a workspace's lock is swapped, and how to put it back.
pub struct LockFiles {
    /// The user's `Cargo.lock`.
    pub lock: PathBuf,
    /// The simulation build's lock, kept between runs.
    pub sim_lock: PathBuf,
    /// Which user lock the kept one was made from (its FNV-1a hash).
    pub sim_lock_origin: PathBuf,
    /// The saved user lock while a swap is in progress.
    pub journal: PathBuf,
    /// Held with `flock` during a swap.
    pub mutex: PathBuf,
}

impl LockFiles {
    /// The files for the workspace at `root`, with the simulation target
    /// directory `target`.
    pub fn new(root: &Path, target: &Path) -> LockFiles {
        // One set per workspace: a shared CARGO_TARGET_DIR may serve several.
        let key = format!("{:016x}", fnv1a(root.as_os_str().as_encoded_bytes()));
        LockFiles {
            lock: root.join("Cargo.lock"),
            sim_lock: target.join(format!("Cargo.sim.{key}.lock")),
            sim_lock_origin: target.join(format!("Cargo.sim.{key}.lock.origin")),
            journal: target.join(format!("Cargo.lock.{key}.journal")),
            mutex: target.join(format!("Cargo.lock.{key}.mutex")),
        }
    }

    /// Takes the swap mutex (waiting for another `cargo sim`), then puts the
    /// user's lock back from a journal an interrupted run left.
    pub fn acquire(&self) -> Result<Held<'_>, String> {
        let mutex = File::create(&self.mutex)
            .map_err(|e| format!("cannot create {}: {e}", self.mutex.display()))?;
        // SAFETY: flock on a descriptor we own.
        if unsafe { libc::flock(mutex.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            eprintln!("sim: waiting for another cargo sim in this workspace to finish its build");
            // SAFETY: as above; blocking this time.
            if unsafe { libc::flock(mutex.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(format!(
                    "cannot lock {}: {}",
                    self.mutex.display(),
                    std::io::Error::last_os_error()
                ));
            }
        }
        let held = Held {
            files: self,
            _mutex: mutex,
            swapped: false,
        };
        held.repair()?;
        Ok(held)
    }
}

/// The swap mutex, held. Dropping it puts the user's lock back.
pub struct Held<'a> {
    files: &'a LockFiles,
    _mutex: File,
    swapped: bool,
}

impl Held<'_> {
    fn repair(&self) -> Result<(), String> {
        let Ok(saved) = std::fs::read(&self.files.journal) else {
            return Ok(());
        };
        self.put_back(&saved)?;
        eprintln!(
            "sim: an earlier cargo sim was interrupted while it built; {} is restored",
            self.files.lock.display()
        );
        Ok(())
    }

    fn put_back(&self, saved: &[u8]) -> Result<(), String> {
        let files = self.files;
        let restored = if saved.starts_with(ABSENT) {
            match std::fs::remove_file(&files.lock) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            }
        } else {
            write_durably(&files.lock, saved)
        };
        restored.map_err(|e| {
            format!(
                "could not restore {}: {e}. Your lock file is saved in {}; copy it back.",
                files.lock.display(),
                files.journal.display()
            )
        })?;
        let _ = std::fs::remove_file(&files.journal);
        Ok(())
    }

    /// Saves the user's lock to the journal and puts the simulation build's
    /// lock in its place: the last run's, when it was made from this very
    /// user lock; otherwise the user's stays, to be pointed at the facade,
    /// so the simulation build uses the versions the user's build does
    /// (after a `cargo update`, a new dependency, a deleted lock).
    pub fn swap_in(&mut self) -> Result<(), String> {
        let files = self.files;
        let original = std::fs::read(&files.lock).ok();
        let saved = original.clone().unwrap_or_else(|| ABSENT.to_vec());
        write_durably(&files.journal, &saved)
            .map_err(|e| format!("cannot write {}: {e}", files.journal.display()))?;
        self.swapped = true;
        let origin = std::fs::read_to_string(&files.sim_lock_origin).unwrap_or_default();
        if origin.trim() == origin_of(&saved) {
            if let Some(bytes) = std::fs::read(&files.sim_lock)
                .ok()
                .filter(|b| whole_lock(b))
            {
                std::fs::write(&files.lock, bytes)
                    .map_err(|e| format!("cannot write {}: {e}", files.lock.display()))?;
            }
        }
        Ok(())
    }

    /// Keeps the simulation build's lock for next time and puts the user's
    /// back. Idempotent.
    pub fn swap_out(&mut self) -> Result<(), String> {
        if !self.swapped {
            return Ok(());
        }
        let files = self.files;
        let saved = std::fs::read(&files.journal)
            .map_err(|e| format!("the journal {} is gone: {e}", files.journal.display()))?;
        // The kept lock is written whole or not at all (a full disk left a
        // truncated one that every later build failed to parse), and its
        // origin only after it.
        let _ = std::fs::remove_file(&files.sim_lock_origin);
        if let Some(bytes) = std::fs::read(&files.lock).ok().filter(|b| whole_lock(b)) {
            if write_replacing(&files.sim_lock, &bytes).is_ok() {
                let _ = std::fs::write(&files.sim_lock_origin, origin_of(&saved));
            }
        }
        self.put_back(&saved)?;
        self.swapped = false;
        Ok(())
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Err(message) = self.swap_out() {
            eprintln!("sim: error: {message}");
        }
    }
}

/// Whether `bytes` look like a whole lock file as cargo writes one: not
/// empty, ending with its last line's newline (a write cut short by a full
/// disk ends mid-line).
fn whole_lock(bytes: &[u8]) -> bool {
    bytes.ends_with(b"\n")
}

/// Writes `path` through a temporary file renamed over it: a reader sees
/// the old contents or the new, never a part.
fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = path.with_extension("lock.partial");
    let written = write_durably(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn write_durably(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// What the kept simulation lock was made from: the user's lock's bytes
/// (or the marker of none), hashed.
fn origin_of(saved: &[u8]) -> String {
    format!("{:016x}", fnv1a(saved))
}

/// FNV-1a: a stable name for a workspace's files.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept lock cut short (a full disk) is not used, and a replacing
    /// write leaves the whole new contents or the old ones.
    #[test]
    fn a_lock_cut_short_is_not_whole_and_a_replacing_write_is() {
        assert!(whole_lock(b"version = 4\n"));
        assert!(!whole_lock(
            b"source = \"registry+https://github.com/rust-lang/c"
        ));
        assert!(!whole_lock(b""));
        let dir = std::env::temp_dir().join(format!("cargo-sim-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("Cargo.sim.test.lock");
        std::fs::write(&path, b"old\n").unwrap();
        write_replacing(&path, b"new\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
        assert!(!path.with_extension("lock.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
