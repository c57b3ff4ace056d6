//! A small write-ahead log on `tokio::fs`, to show (and test) what crash
//! consistency takes: a record is acknowledged only once it is durable.
//!
//! Records are `[len: u32 LE][checksum: u32 LE][payload]`. Recovery reads
//! the longest prefix of whole records whose checksums match, cuts the
//! rest (a torn or partly written tail) and makes the cut durable.
//!
//! [`Durability::Full`] does everything right. The other variants each skip
//! one step, so that tests can show the simulator finding the loss.

use std::io;
use std::path::{Path, PathBuf};
use tokio::fs::{File, OpenOptions};
use tokio::io::AsyncWriteExt;

/// Which syncs the log performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Sync the file after each append, and its directory after creating
    /// it: no acknowledged record is ever lost.
    Full,
    /// Never sync appends: acknowledged records can be lost in a crash.
    SkipFileSync,
    /// Sync appends but not the directory after creating the file: the
    /// whole log can vanish in a crash.
    SkipDirSync,
}

/// An open log.
pub struct Wal {
    file: File,
    durability: Durability,
}

/// The most bytes one record's payload may have; a longer length in a
/// header means a corrupt tail.
const PAYLOAD_MAX_BYTES: u32 = 1 << 20;
const HEADER_BYTES: usize = 8;

/// FNV-1a over the payload: cheap, and enough to tell a torn record.
fn checksum(payload: &[u8]) -> u32 {
    payload.iter().fold(0x811c_9dc5u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// The whole records at the start of `bytes`, and where they end.
fn parse(bytes: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let mut records = Vec::new();
    let mut at = 0;
    // Bounded: each pass consumes at least a header.
    while bytes.len() - at >= HEADER_BYTES {
        let len = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let sum = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().expect("4 bytes"));
        if len > PAYLOAD_MAX_BYTES {
            break;
        }
        let end = at + HEADER_BYTES + len as usize;
        if end > bytes.len() {
            break;
        }
        let payload = &bytes[at + HEADER_BYTES..end];
        if checksum(payload) != sum {
            break;
        }
        records.push(payload.to_vec());
        at = end;
    }
    (records, at)
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl Wal {
    /// Opens (or creates) the log at `path` and recovers its records.
    ///
    /// # Errors
    /// The disk's errors.
    pub async fn open(path: &Path, durability: Durability) -> io::Result<(Wal, Vec<Vec<u8>>)> {
        let existed = tokio::fs::try_exists(path).await?;
        let bytes = if existed {
            tokio::fs::read(path).await?
        } else {
            Vec::new()
        };
        let (records, valid) = parse(&bytes);
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .await?;
        if valid < bytes.len() {
            // Cut the torn tail, durably, before appending after it.
            file.set_len(valid as u64).await?;
            file.sync_all().await?;
        }
        if !existed {
            file.sync_all().await?;
            if durability != Durability::SkipDirSync {
                // The new name is durable only once its directory is.
                File::open(parent(path)).await?.sync_all().await?;
            }
        }
        Ok((Wal { file, durability }, records))
    }

    /// Appends a record; when this returns `Ok`, the record is durable
    /// (unless the durability is a broken variant).
    ///
    /// # Errors
    /// The disk's errors: the record may or may not be in the log.
    pub async fn append(&mut self, payload: &[u8]) -> io::Result<()> {
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|&len| len <= PAYLOAD_MAX_BYTES)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "record too long"))?;
        let mut record = Vec::with_capacity(HEADER_BYTES + payload.len());
        record.extend_from_slice(&len.to_le_bytes());
        record.extend_from_slice(&checksum(payload).to_le_bytes());
        record.extend_from_slice(payload);
        self.file.write_all(&record).await?;
        // tokio's File writes in the background: wait for the write.
        self.file.flush().await?;
        if self.durability != Durability::SkipFileSync {
            self.file.sync_data().await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_stops_at_a_torn_record() {
        let mut bytes = Vec::new();
        for payload in [&b"one"[..], b"two"] {
            bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            bytes.extend_from_slice(&checksum(payload).to_le_bytes());
            bytes.extend_from_slice(payload);
        }
        let whole = bytes.len();
        bytes.extend_from_slice(&[3, 0, 0, 0, 1, 2]);
        let (records, valid) = parse(&bytes);
        assert_eq!(records, vec![b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(valid, whole);
        // A flipped payload byte fails its checksum.
        bytes[HEADER_BYTES] ^= 1;
        assert_eq!(parse(&bytes).0.len(), 0);
    }
}
