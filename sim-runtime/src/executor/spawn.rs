//! Tasks' lives, as the core wires them: spawning into the task table and
//! the ready set, joining, aborting and cancelling, crashes of a host, and
//! local sets.

use super::Core;
use crate::task::{
    Cell, RawTask, TaskCell, TaskMeta, TaskSlot, ABORT, DETACHED, DONE, OUTPUT_TAKEN, RUNNING,
    SLOT_MASK,
};
use crate::trace::{EventKind, Label};
use std::future::Future;
use std::task::{Context, Poll, Waker};

impl Core {
    /// Spawns `future` onto this runtime (`owner` 0) or onto a local set.
    pub fn spawn<F>(&self, future: F, meta: TaskMeta, owner: u32) -> RawTask
    where
        F: Future + 'static,
    {
        self.spawn_cell(Cell::boxed(future), meta, owner, self.hosts.current())
    }

    /// Spawns `future` as a task of `node` (a simulated host).
    pub fn spawn_on_node<F>(&self, future: F, meta: TaskMeta, node: u32) -> RawTask
    where
        F: Future + 'static,
    {
        self.spawn_cell(Cell::boxed(future), meta, 0, node)
    }

    fn spawn_cell(
        &self,
        cell: Box<dyn TaskCell>,
        meta: TaskMeta,
        owner: u32,
        node: u32,
    ) -> RawTask {
        let mut tasks = self.tasks.borrow_mut();
        let id = tasks.next_id();
        self.trace
            .borrow_mut()
            .record_spawn(self.time.now_ns(), id, &meta, node);
        let mut last = self.last_origin.get();
        self.origins.record(id, &meta, &mut last);
        self.last_origin.set(last);
        let scope = self.scopes.current();
        let (slot, generation) = tasks.insert(cell, &meta, owner, node, scope);
        drop(tasks);
        self.waker_counts.borrow_mut().reset(slot, generation);
        let local_waker = self
            .scheduler
            .borrow_mut()
            .spawned(slot, owner, scope, node);
        if let Some(waker) = local_waker {
            waker.wake();
        }
        RawTask {
            core: self.id,
            slot,
            generation,
            id,
        }
    }

    /// Marks a task done, wakes its joiner, and frees it if nobody will
    /// read its output.
    pub(super) fn finish(&self, slot: u32, cell: Box<dyn TaskCell>) {
        let mut tasks = self.tasks.borrow_mut();
        tasks.finished(slot);
        let task = tasks.slot_mut(slot);
        task.flags = (task.flags | DONE) & !(RUNNING | crate::task::QUEUED);
        let join_waker = task.join_waker.take();
        let owner = task.owner;
        let id = task.id;
        let mut dead_cell = None;
        if task.flags & DETACHED != 0 {
            dead_cell = Some(cell);
            tasks.free(slot);
        } else {
            task.cell = Some(cell);
        }
        drop(tasks);
        if owner != 0 {
            self.scheduler.borrow_mut().local_finished(owner);
        }
        // The output (or the panic payload) may run user code when dropped.
        if let Some(cell) = dead_cell {
            self.drop_output(id, cell);
        }
        if let Some(waker) = join_waker {
            waker.wake();
        }
        // A shutdown waiting for the blocking pool's closures looks again.
        let waiters = std::mem::take(&mut *self.finish_waiters.borrow_mut());
        for waker in waiters {
            waker.wake();
        }
    }

