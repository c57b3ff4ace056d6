//! The event queue: the one place where future happenings wait for their
//! virtual time. Timers, and later network deliveries and disk completions,
//! are all entries here, ordered by `(deadline, sequence number)`, so events
//! due at the same instant fire in the order they were scheduled.

mod quad;
mod radix;

use radix::RadixQueue;
use std::task::Waker;

/// What happens when an event comes due.
pub enum Action {
    /// Wake a task (a timer). `None` until the timer is first polled.
    Wake(Option<Waker>),
    /// Run a callback in the runtime's context (network, disk). The label
    /// says what it is (for the harness's checkers).
    Call(Box<dyn FnOnce()>, &'static str),
    /// Run a handler with a number (a network delivery: the number says
    /// which message, kept by the network until then). Nothing is
    /// allocated: a message sent is an entry here and one in the
    /// network's table, where a boxed callback was a `malloc` and a `free`.
    CallWith(&'static Handler, u64, &'static str),
}

/// What an [`Action::CallWith`] runs, given its number.
pub struct Handler {
    /// Carries the event out.
    pub run: fn(u64),
    /// Fetches the memory `run` will read first (the message's entry), when
    /// the event is next: called while the one before it is carried out,
    /// in a run whose pending events are many (so its memory is cold).
    pub fetch: fn(u64),
}

/// Pending events past which the next `CallWith` event's memory is
/// fetched ahead: below, it is likely still in the cache, and fetching
/// would only cost the call.
pub const FETCH_AHEAD_EVENTS_MIN: usize = 8192;

/// A handle on a scheduled event, to cancel it or change its waker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventKey {
    slot: u32,
    generation: u32,
}

/// A heap entry: 16 bytes, so a node's four children share a cache line.
/// Entries order by deadline, then by sequence number (`key`'s high bits),
/// which is scheduling order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    deadline_ns: u64,
    /// `seq << SLOT_BITS | slot`.
    key: u64,
}

/// Bits of an entry's key that hold its slot: at most 16M events pending at
/// once (each holds an action, so memory bounds it well before that).
const SLOT_BITS: u32 = 24;
const SLOT_MAX: u64 = 1 << SLOT_BITS;
/// Sequence numbers fit in the key's other 40 bits: a trillion events
/// scheduled in one run.
const SEQ_MAX: u64 = 1 << (64 - SLOT_BITS);

impl Entry {
    /// The entry's place in the order as one number: comparing two is one
    /// 128-bit compare, which the heap's loops select with without a
    /// branch (a pop's comparisons are unpredictable, and mispredicted
    /// branches were most of its time).
    #[inline(always)]
    fn rank(self) -> u128 {
        (u128::from(self.deadline_ns) << 64) | u128::from(self.key)
    }

    fn seq(self) -> u64 {
        self.key >> SLOT_BITS
    }
    fn slot(self) -> u32 {
        (self.key & (SLOT_MAX - 1)) as u32
    }
}

/// Stale entries allowed beyond the live ones before the heap is rebuilt.
/// Small: a cancelled timer (a delayed ACK, a `timeout` that did not fire)
/// otherwise stays in the heap until its deadline, and every pop sifts
/// through it; a rebuild of a small heap costs less than the pops it saves.
const STALE_SLACK: usize = 64;

struct Slot {
    generation: u32,
    seq: u64,
    action: Option<Action>,
}

/// A queue of entries (a radix heap, `radix`) over a slab of actions.
/// Cancelling frees the slab slot at once and leaves a stale entry that is
/// skipped on pop; when stale entries outnumber live ones the queue is
/// rebuilt, which bounds its size by a constant factor of the live events.
#[derive(Default)]
pub struct EventQueue {
    heap: RadixQueue,
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_seq: u64,
    live: usize,
}

/// A fired event: its sequence number (the id used in the trace) and what to
/// do.
pub struct Fired {
    /// The sequence number given when the event was scheduled.
    pub seq: u64,
    /// The action to carry out.
    pub action: Action,
}

