//! A regular file's bytes and their durability.
//!
//! Reads see `data`, the page cache. What a crash keeps is `durable` plus,
//! for each sector written since the last sync, one of the contents that
//! sector has had (or none of them): a later write can reach the disk
//! before an earlier one, and a write can be torn at a sector boundary,
//! but a sector never holds bytes it never held in the page cache.

use std::collections::BTreeMap;

/// The unit a disk writes atomically.
pub const SECTOR_BYTES: u64 = 512;
/// How many past contents of a dirty sector (or past lengths) are kept
/// between syncs. Older ones fold away: fewer possible crash states, all
/// of them still real ones.
const VERSIONS_MAX: usize = 8;

/// A regular file's contents.
#[derive(Default)]
pub(crate) struct FileData {
    /// What reads see.
    pub(crate) data: Vec<u8>,
    /// What survives any crash.
    pub(crate) durable: Vec<u8>,
    /// Sector index to the contents it had after each write since the last
    /// sync, oldest first.
    dirty: BTreeMap<u64, Vec<Box<[u8]>>>,
    /// The lengths the file took since the last sync, oldest first.
    lengths: Vec<u64>,
}

/// What a crash did to one file, for the trace.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CrashOutcome {
    pub(crate) sectors_kept: u64,
    pub(crate) sectors_lost: u64,
    pub(crate) len_before: u64,
    pub(crate) len_after: u64,
}

impl FileData {
    pub(crate) fn len(&self) -> u64 {
        self.data.len() as u64
    }

    /// Whether anything is waiting for a sync.
    pub(crate) fn is_dirty(&self) -> bool {
        !self.dirty.is_empty() || !self.lengths.is_empty()
    }

    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> usize {
        let len = self.len();
        if offset >= len {
            return 0;
        }
        let n = (buf.len() as u64).min(len - offset) as usize;
        let start = offset as usize;
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        n
    }

    pub(crate) fn write_at(&mut self, offset: u64, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let end = offset + bytes.len() as u64;
        if end > self.len() {
            self.data.resize(end as usize, 0);
            self.note_len();
        }
        self.data[offset as usize..end as usize].copy_from_slice(bytes);
        for sector in offset / SECTOR_BYTES..=(end - 1) / SECTOR_BYTES {
            self.snapshot(sector);
        }
    }

    pub(crate) fn set_len(&mut self, len: u64) {
        let old = self.len();
        if len == old {
            return;
        }
        self.data.resize(len as usize, 0);
        self.note_len();
        if len < old {
            // Sectors cut away lose the versions written before the cut:
            // were the cut on disk, those bytes could never come back into
            // a regrown file. (Dropping versions only narrows the crash
            // states to ones that are still real.)
            self.dirty.retain(|&sector, _| sector * SECTOR_BYTES < len);
            // The sector cut in the middle now ends in zeros: that content
            // replaces its earlier versions.
            if !len.is_multiple_of(SECTOR_BYTES) {
                self.dirty.remove(&(len / SECTOR_BYTES));
                self.snapshot(len / SECTOR_BYTES);
            }
        }
    }

    fn note_len(&mut self) {
        if self.lengths.len() == VERSIONS_MAX {
            self.lengths.pop();
        }
        self.lengths.push(self.len());
    }

    fn snapshot(&mut self, sector: u64) {
        let start = (sector * SECTOR_BYTES) as usize;
        let end = (start + SECTOR_BYTES as usize).min(self.data.len());
        let content: Box<[u8]> = self.data[start.min(end)..end].into();
        let versions = self.dirty.entry(sector).or_default();
        if versions.len() == VERSIONS_MAX {
            // Keep the oldest ones and the newest.
            versions.pop();
        }
        versions.push(content);
    }

    /// The smallest length since the last sync: past it, the durable bytes
    /// were cut away, so they never come back.
    fn floor(&self, lengths: &[u64]) -> u64 {
        lengths
            .iter()
            .copied()
            .fold(self.durable.len() as u64, u64::min)
    }

    /// `fsync`: the page cache's dirty sectors and length reach the disk.
    pub(crate) fn sync(&mut self) {
        let floor = self.floor(&self.lengths) as usize;
        self.durable.truncate(floor);
        self.durable.resize(self.data.len(), 0);
        let dirty = std::mem::take(&mut self.dirty);
        for (sector, versions) in dirty {
            let latest = versions.last().expect("a dirty sector has a version");
            self.apply(sector, latest);
        }
        self.lengths.clear();
        debug_assert!(self.durable.len() == self.data.len());
    }

    /// A failed `fsync`: the dirty pages are marked clean without being
    /// written. Reads still see them until a crash.
    pub(crate) fn drop_dirty(&mut self) {
        self.dirty.clear();
        self.lengths.clear();
    }

    fn apply(&mut self, sector: u64, content: &[u8]) {
        let start = (sector * SECTOR_BYTES) as usize;
        let end = (start + content.len()).min(self.durable.len());
        if start < end {
            self.durable[start..end].copy_from_slice(&content[..end - start]);
        }
    }

