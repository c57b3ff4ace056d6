//! A 4-ary min-heap of entries laid out by cache line: the queue's store
//! for events due before the radix queue's base (see `radix`).

use super::Entry;

/// A min-heap of entries with four children per node: half the depth of a
/// binary heap. The entries are laid out so that each node's four children
/// fill one 64-byte line exactly (the root alone in the first line's last
/// lane, padded), so a level of a sift costs one line, never two; lanes past
/// the end hold a sentinel that ranks last, so a pick among children needs
/// no bounds check.
#[derive(Default)]
pub(super) struct QuadHeap {
    lines: Vec<Line>,
    len: usize,
}

/// Four entries in one cache line: the children of one node.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Line([Entry; 4]);

/// What an unused lane holds: it ranks after every real entry.
pub(super) const SENTINEL: Entry = Entry {
    deadline_ns: u64::MAX,
    key: u64::MAX,
};

/// Lanes before the root: logical index `i` lives at lane `i + PAD`, so
/// the children of `i` (`4i + 1 ..= 4i + 4`) are line `i + 1`.
const PAD: usize = 3;

impl QuadHeap {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn get(&self, index: usize) -> Entry {
        let lane = index + PAD;
        self.lines[lane / 4].0[lane % 4]
    }

    #[inline(always)]
    fn set(&mut self, index: usize, entry: Entry) {
        let lane = index + PAD;
        self.lines[lane / 4].0[lane % 4] = entry;
    }

    pub(super) fn peek(&self) -> Option<Entry> {
        (self.len > 0).then(|| self.get(0))
    }

    pub(super) fn push(&mut self, entry: Entry) {
        let lane = self.len + PAD;
        if lane / 4 == self.lines.len() {
            self.lines.push(Line([SENTINEL; 4]));
        }
        self.len += 1;
        let mut at = self.len - 1;
        // Bounded by the depth: log4 of the length.
        while at > 0 {
            let parent = (at - 1) / 4;
            let above = self.get(parent);
            if above.rank() <= entry.rank() {
                break;
            }
            self.set(at, above);
            at = parent;
        }
        self.set(at, entry);
    }

    pub(super) fn pop(&mut self) -> Option<Entry> {
        if self.len == 0 {
            return None;
        }
        let top = self.get(0);
        self.len -= 1;
        let last = self.get(self.len);
        self.set(self.len, SENTINEL);
        if self.len == 0 {
            return Some(top);
        }
        let len = self.len;
        let mut at = 0;
        // Bounded by the depth: log4 of the length.
        loop {
            let first = 4 * at + 1;
            if first >= len {
                break;
            }
            // The children are line `at + 1`; lanes past the end hold the
            // sentinel, which never wins.
            let children = &self.lines[at + 1].0;
            let mut least = 0;
            let mut least_rank = children[0].rank();
            for (lane, child) in children.iter().enumerate().skip(1) {
                let rank = child.rank();
                let less = rank < least_rank;
                least = if less { lane } else { least };
                least_rank = if less { rank } else { least_rank };
            }
            if last.rank() <= least_rank {
                break;
            }
            let child = first + least;
            self.set(at, children[least]);
            at = child;
        }
        self.set(at, last);
        Some(top)
    }

    pub(super) fn clear(&mut self) {
        self.lines.clear();
        self.len = 0;
    }

    /// The second-earliest entry (the least of the root's children), if
    /// any: with the root, what the next two pops will take, unless an
    /// earlier event is scheduled in between.
    #[inline]
    pub(super) fn second(&self) -> Option<Entry> {
        if self.len < 2 {
            return None;
        }
        let children = &self.lines[1].0;
        children.iter().copied().min_by_key(|e| e.rank())
    }

    /// Keeps the entries `keep` accepts, and restores the heap order.
    pub(super) fn retain(&mut self, keep: impl Fn(&Entry) -> bool) {
        let mut entries: Vec<Entry> = (0..self.len)
            .map(|i| self.get(i))
            .filter(|e| keep(e))
            .collect();
        entries.sort_unstable_by_key(|e| e.rank());
        // A sorted array is a heap: each push stays where it lands.
        self.clear();
        for entry in entries {
            self.push(entry);
        }
    }
}
