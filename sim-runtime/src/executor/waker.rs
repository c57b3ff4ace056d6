//! Wakers without allocation: the data pointer packs the runtime id, the
//! task's slot and its generation. Cloning and dropping count (a plain
//! increment); waking finds the runtime through the thread's context and
//! queues the task ([`Core::wake_slot`]).

use super::context;
use super::Core;
use crate::task::{TaskCell, DONE, NOTED, QUEUED, ROOT_SLOT, RUNNING, SLOT_MASK};
use crate::trace::{EventKind, Label};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::task::{RawWaker, RawWakerVTable, Waker};

#[cfg(not(target_pointer_width = "64"))]
compile_error!("sim-runtime packs wakers into 64-bit pointers");

#[inline]
fn pack(core: u16, slot: u32, generation: u32) -> usize {
    debug_assert!(slot <= SLOT_MASK);
    ((core as usize) << 48) | (((generation & SLOT_MASK) as usize) << 24) | slot as usize
}

#[inline]
fn unpack(data: usize) -> (u16, u32, u32) {
    (
        (data >> 48) as u16,
        (data as u32) & SLOT_MASK,
        ((data >> 24) as u32) & SLOT_MASK,
    )
}

/// The waker of a task (or of the root future, with `ROOT_SLOT`).
#[inline]
pub(crate) fn waker(core: u16, slot: u32, generation: u32) -> Waker {
    let raw = RawWaker::new(pack(core, slot, generation) as *const (), &VTABLE);
    // SAFETY: the vtable's functions uphold the RawWaker contract; the data
    // is a plain integer, so clone and drop have nothing to manage.
    unsafe { Waker::from_raw(raw) }
}

static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);

/// A task's waker as the event queue keeps it for a timer: not counted,
/// since the queue itself can say which timers hold whose waker
/// ([`kept_data`]), and counting costs a cache miss per timer set and per
/// timer fired. A clone of it (leaving the queue) is an ordinary, counted
/// waker.
static KEPT_VTABLE: RawWakerVTable =
    RawWakerVTable::new(kept_clone, kept_wake, wake_by_ref, kept_drop);

/// The copy of `waker` a timer keeps: uncounted for a task's own waker, a
/// clone of any other.
#[inline]
pub(crate) fn keep(waker: &Waker) -> Waker {
    if std::ptr::eq(waker.vtable(), &VTABLE) {
        let raw = RawWaker::new(waker.data(), &KEPT_VTABLE);
        // SAFETY: as for `waker` above; the kept vtable's functions uphold
        // the same contract.
        unsafe { Waker::from_raw(raw) }
    } else {
        waker.clone()
    }
}

/// Whether the kept `kept` wakes what `waker` wakes (so a timer need not
/// replace it).
#[inline]
pub(crate) fn keeps(kept: &Waker, waker: &Waker) -> bool {
    if std::ptr::eq(kept.vtable(), &KEPT_VTABLE) {
        std::ptr::eq(waker.vtable(), &VTABLE) && kept.data() == waker.data()
    } else {
        kept.will_wake(waker)
    }
}

/// The task slot a waker of this runtime's tasks wakes (either kind), if
/// it is one: to fetch the slot before the wake.
#[inline]
pub(crate) fn task_slot(waker: &Waker) -> Option<u32> {
    let ours = std::ptr::eq(waker.vtable(), &KEPT_VTABLE) || std::ptr::eq(waker.vtable(), &VTABLE);
    ours.then(|| unpack(waker.data() as usize).1)
}

/// For a kept task waker, its packed data (to match a task by); `None`
/// for any other waker.
pub(crate) fn kept_data(waker: &Waker) -> Option<usize> {
    std::ptr::eq(waker.vtable(), &KEPT_VTABLE).then(|| waker.data() as usize)
}

// The vtables' functions below: `RawWakerVTable` calls them with the data
// of a waker made here (a packed task address, see `pack`), which is all
// their safety needs; they read no memory through it.

unsafe fn kept_clone(data: *const ()) -> RawWaker {
    count(data as usize, 1);
    RawWaker::new(data, &VTABLE)
}

unsafe fn kept_wake(data: *const ()) {
    wake_packed(data as usize, 0);
}

unsafe fn kept_drop(_data: *const ()) {}

// Clones are counted per task (a clone is something that may wake it), so
// a report can tell a task that only a lock can wake; the count is a
// plain increment in the task's slot.
unsafe fn clone(data: *const ()) -> RawWaker {
    count(data as usize, 1);
    RawWaker::new(data, &VTABLE)
}

unsafe fn wake(data: *const ()) {
    // A wake by value consumes the waker: uncounted with the wake.
    wake_packed(data as usize, -1);
}

unsafe fn wake_by_ref(data: *const ()) {
    wake_packed(data as usize, 0);
}

unsafe fn drop_waker(data: *const ()) {
    count(data as usize, -1);
}

#[inline]
fn count(data: usize, delta: i32) {
    let (core, slot, generation) = unpack(data);
    if slot != ROOT_SLOT {
        context::with_core(core, |c| c.count_waker(slot, generation, delta));
    }
}

/// Wakes the task of `data`, and counts `delta` on its wakers (-1 for a
/// wake by value, 0 otherwise) under the same look-up of the runtime (the
/// hot path: every wake, as a socket's or a timer's waker).
#[inline]
fn wake_packed(data: usize, delta: i32) {
    let (core, slot, generation) = unpack(data);
    let woken = context::with_core(core, |c| {
        if delta != 0 && slot != ROOT_SLOT {
            c.count_waker(slot, generation, delta);
        }
        c.wake_slot(slot, generation)
    });
    if woken.is_none() {
        park_remote_wake(data);
    }
}

