//! Tasks: a spawned future in a type-erased cell, the slot that holds it,
//! and the table of slots (`table::Tasks`, a part of the core), with
//! what each pending task waits on ([`wait`]).

pub mod orphans;
pub(crate) mod table;
pub mod wait;

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe, Location};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// The slot number that stands for the root future (`block_on`'s).
pub(crate) const ROOT_SLOT: u32 = 0xFF_FFFF;
/// Slots and generations are 24 bits each in a packed waker.
pub(crate) const SLOT_MASK: u32 = 0xFF_FFFF;

/// A handle on a spawned task: plain data, valid on the thread of its
/// runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawTask {
    /// The runtime.
    pub core: u16,
    /// The slab slot.
    pub slot: u32,
    /// The slot's generation when the task was spawned.
    pub generation: u32,
    /// The task's id (counts up from 1 per runtime).
    pub id: u64,
}

/// Why a task ended without an output.
pub enum Failure {
    /// It was aborted, or dropped with its runtime.
    Cancelled,
    /// Its future panicked; this is the payload.
    Panic(Box<dyn Any + Send + 'static>),
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Cancelled => f.write_str("Cancelled"),
            Failure::Panic(_) => f.write_str("Panic(..)"),
        }
    }
}

/// What a join handle reads out of a finished task.
pub type Output<T> = Option<Result<T, Failure>>;

/// A spawned future with its output slot, behind one allocation.
pub(crate) trait TaskCell {
    /// Polls the future; on completion (or panic) stores the result.
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// Drops the future and stores `Cancelled` (or the panic its drop
    /// raised, as tokio reports it).
    fn cancel(&mut self);
    /// Moves the stored result into `dst`.
    ///
    /// # Safety
    /// `dst` must point to a live `Output<F::Output>` of this cell's future
    /// type. A join handle is typed by its task's output at spawn, so the
    /// handle's pointer always is.
    unsafe fn take_output(&mut self, dst: *mut ());
}

enum Stage<F: Future> {
    Running(F),
    Done(Result<F::Output, Failure>),
    Taken,
}

pub(crate) struct Cell<F: Future> {
    stage: Stage<F>,
}

impl<F: Future + 'static> Cell<F> {
    pub(crate) fn boxed(future: F) -> Box<dyn TaskCell> {
        Box::new(Cell {
            stage: Stage::Running(future),
        })
    }
}

impl<F: Future + 'static> TaskCell for Cell<F> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !matches!(self.stage, Stage::Running(_)) {
            // A finished task is never polled again: the scheduler frees or
            // parks it. Returning Ready keeps a stray wake harmless.
            return Poll::Ready(());
        }
        let stage: *mut Stage<F> = &mut self.stage;
        let polled = catch_unwind(AssertUnwindSafe(|| {
            // A panicking poll drops the future while the panic unwinds, as
            // tokio does: its `Drop` sees `std::thread::panicking()`.
            let unwinding = DropOnUnwind(stage);
            // SAFETY: the stage is `Running` (checked above); the cell is
            // boxed and never moved while the future lives, and the future
            // is dropped in place (by `cancel`, on completion, or by the
            // guard while this poll unwinds).
            let future = unsafe {
                let Stage::Running(future) = &mut *stage else {
                    unreachable!("checked above")
                };
                Pin::new_unchecked(future)
            };
            let polled = future.poll(cx);
            std::mem::forget(unwinding);
            polled
        }));
        match polled {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => {
                self.stage = Stage::Done(Ok(output));
                Poll::Ready(())
            }
            Err(payload) => {
                self.stage = Stage::Done(Err(Failure::Panic(payload)));
                Poll::Ready(())
            }
        }
    }

    fn cancel(&mut self) {
        if !matches!(self.stage, Stage::Running(_)) {
            return;
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            self.stage = Stage::Taken;
        }));
        self.stage = Stage::Done(Err(match result {
            Ok(()) => Failure::Cancelled,
            Err(payload) => Failure::Panic(payload),
        }));
    }

    unsafe fn take_output(&mut self, dst: *mut ()) {
        // SAFETY: the caller guarantees the type (see the trait).
        let dst = unsafe { &mut *(dst as *mut Output<F::Output>) };
        if let Stage::Done(_) = self.stage {
            if let Stage::Done(result) = std::mem::replace(&mut self.stage, Stage::Taken) {
                *dst = Some(result);
            }
        }
    }
}

/// Drops a task's future in place if dropped itself, which only happens
/// while its poll unwinds (a returning poll forgets it).
struct DropOnUnwind<F: Future>(*mut Stage<F>);

impl<F: Future> Drop for DropOnUnwind<F> {
    fn drop(&mut self) {
        // SAFETY: the pointer is the cell's stage, alive across the poll it
        // guards; the future in it is not borrowed any more (its poll is
        // unwinding past us), and is dropped in place, never moved.
        unsafe { *self.0 = Stage::Taken };
    }
}

/// Where a task came from, for the trace and for deadlock reports.
#[derive(Clone, Debug)]
pub struct TaskMeta {
    /// The name given with `task::Builder::name`, if any.
    pub name: Option<Box<str>>,
    /// Where `spawn` was called.
    pub location: &'static Location<'static>,
    /// What kind of spawn made it (`task`, `local`, `blocking`).
    pub kind: &'static str,
}

impl TaskMeta {
    /// The label used in the trace: `name@file:line:col`.
    pub fn label(&self) -> String {
        format!(
            "{}@{}:{}:{}",
            self.name.as_deref().unwrap_or(self.kind),
            self.location.file(),
            self.location.line(),
            self.location.column()
        )
    }
}

pub(crate) const QUEUED: u16 = 1;
pub(crate) const RUNNING: u16 = 2;
pub(crate) const DONE: u16 = 4;
pub(crate) const ABORT: u16 = 8;
pub(crate) const DETACHED: u16 = 16;
pub(crate) const OUTPUT_TAKEN: u16 = 32;
/// The task's entry in the table's waits holds a note (so a poll that
/// notes nothing need not touch the entry, which lies apart, to clear it).
pub(crate) const NOTED: u16 = 64;
/// A simulated OS thread's task (kind `thread`): it runs whenever the
/// simulation runs, whichever runtime scope spawned it, as an OS thread
/// runs whether or not a runtime is blocked on.
pub(crate) const THREAD: u16 = 128;
/// A closure of the blocking pool (also `THREAD`): a runtime's shutdown
/// waits for these.
pub(crate) const BLOCKING: u16 = 256;

/// One task's place in the runtime's slab.
pub(crate) struct TaskSlot {
    pub(crate) generation: u32,
    pub(crate) id: u64,
    pub(crate) flags: u16,
    /// 0: run by the runtime's scheduler; n: owned by local set n.
    pub(crate) owner: u32,
    /// The simulated host (node) the task belongs to: inherited from the
    /// task that spawned it. 0 is the implicit host.
    pub(crate) node: u32,
    /// The runtime scope the task was spawned onto (see `crate::scopes`):
    /// inherited from the spawning task, 0 for the simulation's first
    /// runtime.
    pub(crate) scope: u16,
    pub(crate) cell: Option<Box<dyn TaskCell>>,
    pub(crate) join_waker: Option<Waker>,
    /// Where the task was spawned (also in its `TaskMeta`): read by every
    /// poll when a hang watchdog watches, so it lives in the slot.
    pub(crate) site: Option<&'static std::panic::Location<'static>>,
}

// A poll reads its task's slot at a random place in a large slab (the
// seed picks among all ready tasks): one cache line keeps that one miss.
const _: () = assert!(std::mem::size_of::<TaskSlot>() <= 64);
