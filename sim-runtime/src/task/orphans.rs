//! Outputs that outlive their runtime: a task that finished before its
//! runtime shut down, whose join handle is still held, keeps its output
//! for that handle (a `spawn_blocking` closure that a shutdown waited for
//! is joined after it, as on tokio). The outputs stay on the thread that
//! ran the runtime, until the handle takes or drops them.

use super::{RawTask, TaskCell};
use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    /// Finished tasks' cells by runtime and task id.
    static ORPHANS: RefCell<BTreeMap<(u16, u64), Box<dyn TaskCell>>> =
        const { RefCell::new(BTreeMap::new()) };
}

/// Keeps the cell of task `id` of runtime `core`, which shuts down.
pub(crate) fn keep(core: u16, id: u64, cell: Box<dyn TaskCell>) {
    let _ = ORPHANS.try_with(|o| o.borrow_mut().insert((core, id), cell));
}

/// Moves the output of `raw`, if its runtime kept it, into `dst`; true when
/// it did.
///
/// # Safety
/// As `TaskCell::take_output`: `dst` points to the `Output` of the task's
/// future type.
pub unsafe fn take_output(raw: RawTask, dst: *mut ()) -> bool {
    let cell = ORPHANS
        .try_with(|o| o.borrow_mut().remove(&(raw.core, raw.id)))
        .ok()
        .flatten();
    match cell {
        Some(mut cell) => {
            // SAFETY: the caller's contract.
            unsafe { cell.take_output(dst) };
            true
        }
        None => false,
    }
}

/// The handle of `raw` is dropped: its kept output, if any, with it.
pub fn forget(raw: RawTask) {
    let cell = ORPHANS
        .try_with(|o| o.borrow_mut().remove(&(raw.core, raw.id)))
        .ok()
        .flatten();
    // The output may run user code when dropped; a panic there stays here.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(cell)));
}
