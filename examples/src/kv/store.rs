//! A node's durable state: its current term, its vote in that term, and
//! its log, as records in a write-ahead log. Each change is durable before
//! the node acts on it (answers a vote, acknowledges an append), as Raft
//! requires.

use crate::wal::{Durability, Wal};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// One entry of the replicated log: a write of `value` to `key`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The term of the leader that appended it.
    pub term: u64,
    /// The client's id of the write (0: the no-op a new leader appends).
    pub id: u64,
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

/// A record of the write-ahead log.
#[derive(Serialize, Deserialize)]
enum Record {
    /// The term and the vote in it.
    Vote { term: u64, voted_for: Option<usize> },
    /// `entry` at position `index`: the log is cut there first.
    Put { index: usize, entry: Entry },
}

/// The durable state, in memory and in its log file.
pub(crate) struct Store {
    wal: Wal,
    pub(crate) term: u64,
    pub(crate) voted_for: Option<usize>,
    pub(crate) log: Vec<Entry>,
}

fn corrupt(e: serde_json::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl Store {
    /// Opens the log at `path` and replays it.
    pub(crate) async fn open(path: &Path) -> io::Result<Store> {
        let (wal, records) = Wal::open(path, Durability::Full).await?;
        let mut store = Store {
            wal,
            term: 0,
            voted_for: None,
            log: Vec::new(),
        };
        for record in records {
            match serde_json::from_slice(&record).map_err(corrupt)? {
                Record::Vote { term, voted_for } => {
                    store.term = term;
                    store.voted_for = voted_for;
                }
                Record::Put { index, entry } => {
                    store.log.truncate(index);
                    store.log.push(entry);
                }
            }
        }
        Ok(store)
    }

    /// Makes `term` and `voted_for` durable, then current.
    pub(crate) async fn set_vote(&mut self, term: u64, voted_for: Option<usize>) -> io::Result<()> {
        if (term, voted_for) == (self.term, self.voted_for) {
            return Ok(());
        }
        let record = serde_json::to_vec(&Record::Vote { term, voted_for }).map_err(corrupt)?;
        self.wal.append(&record).await?;
        self.term = term;
        self.voted_for = voted_for;
        Ok(())
    }

    /// Makes `entry` at `index` durable (cutting the log there), then
    /// current.
    pub(crate) async fn put(&mut self, index: usize, entry: Entry) -> io::Result<()> {
        debug_assert!(index <= self.log.len(), "no holes in the log");
        let record = serde_json::to_vec(&Record::Put {
            index,
            entry: entry.clone(),
        })
        .map_err(corrupt)?;
        self.wal.append(&record).await?;
        self.log.truncate(index);
        self.log.push(entry);
        Ok(())
    }

    /// The term of the last entry (0 for none) and the log's length.
    pub(crate) fn last(&self) -> (u64, usize) {
        (self.log.last().map_or(0, |e| e.term), self.log.len())
    }
}