    /// A crash: the file becomes one state the disk could hold, drawn from
    /// `draw` (a draw in `0..n`).
    pub(crate) fn crash(&mut self, draw: &mut dyn FnMut(u64) -> u64) -> CrashOutcome {
        let len_before = self.len();
        if !self.is_dirty() {
            self.data.clone_from(&self.durable);
            return CrashOutcome {
                len_before,
                len_after: self.len(),
                ..CrashOutcome::default()
            };
        }
        // Length changes are metadata, journaled in order: some prefix of
        // them made it.
        let made_it = draw(self.lengths.len() as u64 + 1) as usize;
        let len = if made_it == 0 {
            self.durable.len() as u64
        } else {
            self.lengths[made_it - 1]
        };
        let floor = self.floor(&self.lengths[..made_it]) as usize;
        self.durable.truncate(floor);
        self.durable.resize(len as usize, 0);
        let mut outcome = CrashOutcome {
            len_before,
            len_after: len,
            ..CrashOutcome::default()
        };
        let dirty = std::mem::take(&mut self.dirty);
        for (sector, versions) in dirty {
            // 0: none of the writes to this sector reached the disk.
            let pick = draw(versions.len() as u64 + 1) as usize;
            if pick == versions.len() {
                outcome.sectors_kept += 1;
            } else {
                outcome.sectors_lost += 1;
            }
            if pick > 0 {
                self.apply(sector, &versions[pick - 1]);
            }
        }
        self.lengths.clear();
        self.data.clone_from(&self.durable);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_runtime::rng::Rng;

    #[test]
    fn synced_data_survives_every_crash() {
        for seed in 0..200 {
            let mut rng = Rng::new(seed, 9);
            let mut f = FileData::default();
            f.write_at(0, &[1; 1500]);
            f.sync();
            f.write_at(1000, &[2; 1000]);
            f.crash(&mut |n| rng.below(n));
            assert!(f.data.len() == 1500 || f.data.len() == 2000);
            assert!(f.data[..1000].iter().all(|&b| b == 1), "seed {seed}");
        }
    }

    #[test]
    fn unsynced_writes_are_lost_applied_or_torn() {
        let mut seen_lost = false;
        let mut seen_applied = false;
        let mut seen_torn = false;
        for seed in 0..500 {
            let mut rng = Rng::new(seed, 9);
            let mut f = FileData::default();
            f.write_at(0, &[1; 2048]);
            f.sync();
            f.write_at(0, &[2; 2048]);
            f.crash(&mut |n| rng.below(n));
            let twos = f.data.iter().filter(|&&b| b == 2).count();
            assert_eq!(f.data.len(), 2048);
            // Sector granularity: every sector is all old or all new.
            for sector in f.data.chunks(512) {
                assert!(sector.iter().all(|&b| b == sector[0]), "seed {seed}");
            }
            match twos {
                0 => seen_lost = true,
                2048 => seen_applied = true,
                _ => seen_torn = true,
            }
        }
        assert!(seen_lost && seen_applied && seen_torn);
    }

    #[test]
    fn a_failed_fsync_drops_the_pages_and_the_next_one_succeeds() {
        let mut rng = Rng::new(1, 9);
        let mut f = FileData::default();
        f.write_at(0, b"durable!");
        f.sync();
        f.write_at(0, b"volatile");
        f.drop_dirty();
        // Still readable from the page cache...
        assert_eq!(f.data, b"volatile");
        // ...a later sync has nothing to write...
        f.sync();
        // ...and a crash shows they never reached the disk.
        f.crash(&mut |n| rng.below(n));
        assert_eq!(f.data, b"durable!");
    }

    #[test]
    fn bytes_cut_away_never_come_back_into_a_regrown_file() {
        for seed in 0..300 {
            let mut rng = Rng::new(seed, 9);
            let mut f = FileData::default();
            f.write_at(0, &[7; 1024]);
            f.sync();
            f.write_at(0, &[8; 1024]);
            f.set_len(100);
            f.set_len(1024);
            f.write_at(600, &[9; 10]);
            let outcome = f.crash(&mut |n| rng.below(n));
            // Past the cut, no byte written before the cut (the 8s)
            // appears: the durable 7s, zeros or the later 9s only.
            assert!(
                f.data.iter().skip(100).all(|&b| b != 8),
                "seed {seed}: {outcome:?} {:?}",
                &f.data[100..]
            );
        }
    }

    #[test]
    fn a_truncation_is_not_undone_by_a_sync() {
        let mut f = FileData::default();
        f.write_at(0, &[7; 1024]);
        f.sync();
        f.set_len(0);
        f.write_at(2000, &[1]);
        f.sync();
        assert!(f.durable[..2000].iter().all(|&b| b == 0));
        assert_eq!(f.durable[2000], 1);
    }
}
