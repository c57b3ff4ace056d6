//! The event queue's store of entries: a 4-ary heap while it is small,
//! and a radix heap over deadlines (Ahuja, Mehlhorn, Orlin and Tarjan,
//! 1990) once it holds thousands, which suits a clock that only moves
//! forward.
//!
//! The radix part keeps entries by how their deadline differs from a
//! base: bucket `b` holds those whose highest bit differing from the base
//! is bit `b`, and `due` those equal to it. Every entry of a bucket is
//! earlier than every entry of a higher one, and each bucket knows its
//! least entry, so the earliest is found without moving anything. A push
//! is an append. A pop takes from `due`; when `due` is empty, the lowest
//! occupied bucket is spread out again around its least deadline, the new
//! base, and each of its entries moves to a strictly lower bucket: an
//! entry moves at most 64 times in its life and, in practice, a few. Where
//! a heap of 100,000 sleeps sifts through nine levels at each pop, this
//! appends to the entries' own buckets.
//!
//! The order is exactly the heap's: by deadline, then by sequence number
//! (`Entry::rank`). Entries of one deadline are always in one bucket, in
//! the order they were pushed, so they reach `due` in sequence order. The
//! base moves only at a pop, to the popped deadline (an event due now, so
//! later pushes are at or after it). An entry due before the base (a
//! deadline in the past, or one scheduled after a cancelled entry's pop
//! moved the base past the clock) goes to the heap, `early`, which always
//! comes first: its deadlines are all below the base. While the buckets
//! are not in use (`spread` false) every entry goes to the heap; at
//! `SPREAD_AT` entries they all move into the buckets, and the queue goes
//! back to the heap alone when the buckets are used up.

use super::quad::{QuadHeap, SENTINEL};
use super::Entry;

/// Buckets of differing entries: one per bit of a deadline.
const BUCKETS: usize = 64;

/// The heap's size at which its entries move into the buckets. A heap of a
/// few hundred entries costs less per pop than the buckets' moves (the
/// echo's queue holds a handful; 1,000 hosts keep about 4,000 pending).
const SPREAD_AT: usize = 1024;

/// Entries by deadline (see the module's docs).
pub(super) struct RadixQueue {
    /// Whether the buckets are in use (else every entry is in `early`).
    spread: bool,
    /// Every entry outside `early` is due at or after it.
    base_ns: u64,
    /// The entries due at `base_ns`, in sequence order, from `head` on
    /// (the ones before it were popped).
    due: Vec<Entry>,
    head: usize,
    /// `buckets[b]`: entries whose deadline's highest bit differing from
    /// `base_ns` is bit `b`.
    buckets: Box<[Vec<Entry>; BUCKETS]>,
    /// `least[b]`: the first of `buckets[b]` by rank (`SENTINEL` when
    /// empty).
    least: Box<[Entry; BUCKETS]>,
    /// Bit `b` set when `buckets[b]` holds entries.
    occupied: u64,
    /// Entries due before `base_ns`.
    early: QuadHeap,
    len: usize,
}

impl Default for RadixQueue {
    fn default() -> RadixQueue {
        RadixQueue {
            spread: false,
            base_ns: 0,
            due: Vec::new(),
            head: 0,
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            least: Box::new([SENTINEL; BUCKETS]),
            occupied: 0,
            early: QuadHeap::default(),
            len: 0,
        }
    }
}

impl RadixQueue {
    /// How many entries are kept (stale ones included).
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// How many entries are kept outside the heap (for tests).
    #[cfg(test)]
    pub(super) fn in_buckets(&self) -> usize {
        self.len - self.early.len()
    }

    /// The bucket of a deadline at or after the base: `None` for the base
    /// itself.
    #[inline(always)]
    fn bucket_of(&self, deadline_ns: u64) -> Option<usize> {
        let differ = deadline_ns ^ self.base_ns;
        (differ != 0).then(|| (63 - differ.leading_zeros()) as usize)
    }

    #[inline(always)]
    pub(super) fn push(&mut self, entry: Entry) {
        self.len += 1;
        if !self.spread || entry.deadline_ns < self.base_ns {
            self.early.push(entry);
            if self.early.len() >= SPREAD_AT && !self.spread {
                self.spread_early();
            }
            return;
        }
        debug_assert!(
            self.due.last().is_none_or(|last| last.key < entry.key),
            "a push carries the highest sequence number yet"
        );
        self.place(entry);
    }

