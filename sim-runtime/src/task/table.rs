//! The task table, a part of the core: every task's slot (its future, its
//! flags, its host and runtime scope), its name and spawn site, and what it
//! waits on. Slots are reused; a generation tells a stale handle from the
//! slot's new task.
//!
//! The table knows nothing of scheduling or wakers: the core asks it for
//! a slot, marks it, and frees it.

use super::wait::WaitNote;
use super::{
    RawTask, TaskCell, TaskMeta, TaskSlot, BLOCKING, DETACHED, DONE, NOTED, OUTPUT_TAKEN, QUEUED,
    ROOT_SLOT, SLOT_MASK, THREAD,
};

/// The task table.
pub(crate) struct Tasks {
    slots: Vec<TaskSlot>,
    free: Vec<u32>,
    live: usize,
    /// Unfinished tasks with the `THREAD` flag.
    unscoped_unfinished: usize,
    next_id: u64,
    /// What each pending task (by slot) waits on, and how many more waits
    /// its last poll noted.
    waits: Vec<Option<(WaitNote, u32)>>,
}

const EMPTY: TaskSlot = TaskSlot {
    generation: 0,
    id: 0,
    flags: 0,
    owner: 0,
    node: 0,
    scope: 0,
    cell: None,
    join_waker: None,
    site: None,
};

impl Tasks {
    /// An empty table; task ids count up from 1.
    pub(crate) fn new() -> Tasks {
        Tasks {
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            unscoped_unfinished: 0,
            next_id: 1,
            waits: Vec::new(),
        }
    }