/// A wake whose runtime is not this thread's: a real thread woke a
/// simulated task (an escape), or the runtime is gone. Parked; the runtime
/// drains it when it runs out of work.
#[cold]
fn park_remote_wake(data: usize) {
    let mut remote = REMOTE.lock().unwrap_or_else(|e| e.into_inner());
    // Bound the list: wakes for runtimes that are gone must not grow it
    // without limit.
    if remote.len() < REMOTE_WAKES_MAX {
        remote.push(data);
    }
    REMOTE_PENDING.store(true, Ordering::Release);
}

const REMOTE_WAKES_MAX: usize = 1 << 16;
static REMOTE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static REMOTE_PENDING: AtomicBool = AtomicBool::new(false);

/// Takes the parked wakes addressed to runtime `core`. Inlined: at each
/// park of every run, and almost always none.
#[inline]
pub(crate) fn take_remote_wakes(core: u16) -> Vec<(u32, u32)> {
    if !REMOTE_PENDING.load(Ordering::Acquire) {
        return Vec::new();
    }
    take_pending_remote_wakes(core)
}

#[cold]
fn take_pending_remote_wakes(core: u16) -> Vec<(u32, u32)> {
    let mut remote = REMOTE.lock().unwrap_or_else(|e| e.into_inner());
    let mut mine = Vec::new();
    remote.retain(|&data| {
        let (c, slot, generation) = unpack(data);
        if c == core {
            mine.push((slot, generation));
            false
        } else {
            true
        }
    });
    if remote.is_empty() {
        REMOTE_PENDING.store(false, Ordering::Release);
    }
    mine
}

impl Core {
    /// Counts a clone (`+1`) or a drop (`-1`) of a task's waker.
    #[inline]
    fn count_waker(&self, slot: u32, generation: u32, delta: i32) {
        // Its own cell, never borrowed around a clone: a waker may be
        // cloned while the task table is borrowed.
        self.waker_counts.borrow_mut().add(slot, generation, delta);
    }

    /// For a parked task (not ready, not running, not done): how many
    /// clones of its waker are alive, so how many things could wake it.
    /// `None` for a task that can run, or is gone.
    pub fn parked_wakers(&self, id: u64) -> Option<u32> {
        let tasks = self.tasks.borrow();
        let slot = tasks.find(id)?;
        let task = tasks.slot(slot);
        let count = self.waker_counts.borrow().get(slot);
        // Timers keep a task's waker uncounted (see `keep`).
        let data = pack(self.id, slot, task.generation & SLOT_MASK);
        let timers = self
            .time
            .count_timer_wakers(|waker| kept_data(waker) == Some(data));
        (task.flags & (QUEUED | RUNNING | DONE) == 0).then_some(count + timers)
    }

    /// Whether `waker` is task `id`'s own (not a combinator's wrapper).
    pub fn is_own_waker(&self, id: u64, waker: &Waker) -> bool {
        let tasks = self.tasks.borrow();
        let Some(slot) = tasks.find(id) else {
            return false;
        };
        let own = self::waker(self.id, slot, tasks.slot(slot).generation & SLOT_MASK);
        // (A packed waker owns nothing: forgetting it leaks nothing, and
        // its drop must not count.)
        let same = own.will_wake(waker);
        std::mem::forget(own);
        same
    }

    /// Queues the task in `slot` (of `generation`) after a wake, or the root
    /// future. A stale wake (a finished task, a reused slot) does nothing.
    pub(super) fn wake_slot(&self, slot: u32, generation: u32) {
        if slot == ROOT_SLOT {
            let queued = self.in_block_on.get() && self.scheduler.borrow_mut().queue_root();
            if queued {
                self.trace(EventKind::Wake, 0, Label::None);
            }
            return;
        }
        let mut tasks = self.tasks.borrow_mut();
        let Some(task) = tasks.get_mut(slot) else {
            return;
        };
        if task.generation & SLOT_MASK != generation || task.id == 0 {
            return;
        }
        if task.flags & (QUEUED | DONE) != 0 {
            return;
        }
        task.flags |= QUEUED;
        let (id, owner, scope, node) = (task.id, task.owner, task.scope, task.node);
        // Taken while the slot is at hand (looking it up again after the
        // scheduler's answer cost more than the fetch saved).
        let future = task.cell.as_deref().map(|cell| cell as *const dyn TaskCell);
        if task.flags & NOTED != 0 {
            // The poll to come clears the note its last poll left.
            tasks.prefetch_wait(slot);
        }
        drop(tasks);
        let mut scheduler = self.scheduler.borrow_mut();
        let local_waker = scheduler.woken(slot, owner, scope, node);
        // With few tasks ready this one runs next or nearly: fetch its
        // future now, while the waker's caller (a delivery, a timer) goes
        // on. (With many, the pick's own lookahead fetches it.)
        if let Some(future) = future.filter(|_| scheduler.ready_len() <= 2) {
            crate::prefetch::lines(future, 2);
        }
        drop(scheduler);
        self.trace(EventKind::Wake, id, Label::None);
        if let Some(waker) = local_waker {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_round_trips() {
        for (c, s, g) in [
            (1u16, 0u32, 0u32),
            (65535, SLOT_MASK, SLOT_MASK),
            (7, 123, 456),
        ] {
            assert_eq!(unpack(pack(c, s, g)), (c, s, g));
        }
        assert_eq!(
            unpack(pack(3, 4, SLOT_MASK + 2)),
            (3, 4, 1),
            "generations wrap"
        );
    }
}
