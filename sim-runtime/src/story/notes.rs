//! The story's last notes: a ring of [`NOTES_MAX`] entries, each note
//! written over the oldest field by field, in place (a note told is on
//! the hot path of every message: building an entry and moving it into
//! a deque cost a copy through the stack that the CPU could not forward).

use super::entry::{Entry, What};
use super::NOTES_MAX;

/// The last [`NOTES_MAX`] notes, oldest first when read.
#[derive(Default)]
pub(crate) struct Notes {
    /// Filled up to `NOTES_MAX`, then overwritten at `next`.
    entries: Vec<Entry>,
    /// Where the next note goes once `entries` is full: the oldest.
    next: usize,
}

impl Notes {
    /// The entry of a new note, its header set (its `what` is the caller's
    /// to write: written straight into the ring, not moved from a copy),
    /// over the oldest when full.
    #[inline]
    pub(crate) fn next_entry(&mut self, seq: u64, at_ns: u64, node: u32, task: u64) -> &mut Entry {
        let entry = if self.entries.len() < NOTES_MAX {
            self.entries.push(Entry {
                seq,
                at_ns,
                node,
                task,
                what: What::Text(Box::default()),
            });
            self.entries.last_mut().expect("pushed above")
        } else {
            let entry = &mut self.entries[self.next];
            self.next = (self.next + 1) % NOTES_MAX;
            entry
        };
        entry.seq = seq;
        entry.at_ns = at_ns;
        entry.node = node;
        entry.task = task;
        entry
    }

    /// Keeps a note, forgetting the oldest when full.
    pub(crate) fn push(&mut self, seq: u64, at_ns: u64, node: u32, task: u64, what: What) {
        self.next_entry(seq, at_ns, node, task).what = what;
    }

    /// The notes kept, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Entry> {
        let (newer, older) = self.entries.split_at(self.next);
        older.iter().chain(newer)
    }

    /// The oldest note kept.
    pub(crate) fn oldest(&self) -> Option<&Entry> {
        self.iter().next()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_notes_are_kept_oldest_first() {
        let mut notes = Notes::default();
        for seq in 0..NOTES_MAX as u64 + 5 {
            notes.push(seq, seq * 10, 0, 0, What::Text(seq.to_string().into()));
        }
        let seqs: Vec<u64> = notes.iter().map(|e| e.seq).collect();
        let expected: Vec<u64> = (5..NOTES_MAX as u64 + 5).collect();
        assert_eq!(seqs, expected);
        assert_eq!(notes.oldest().map(|e| e.seq), Some(5));
    }
}
