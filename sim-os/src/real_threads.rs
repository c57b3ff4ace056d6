//! Real threads: those started while no run is active (a test's helper
//! thread spawned before its runtime), or with `SIM_ALLOW_THREADS=1`. They
//! run outside the simulation, but may still wake one of its tasks (a
//! `blocking_send` into a channel a run receives from). A run that runs out
//! of work while such a thread is alive waits a moment for its wake before
//! calling it a deadlock (`seams::OsLayer::other_real_threads`).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Real threads started through `pthread_create` and still running.
static ALIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread is one of them.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// A real thread is being started (by its parent, so that the count is
/// right before the parent goes on).
#[cfg(simulation)]
pub(crate) fn starting() {
    ALIVE.fetch_add(1, Ordering::AcqRel);
}

/// Its start failed.
#[cfg(simulation)]
pub(crate) fn not_started() {
    ALIVE.fetch_sub(1, Ordering::AcqRel);
}

/// What a counted thread runs: its start routine, and the count given back
/// when it returns (or unwinds).
#[cfg(simulation)]
pub(crate) struct Start {
    pub(crate) start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    pub(crate) arg: *mut libc::c_void,
}

/// The start routine of a counted real thread.
#[cfg(simulation)]
pub(crate) extern "C" fn trampoline(start: *mut libc::c_void) -> *mut libc::c_void {
    struct Gone;
    impl Drop for Gone {
        fn drop(&mut self) {
            ALIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }
    // SAFETY: `pthread_create` passed the `Box<Start>` it leaked for this
    // thread, which only this thread takes back.
    let start = unsafe { Box::from_raw(start.cast::<Start>()) };
    COUNTED.with(|c| c.set(true));
    let _gone = Gone;
    (start.start)(start.arg)
}

/// Counted real threads alive besides the calling one.
pub(crate) fn others() -> usize {
    let alive = ALIVE.load(Ordering::Acquire);
    let me = COUNTED.try_with(Cell::get).unwrap_or(false);
    alive.saturating_sub(usize::from(me))
}