    #[inline(always)]
    fn push_to(&mut self, bucket: usize, entry: Entry) {
        self.buckets[bucket].push(entry);
        self.occupied |= 1 << bucket;
        let least = &mut self.least[bucket];
        if entry.rank() < least.rank() {
            *least = entry;
        }
    }

    /// The earliest entry, if any.
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<Entry> {
        match self.early.peek() {
            Some(early) => Some(early),
            None => self.peek_late(),
        }
    }

    /// The earliest entry outside the heap (which is empty).
    #[inline(never)]
    fn peek_late(&self) -> Option<Entry> {
        if let Some(&due) = self.due.get(self.head) {
            return Some(due);
        }
        (self.occupied != 0).then(|| self.least[self.occupied.trailing_zeros() as usize])
    }

    /// The entry after the earliest, when it is known without a search
    /// (a guess for fetching memory ahead: `None` says nothing).
    #[inline]
    pub(super) fn second(&self) -> Option<Entry> {
        match self.early.len() {
            0 => {}
            1 => return self.peek_late(),
            _ => return self.early.second(),
        }
        let after_head = self.due.len().saturating_sub(self.head);
        match after_head {
            2.. => Some(self.due[self.head + 1]),
            // The least of the lowest bucket comes next.
            1 => self.least_of_rank(0),
            // The head is the lowest bucket's least: when that bucket
            // holds no other, the next bucket's least follows it.
            0 if self.lowest_len() == 1 => self.least_of_rank(1),
            0 => None,
        }
    }

    /// The least entry of the `rank`th lowest occupied bucket, if any.
    #[inline]
    fn least_of_rank(&self, rank: u32) -> Option<Entry> {
        let mut occupied = self.occupied;
        for _ in 0..rank {
            occupied &= occupied.wrapping_sub(1);
        }
        (occupied != 0).then(|| self.least[occupied.trailing_zeros() as usize])
    }

    /// How many entries the lowest occupied bucket holds.
    #[inline]
    fn lowest_len(&self) -> usize {
        match self.occupied {
            0 => 0,
            occupied => self.buckets[occupied.trailing_zeros() as usize].len(),
        }
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let popped = match self.early.pop() {
            Some(early) => Some(early),
            None => self.pop_late(),
        };
        self.len -= usize::from(popped.is_some());
        popped
    }

    /// Pops the earliest entry outside the heap (which is empty).
    #[inline]
    fn pop_late(&mut self) -> Option<Entry> {
        self.fill_due();
        let entry = *self.due.get(self.head)?;
        self.head += 1;
        if self.head == self.due.len() {
            self.due.clear();
            self.head = 0;
        }
        Some(entry)
    }

    /// Moves the heap's entries into the buckets, around the least of them
    /// (the buckets are empty, so each lands at or after the base).
    #[inline(never)]
    fn spread_early(&mut self) {
        debug_assert!(self.due.is_empty() && self.occupied == 0);
        let mut entries = Vec::with_capacity(self.early.len());
        // Bounded by the heap's entries; they come out in rank order.
        while let Some(entry) = self.early.pop() {
            entries.push(entry);
        }
        self.spread = true;
        self.base_ns = entries[0].deadline_ns;
        for entry in entries {
            self.place(entry);
        }
    }

    /// Puts an entry at or after the base where it belongs (in `due`, it
    /// must come after every entry there).
    #[inline(always)]
    fn place(&mut self, entry: Entry) {
        match self.bucket_of(entry.deadline_ns) {
            None => self.due.push(entry),
            Some(bucket) => self.push_to(bucket, entry),
        }
    }

    /// When `due` is used up, spreads the lowest occupied bucket out
    /// around its least deadline, the new base (see the module's docs).
    #[inline]
    fn fill_due(&mut self) {
        if self.head < self.due.len() || !self.spread {
            return;
        }
        if self.occupied == 0 {
            // The buckets are used up: back to the heap alone, which
            // holds only entries before the old base.
            self.spread = false;
            return;
        }
        self.refill();
    }