impl EventQueue {
    /// Schedules `action` at `deadline_ns`. Returns its key and sequence
    /// number. Inlined: an action passed through a call was read back
    /// wider than it was written, and the store-forwarding stall was half
    /// of this function's time.
    #[inline]
    pub fn insert(&mut self, deadline_ns: u64, action: Action) -> (EventKey, u64) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                // The next insert takes the slot freed before this one: with
                // tens of thousands pending it has left the cache, so it is
                // fetched now, while this event's caller goes on.
                if let Some(&next) = self.free.last() {
                    crate::prefetch::line(&self.slots[next as usize]);
                }
                let entry = &mut self.slots[slot as usize];
                debug_assert!(entry.action.is_none(), "a free slot holds no action");
                entry.seq = seq;
                entry.action = Some(action);
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len()).expect("more than 4G pending events");
                self.slots.push(Slot {
                    generation: 0,
                    seq,
                    action: Some(action),
                });
                slot
            }
        };
        let generation = self.slots[slot as usize].generation;
        assert!(
            u64::from(slot) < SLOT_MAX,
            "sim: more than {SLOT_MAX} events pending at once"
        );
        assert!(seq < SEQ_MAX, "sim: more than {SEQ_MAX} events in one run");
        self.heap.push(Entry {
            deadline_ns,
            key: seq << SLOT_BITS | u64::from(slot),
        });
        self.live += 1;
        (EventKey { slot, generation }, seq)
    }

    fn slot_mut(&mut self, key: EventKey) -> Option<&mut Slot> {
        self.slots
            .get_mut(key.slot as usize)
            .filter(|slot| slot.generation == key.generation && slot.action.is_some())
    }

    /// Whether `key` is still pending.
    pub fn contains(&self, key: EventKey) -> bool {
        self.slots
            .get(key.slot as usize)
            .is_some_and(|slot| slot.generation == key.generation && slot.action.is_some())
    }

    /// The waker slot of a pending timer (to replace it); `None` when the
    /// event already fired, was cancelled, or is no timer.
    pub fn waker_mut(&mut self, key: EventKey) -> Option<&mut Option<Waker>> {
        match self.slot_mut(key) {
            Some(Slot {
                action: Some(Action::Wake(current)),
                ..
            }) => Some(current),
            _ => None,
        }
    }

    /// Cancels a pending event. Returns false when it already fired or was
    /// cancelled.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        self.take(key).is_some()
    }

    /// Cancels a pending event and returns its action.
    pub fn take(&mut self, key: EventKey) -> Option<Action> {
        let slot = self.slot_mut(key)?;
        let action = slot.action.take();
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(key.slot);
        self.live -= 1;
        if self.heap.len() > 2 * self.live + STALE_SLACK {
            self.rebuild();
        }
        action
    }

    fn rebuild(&mut self) {
        let slots = &self.slots;
        self.heap.retain(|e| Self::entry_is_live(slots, e));
        debug_assert_eq!(self.heap.len(), self.live);
    }

    /// An entry is live while its slot holds an action scheduled with the
    /// entry's sequence number (a reused slot has a later one).
    fn entry_is_live(slots: &[Slot], entry: &Entry) -> bool {
        let slot = &slots[entry.slot() as usize];
        slot.action.is_some() && slot.seq == entry.seq()
    }

    /// The deadline of the earliest pending event. Hot (each event asks
    /// it two or three times): the live head is answered inline, the
    /// stale entries before one are dropped out of line.
    #[inline(always)]
    pub fn next_deadline(&mut self) -> Option<u64> {
        let top = self.heap.peek()?;
        if Self::entry_is_live(&self.slots, &top) {
            return Some(top.deadline_ns);
        }
        self.next_deadline_past_stale()
    }

    #[inline(never)]
    fn next_deadline_past_stale(&mut self) -> Option<u64> {
        while let Some(top) = self.heap.peek() {
            if Self::entry_is_live(&self.slots, &top) {
                return Some(top.deadline_ns);
            }
            self.heap.pop();
        }
        None
    }

    /// Removes and returns the earliest event if it is due at or before
    /// `now_ns`. Inlined, as `insert` is, for its returned action.
    #[inline]
    pub fn pop_due(&mut self, now_ns: u64) -> Option<Fired> {
        let deadline = self.next_deadline()?;
        if deadline > now_ns {
            return None;
        }
        let entry = self.heap.pop().expect("next_deadline saw an entry");
        // Deadline order is not the order the slots were taken in: fetch
        // the slot after next now, while this event is carried out (the
        // next one's slot was fetched by the previous pop).
        if let Some(after_next) = self.heap.second() {
            crate::prefetch::line(&self.slots[after_next.slot() as usize]);
        }
        let slot = &mut self.slots[entry.slot() as usize];
        let action = slot.action.take().expect("a live entry has an action");
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(entry.slot());
        self.live -= 1;
        Some(Fired {
            seq: entry.seq(),
            action,
        })
    }

    /// The action of the earliest pending event, if its entry is live: to
    /// fetch what it will touch before it fires (a guess: an earlier event
    /// may still be scheduled first).
    #[inline]
    pub fn peek_action(&self) -> Option<&Action> {
        let top = self.heap.peek()?;
        let slot = &self.slots[top.slot() as usize];
        if slot.seq != top.seq() {
            return None;
        }
        slot.action.as_ref()
    }

    /// How many pending timers keep a waker `matches` accepts: for
    /// reports, which count a task's wakers. A scan of the slab.
    pub(crate) fn count_wakers(&self, matches: impl Fn(&Waker) -> bool) -> u32 {
        self.slots
            .iter()
            .filter(|slot| match &slot.action {
                Some(Action::Wake(Some(waker))) => matches(waker),
                _ => false,
            })
            .count() as u32
    }

    /// How many events are pending.
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Drops every pending event (the runtime is shutting down).
    pub fn clear(&mut self) -> Vec<Action> {
        self.heap.clear();
        self.free.clear();
        self.live = 0;
        let mut actions = Vec::new();
        for (index, slot) in self.slots.iter_mut().enumerate() {
            if let Some(action) = slot.action.take() {
                actions.push(action);
            }
            slot.generation = slot.generation.wrapping_add(1);
            self.free.push(index as u32);
        }
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> Action {
        Action::Call(Box::new(|| {}), "test")
    }

    #[test]
    fn equal_deadlines_fire_in_insertion_order() {
        let mut q = EventQueue::default();
        let (_, a) = q.insert(10, call());
        let (_, b) = q.insert(5, call());
        let (_, c) = q.insert(10, call());
        assert_eq!(q.next_deadline(), Some(5));
        assert!(q.pop_due(4).is_none());
        let order: Vec<u64> = std::iter::from_fn(|| q.pop_due(10).map(|f| f.seq)).collect();
        assert_eq!(order, vec![b, a, c]);
        assert!(q.is_empty());
    }

    #[test]
    fn cancelled_events_never_fire_and_slots_are_reused_safely() {
        let mut q = EventQueue::default();
        let (k1, _) = q.insert(1, call());
        assert!(q.cancel(k1));
        assert!(!q.cancel(k1), "a second cancel is a no-op");
        let (k2, s2) = q.insert(2, call());
        assert!(!q.contains(k1), "the old key does not see the reused slot");
        assert!(q.contains(k2));
        assert_eq!(q.pop_due(100).map(|f| f.seq), Some(s2));
        assert!(q.pop_due(100).is_none());
    }

    #[test]
    fn the_heap_pops_in_deadline_then_schedule_order() {
        let mut q = EventQueue::default();
        let mut x: u64 = 7;
        let mut expected = Vec::new();
        for _ in 0..5_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let deadline = (x >> 33) % 300;
            let (key, seq) = q.insert(deadline, call());
            if x % 7 == 0 {
                q.cancel(key);
            } else {
                expected.push((deadline, seq));
            }
        }
        expected.sort_unstable();
        let mut popped = Vec::new();
        while let Some(deadline) = q.next_deadline() {
            let fired = q.pop_due(deadline).expect("due");
            popped.push((deadline, fired.seq));
        }
        assert_eq!(popped, expected);
    }

    /// Against a model (a sorted set), with deadlines now, soon, later and
    /// far out, some already past, scheduled while the clock moves, with
    /// cancellations: the queue pops exactly the model's order. A queue
    /// of a few hundred stays in its heap.
    #[test]
    fn the_queue_matches_a_sorted_model() {
        let most_in_buckets = matches_a_sorted_model(5);
        assert_eq!(most_in_buckets, 0, "a small queue stays in the heap");
    }

    /// The same with more pushes than pops: the queue grows to thousands,
    /// spreads into the radix buckets, then drains back to its heap.
    #[test]
    fn a_growing_queue_matches_a_sorted_model() {
        let most_in_buckets = matches_a_sorted_model(6);
        assert!(
            most_in_buckets > 5_000,
            "most in buckets: {most_in_buckets}"
        );
    }

    /// Runs the model test with `inserts` tenths of the operations pushes
    /// (a tenth cancels, the rest pop); returns the most entries the
    /// radix buckets held at once.
    fn matches_a_sorted_model(inserts: u64) -> usize {
        use std::collections::BTreeMap;
        let mut q = EventQueue::default();
        let mut model: BTreeMap<(u64, u64), EventKey> = BTreeMap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut now = 0u64;
        let mut popped = 0;
        let mut most_in_buckets = 0;
        for _ in 0..60_000 {
            let r = next();
            match r % 10 {
                n if n < inserts => {
                    let delay = match (r >> 8) % 6 {
                        0 => 0,
                        1 => (r >> 16) % 1_000_000,
                        2 => (r >> 16) % 5_000_000,
                        3 => (r >> 16) % 2_000_000_000,
                        // On a grid of 1 ms, as tickers started together
                        // are: many entries share a deadline.
                        4 => (1 + (r >> 16) % 8) * 1_000_000 - now % 1_000_000,
                        _ => (r >> 16) % 3_600_000_000_000,
                    };
                    let deadline = if (r >> 40) % 50 == 0 {
                        now / 2
                    } else {
                        now + delay
                    };
                    let (key, seq) = q.insert(deadline, call());
                    model.insert((deadline, seq), key);
                }
                n if n == inserts => {
                    if let Some((&k, &key)) = model.iter().nth(((r >> 8) % 16) as usize) {
                        assert!(q.cancel(key));
                        model.remove(&k);
                    }
                }
                _ => {
                    let expected = model.keys().next().copied();
                    assert_eq!(q.next_deadline(), expected.map(|(d, _)| d));
                    if let Some((deadline, seq)) = expected {
                        now = now.max(deadline);
                        let fired = q.pop_due(now).expect("due");
                        assert_eq!(fired.seq, seq);
                        model.remove(&(deadline, seq));
                        popped += 1;
                    }
                }
            }
            assert_eq!(q.len(), model.len());
            most_in_buckets = most_in_buckets.max(q.heap.in_buckets());
        }
        while let Some((&(deadline, seq), _)) = model.iter().next() {
            assert_eq!(q.pop_due(u64::MAX).map(|f| f.seq), Some(seq));
            model.remove(&(deadline, seq));
        }
        assert!(q.is_empty() && q.next_deadline().is_none());
        assert!(popped > 10_000, "the test pops a lot: {popped}");
        most_in_buckets
    }

    #[test]
    fn stale_entries_are_bounded() {
        let mut q = EventQueue::default();
        for i in 0..10_000u64 {
            let (k, _) = q.insert(i, call());
            q.cancel(k);
        }
        assert!(
            q.heap.len() <= STALE_SLACK + 1,
            "heap holds {}",
            q.heap.len()
        );
        assert!(q.is_empty());
    }
}