    /// Polls a join handle: moves the output into `dst` when the task is
    /// done, or registers the waker. A task this runtime no longer knows was
    /// cancelled by a shutdown.
    ///
    /// # Safety
    /// `dst` must point to an `Output<T>` where `T` is the output type of
    /// the future spawned as `raw`.
    pub unsafe fn poll_join(&self, raw: RawTask, cx: &mut Context<'_>, dst: *mut ()) -> Poll<()> {
        let result = self.tasks.borrow_mut().with_live(raw, |task| {
            if task.flags & DONE != 0 {
                if task.flags & OUTPUT_TAKEN == 0 {
                    task.flags |= OUTPUT_TAKEN;
                    if let Some(cell) = task.cell.as_mut() {
                        // SAFETY: the caller's contract.
                        unsafe { cell.take_output(dst) };
                    }
                }
                Poll::Ready(())
            } else {
                match &task.join_waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => task.join_waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        });
        result.unwrap_or(Poll::Ready(()))
    }

    /// The join handle is gone: free the task when it is done, or mark it
    /// so that it is freed when it finishes.
    pub fn join_drop(&self, raw: RawTask) {
        let mut dead_cell = None;
        {
            let mut tasks = self.tasks.borrow_mut();
            let Some(task) = tasks.get_mut(raw.slot) else {
                return;
            };
            if task.generation != raw.generation || task.id != raw.id {
                return;
            }
            task.join_waker = None;
            if task.flags & DONE != 0 {
                dead_cell = task.cell.take();
                tasks.free(raw.slot);
            } else {
                task.flags |= DETACHED;
            }
        }
        if let Some(cell) = dead_cell {
            self.drop_output(raw.id, cell);
        }
    }

    /// Drops a finished task's cell (its output or panic payload), which
    /// may run user code: as the task (`task::id()` names it), and a panic
    /// there stays here, as in tokio.
    fn drop_output(&self, id: u64, cell: Box<dyn TaskCell>) {
        let previous = self.current_task.replace(id);
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(cell)));
        self.current_task.set(previous);
        drop(dropped);
    }

    /// Whether the task finished (or is gone with a shutdown).
    pub fn is_finished(&self, raw: RawTask) -> bool {
        self.tasks
            .borrow_mut()
            .with_live(raw, |task| task.flags & DONE != 0)
            .unwrap_or(true)
    }

    /// Requests cancellation: the task is dropped at its next turn, as if it
    /// returned `Cancelled` at its next `.await`.
    pub fn abort(&self, raw: RawTask) {
        let wake = self
            .tasks
            .borrow_mut()
            .with_live(raw, |task| {
                if task.flags & (DONE | ABORT) != 0 {
                    return false;
                }
                task.flags |= ABORT;
                true
            })
            .unwrap_or(false);
        if wake {
            self.wake_slot(raw.slot, raw.generation & SLOT_MASK);
        }
    }

    /// Cancels a task at once (a crash, a shutdown, a dropped local set),
    /// unless it is running or done.
    fn cancel_now(&self, raw: RawTask) {
        let cell = self
            .tasks
            .borrow_mut()
            .with_live(raw, |task| {
                if task.flags & (DONE | RUNNING) != 0 {
                    None
                } else {
                    task.cell.take()
                }
            })
            .flatten();
        if let Some(mut cell) = cell {
            self.trace(EventKind::Cancel, raw.id, Label::None);
            let previous = self.current_task.replace(raw.id);
            cell.cancel();
            self.current_task.set(previous);
            self.finish(raw.slot, cell);
        }
    }

    /// Cancels every live task `which` selects, in slot order. A cancelled
    /// future's drop may spawn or wake, so it scans again until none is
    /// left (bounded: spawns after a shutdown are refused or cancelled).
    pub(super) fn cancel_live_tasks(&self, which: impl Fn(&TaskSlot) -> bool) {
        for _round in 0..1024 {
            let victims = self.tasks.borrow().unfinished(self.id, &which);
            if victims.is_empty() {
                break;
            }
            for raw in victims {
                self.cancel_now(raw);
            }
        }
    }

    /// Cancels every task of `node` at once, in slot order: what a crash of
    /// that host does.
    pub fn cancel_node(&self, node: u32) {
        let victims = self.tasks.borrow().unfinished(self.id, |t| t.node == node);
        for raw in victims {
            self.cancel_now(raw);
        }
    }

    /// A crash of `node`: its tasks are cancelled at once, then each crash
    /// listener (the disk, ...) resolves what the crash does to its state.
    pub fn crash_node(&self, node: u32) {
        self.cancel_node(node);
        for listener in self.hosts.crash_listeners() {
            listener(node);
        }
    }

    // ----- local sets ----------------------------------------------------------

    /// Creates a local set and returns its owner number.
    pub fn local_new(&self) -> u32 {
        self.scheduler.borrow_mut().local_new()
    }

    /// The local set being run, if any (what `spawn_local` spawns onto).
    pub fn current_local(&self) -> u32 {
        self.current_local.get()
    }

    /// Makes `owner` the current local set; returns the previous one.
    pub fn set_current_local(&self, owner: u32) -> u32 {
        self.current_local.replace(owner)
    }

    /// How many tasks of a local set have not finished.
    pub fn local_live(&self, owner: u32) -> usize {
        self.scheduler.borrow().local_live(owner)
    }

    /// Runs one ready task of the local set, picked by the policy. Returns
    /// whether more are ready; registers `waker` for later wakes otherwise.
    pub fn local_tick(&self, owner: u32, waker: &Waker) -> bool {
        let slot = {
            let mut scheduler = self.scheduler.borrow_mut();
            if !self.deciding.get() {
                scheduler.local_next(owner, waker, None, false)
            } else {
                let tasks = self.tasks.borrow();
                let mut log = |among: &[u32], choose: &mut dyn FnMut() -> usize| {
                    self.log_pick(among, &tasks, choose)
                };
                scheduler.local_next(owner, waker, Some(&mut log), self.replaying.get())
            }
        };
        let Some(slot) = slot else {
            return false;
        };
        let previous = self.set_current_local(owner);
        self.poll_task(slot);
        self.set_current_local(previous);
        self.scheduler.borrow().local_has_ready(owner)
    }

    /// Drops a local set: its unfinished tasks are cancelled.
    pub fn local_drop(&self, owner: u32) {
        let victims = self
            .tasks
            .borrow()
            .unfinished(self.id, |t| t.owner == owner);
        // Its tasks drop inside the set's context, as in tokio: a drop
        // that calls `block_in_place` is refused there.
        let previous = self.set_current_local(owner);
        for raw in victims {
            self.cancel_now(raw);
        }
        self.set_current_local(previous);
        self.scheduler.borrow_mut().local_drop(owner);
    }
}