    #[inline(never)]
    fn refill(&mut self) {
        self.due.clear();
        self.head = 0;
        let lowest = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << lowest);
        let least = std::mem::replace(&mut self.least[lowest], SENTINEL);
        assert!(
            least.deadline_ns >= self.base_ns,
            "the base never moves back"
        );
        self.base_ns = least.deadline_ns;
        if self.buckets[lowest].len() == 1 {
            // The common case of a sparse queue: nothing to spread.
            self.buckets[lowest].clear();
            self.due.push(least);
            return;
        }
        let mut spread = std::mem::take(&mut self.buckets[lowest]);
        // Bounded by the bucket's entries; each lands strictly lower.
        for &entry in &spread {
            debug_assert!(
                self.bucket_of(entry.deadline_ns).is_none_or(|b| b < lowest),
                "an entry moves to a lower bucket"
            );
            self.place(entry);
        }
        // Keeps its capacity for the entries to come.
        spread.clear();
        self.buckets[lowest] = spread;
        // Entries of one deadline share a bucket at every base, move
        // together in their order, and a push appends the highest number
        // yet: they reach `due` in sequence order.
        debug_assert!(self.due.is_sorted_by_key(|entry| entry.key));
    }

    /// Keeps the entries `keep` accepts.
    pub(super) fn retain(&mut self, keep: impl Fn(&Entry) -> bool) {
        self.early.retain(&keep);
        self.due.drain(..self.head);
        self.head = 0;
        self.due.retain(&keep);
        self.occupied = 0;
        let mut len = self.early.len() + self.due.len();
        for (bucket, entries) in self.buckets.iter_mut().enumerate() {
            entries.retain(&keep);
            let least = entries.iter().copied().min_by_key(|entry| entry.rank());
            self.least[bucket] = least.unwrap_or(SENTINEL);
            if !entries.is_empty() {
                self.occupied |= 1 << bucket;
            }
            len += entries.len();
        }
        self.len = len;
    }

    pub(super) fn clear(&mut self) {
        self.early.clear();
        self.due.clear();
        self.head = 0;
        for entries in self.buckets.iter_mut() {
            entries.clear();
        }
        *self.least = [SENTINEL; BUCKETS];
        self.occupied = 0;
        self.spread = false;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes spread over a few scales of deadline, with pops between,
    /// past the spread size: every pop takes the least entry, and each
    /// guess of the entry after the head is the true one.
    #[test]
    fn pops_in_rank_order_and_second_guesses_right() {
        let mut queue = RadixQueue::default();
        let mut model = std::collections::BTreeSet::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut seq = 0;
        let mut now = 0;
        let mut guesses = 0;
        for round in 0..40_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if round % 5 < 3 {
                let scale = [1_000, 1_000_000, 100_000_000][(x % 3) as usize];
                seq += 1;
                let entry = Entry {
                    deadline_ns: now + (x >> 20) % scale,
                    key: seq,
                };
                queue.push(entry);
                model.insert(entry.rank());
            } else if let Some(popped) = queue.pop() {
                assert_eq!(Some(popped.rank()), model.pop_first());
                now = popped.deadline_ns;
                let truth = model.iter().nth(1).copied();
                if let Some(second) = queue.second() {
                    assert_eq!(Some(second.rank()), truth);
                    guesses += 1;
                }
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(queue.peek().map(Entry::rank), model.first().copied());
        }
        assert!(
            queue.in_buckets() > 0 && guesses > 5_000,
            "guesses: {guesses}"
        );
    }

    /// Deadlines at the end of time (a saturated far future) keep their
    /// order in the heap, in the buckets and across the change between
    /// them.
    #[test]
    fn the_end_of_time_keeps_its_order() {
        let mut queue = RadixQueue::default();
        let mut model = std::collections::BTreeSet::new();
        for seq in 0..3 * SPREAD_AT as u64 {
            let deadline_ns = match seq % 3 {
                0 => u64::MAX,
                1 => u64::MAX - 1,
                _ => seq,
            };
            let entry = Entry {
                deadline_ns,
                key: seq,
            };
            queue.push(entry);
            model.insert(entry.rank());
        }
        assert!(queue.in_buckets() > 0, "the queue spread into its buckets");
        while let Some(popped) = queue.pop() {
            assert_eq!(Some(popped.rank()), model.pop_first());
        }
        assert!(model.is_empty());
    }
}
