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

/// Runs `wait` with the calling thread, if counted, left out of the count
/// until it returns (or unwinds): a thread that only waits for another
/// (libtest's thread joining the thread of a sweep's seed) can wake no task,
/// and a run that deadlocks beside it is reported at once, not after the
/// wait for a real thread's wake.
pub(crate) fn uncounted(wait: &mut dyn FnMut()) {
    if !COUNTED.try_with(Cell::get).unwrap_or(false) {
        return wait();
    }
    struct Recount;
    impl Drop for Recount {
        fn drop(&mut self) {
            COUNTED.with(|c| c.set(true));
            ALIVE.fetch_add(1, Ordering::AcqRel);
        }
    }
    COUNTED.with(|c| c.set(false));
    ALIVE.fetch_sub(1, Ordering::AcqRel);
    let _recount = Recount;
    wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread counted (`true`) or not, as the interposed
    /// `pthread_create` would have made it, whatever the build made it.
    fn on_a_thread(counted: bool, f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(move || {
            let was = COUNTED.with(|c| c.replace(counted));
            if counted && !was {
                ALIVE.fetch_add(1, Ordering::AcqRel);
            }
            f();
            COUNTED.with(|c| c.set(was));
            if counted && !was {
                ALIVE.fetch_sub(1, Ordering::AcqRel);
            }
        })
        .join()
        .unwrap();
    }

    /// A counted thread leaves the count while it waits, and is counted
    /// again when its wait returns or unwinds.
    #[test]
    fn a_waiting_thread_is_out_of_the_count_until_its_wait_ends() {
        on_a_thread(true, || {
            let mut counted_inside = None;
            uncounted(&mut || counted_inside = Some(COUNTED.with(Cell::get)));
            assert_eq!(counted_inside, Some(false));
            assert!(COUNTED.with(Cell::get));
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                uncounted(&mut || panic!("the wait unwinds"))
            }));
            assert!(unwound.is_err());
            assert!(COUNTED.with(Cell::get), "counted again after an unwind");
        });
    }

    /// A thread that was never counted waits as it is.
    #[test]
    fn an_uncounted_thread_waits_as_it_is() {
        on_a_thread(false, || {
            let mut ran = false;
            uncounted(&mut || ran = true);
            assert!(ran && !COUNTED.with(Cell::get));
        });
    }
}