    /// The id the next task will get.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Puts a new task, queued, into a free slot: returns its slot and
    /// generation (its id is [`Tasks::next_id`] before the call).
    pub(crate) fn insert(
        &mut self,
        cell: Box<dyn TaskCell>,
        meta: &TaskMeta,
        owner: u32,
        node: u32,
        scope: u16,
    ) -> (u32, u32) {
        let id = self.next_id;
        self.next_id += 1;
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.slots.len() as u32;
                assert!(
                    slot < ROOT_SLOT,
                    "sim: more than {ROOT_SLOT} live tasks in one simulation"
                );
                self.slots.push(EMPTY);
                slot
            }
        };
        let task = &mut self.slots[slot as usize];
        debug_assert!(task.id == 0 && task.cell.is_none(), "a free slot is empty");
        task.id = id;
        // OS threads and the blocking pool's closures run off the
        // runtime's own tasks: whether or not it is blocked on.
        task.flags = match meta.kind {
            "thread" => QUEUED | THREAD,
            "blocking" => QUEUED | THREAD | BLOCKING,
            _ => QUEUED,
        };
        if task.flags & THREAD != 0 {
            self.unscoped_unfinished += 1;
        }
        task.owner = owner;
        task.node = node;
        task.scope = scope;
        task.cell = Some(cell);
        task.site = Some(meta.location);
        self.live += 1;
        (slot, task.generation)
    }

    /// Empties a slot for reuse (a new generation).
    pub(crate) fn free(&mut self, slot: u32) {
        let task = &mut self.slots[slot as usize];
        debug_assert!(task.id != 0, "freeing a slot twice");
        task.generation = task.generation.wrapping_add(1);
        task.id = 0;
        let noted = task.flags & NOTED != 0;
        task.flags = 0;
        task.owner = 0;
        task.node = 0;
        task.join_waker = None;
        task.site = None;
        if noted {
            self.waits[slot as usize] = None;
        }
        self.free.push(slot);
        self.live -= 1;
    }

    /// The slot `slot`.
    #[inline]
    pub(crate) fn slot(&self, slot: u32) -> &TaskSlot {
        &self.slots[slot as usize]
    }

    /// The slot `slot`, to change.
    #[inline]
    pub(crate) fn slot_mut(&mut self, slot: u32) -> &mut TaskSlot {
        &mut self.slots[slot as usize]
    }

    /// Fetches the memory of the next two polls (a guess, see
    /// `Scheduler::likely_next`): the future of `first`, whose slot the
    /// previous guess fetched, and the slot of `second`.
    #[inline]
    pub(crate) fn prefetch(&self, first: u32, second: u32) {
        self.prefetch_future(first);
        self.prefetch_wait(first);
        self.prefetch_slot(second);
    }

    /// Fetches the wait entry of the task in `slot`: a poll that ends
    /// pending notes what it waits on there, and the entries lie apart
    /// from the slots (a cold line per poll otherwise).
    #[inline]
    pub(crate) fn prefetch_wait(&self, slot: u32) {
        if let Some(entry) = self.waits.get(slot as usize) {
            // An entry may straddle two lines: fetch both ends.
            let start = (entry as *const Option<(WaitNote, u32)>).cast::<u8>();
            crate::prefetch::line(start);
            crate::prefetch::line(
                start.wrapping_add(std::mem::size_of::<Option<(WaitNote, u32)>>() - 1),
            );
        }
    }

    /// Fetches the first lines of the future of the task in `slot` (it is
    /// polled soon).
    #[inline]
    pub(crate) fn prefetch_future(&self, slot: u32) {
        if let Some(cell) = self
            .slots
            .get(slot as usize)
            .and_then(|t| t.cell.as_deref())
        {
            crate::prefetch::lines(cell as *const dyn TaskCell, 2);
        }
    }

    /// Fetches the slot `slot` (a wake is coming).
    #[inline]
    pub(crate) fn prefetch_slot(&self, slot: u32) {
        if let Some(task) = self.slots.get(slot as usize) {
            crate::prefetch::line(task);
        }
    }

    /// The slot `slot`, if the table has one.
    #[inline]
    pub(crate) fn get_mut(&mut self, slot: u32) -> Option<&mut TaskSlot> {
        self.slots.get_mut(slot as usize)
    }

    /// Runs `f` on `raw`'s slot if it still holds that task.
    pub(crate) fn with_live<R>(
        &mut self,
        raw: RawTask,
        f: impl FnOnce(&mut TaskSlot) -> R,
    ) -> Option<R> {
        let task = self.slots.get_mut(raw.slot as usize)?;
        (task.generation == raw.generation && task.id == raw.id).then(|| f(task))
    }

    /// The slot of task `id` (a scan: for reports and rare calls).
    pub(crate) fn find(&self, id: u64) -> Option<u32> {
        self.slots.iter().position(|t| t.id == id).map(|s| s as u32)
    }

    /// The task id of a ready-set entry (0 for the root future).
    #[inline]
    pub(crate) fn id_of(&self, slot: u32) -> u64 {
        if slot == ROOT_SLOT {
            0
        } else {
            self.slots[slot as usize].id
        }
    }

    /// How many tasks are alive (spawned, not yet finished and freed).
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.live
    }

    /// The live, unfinished tasks `which` selects, in slot order, as
    /// handles of runtime `core`.
    pub(crate) fn unfinished(&self, core: u16, which: impl Fn(&TaskSlot) -> bool) -> Vec<RawTask> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, t)| t.id != 0 && t.flags & DONE == 0 && which(t))
            .map(|(slot, t)| RawTask {
                core,
                slot: slot as u32,
                generation: t.generation,
                id: t.id,
            })
            .collect()
    }

    /// How many unfinished tasks `which` selects.
    /// How many unfinished tasks run off the runtime's own tasks (flag
    /// `THREAD`: threads and `spawn_blocking` closures).
    #[inline]
    pub(crate) fn unscoped_unfinished(&self) -> usize {
        self.unscoped_unfinished
    }

    /// The task in `slot` finished (or was cancelled): counted off.
    #[inline]
    pub(crate) fn finished(&mut self, slot: u32) {
        if self.slots[slot as usize].flags & THREAD != 0 {
            self.unscoped_unfinished -= 1;
        }
    }

    /// How many unfinished closures of the blocking pool runtime scope
    /// `scope` has.
    pub(crate) fn count_unfinished_blocking(&self, scope: u16) -> usize {
        self.count_unfinished(|t| t.scope == scope && t.flags & BLOCKING != 0)
    }

    pub(crate) fn count_unfinished(&self, which: impl Fn(&TaskSlot) -> bool) -> usize {
        self.slots
            .iter()
            .filter(|t| t.id != 0 && t.flags & DONE == 0 && which(t))
            .count()
    }

    /// The task in `slot`, being polled, waits on `note`: its poll's first
    /// note is kept, the others counted.
    #[inline]
    pub(crate) fn note_wait(&mut self, slot: u32, note: WaitNote) {
        self.slots[slot as usize].flags |= NOTED;
        let index = slot as usize;
        if self.waits.len() <= index {
            self.waits.resize(index + 1, None);
        }
        match &mut self.waits[index] {
            Some((_, more)) => *more += 1,
            empty => *empty = Some((note, 0)),
        }
    }

    /// Forgets what the task in `slot` noted (a new poll begins).
    #[inline]
    pub(crate) fn clear_wait(&mut self, slot: u32) {
        let task = &mut self.slots[slot as usize];
        if task.flags & NOTED != 0 {
            task.flags &= !NOTED;
            self.waits[slot as usize] = None;
        }
    }

    /// What task `id` waits on, if its last poll noted it.
    pub(crate) fn wait_of(&self, id: u64) -> Option<(WaitNote, u32)> {
        let slot = self.find(id)?;
        self.waits.get(slot as usize).copied().flatten()
    }

    /// Takes every task's cell out (a shutdown drops them after).
    pub(crate) fn take_cells(&mut self) -> Vec<Box<dyn TaskCell>> {
        self.slots
            .iter_mut()
            .filter_map(|t| t.cell.take())
            .collect()
    }

    /// Takes the cells of finished tasks whose output a live join handle
    /// has yet to read, with their ids (see `orphans`).
    pub(crate) fn take_unread_outputs(&mut self) -> Vec<(u64, Box<dyn TaskCell>)> {
        self.slots
            .iter_mut()
            .filter(|t| {
                t.id != 0 && t.flags & DONE != 0 && t.flags & (OUTPUT_TAKEN | DETACHED) == 0
            })
            .filter_map(|t| Some((t.id, t.cell.take()?)))
            .collect()
    }
}

/// Per slot: the generation and how many clones of its waker live. Its own
/// part, apart from the table: a waker may be cloned while the table is
/// borrowed.
#[derive(Default)]
pub(crate) struct WakerCounts(Vec<(u32, u32)>);

impl WakerCounts {
    /// A new task in `slot` starts with no clones.
    pub(crate) fn reset(&mut self, slot: u32, generation: u32) {
        let index = slot as usize;
        if self.0.len() <= index {
            self.0.resize(index + 1, (u32::MAX, 0));
        }
        self.0[index] = (generation & SLOT_MASK, 0);
    }

    /// Counts a clone (`+1`) or a drop (`-1`) of a waker of `slot`'s task
    /// of `generation` (a stale waker counts nothing).
    #[inline]
    pub(crate) fn add(&mut self, slot: u32, generation: u32, delta: i32) {
        if let Some((g, count)) = self.0.get_mut(slot as usize) {
            if *g == generation {
                *count = count.wrapping_add_signed(delta);
            }
        }
    }

    /// The clones of `slot`'s waker alive.
    pub(crate) fn get(&self, slot: u32) -> u32 {
        self.0.get(slot as usize).map_or(0, |(_, c)| *c)
    }
}
