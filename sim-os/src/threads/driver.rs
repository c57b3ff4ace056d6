//! The OS thread that drives a simulation in the background while the
//! thread that built it blocks (see `background.rs`).
//!
//! The simulation's tasks cannot run on the blocked thread itself: code
//! that wakes a waiter skips waiters of its own thread (std's channels do:
//! a thread never selects itself), so a task sending on a `std` channel the
//! blocked thread receives from would never wake it. A driver thread, one
//! per thread that builds runtimes, runs the drive instead, while that
//! thread waits for it: as with simulated threads, one OS thread touches
//! the simulation at a time, and the turn passes through two flags.

use super::{give, lock, take};
use std::cell::RefCell;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

/// One driver thread.
struct Driver {
    /// Set when the driver may run its job.
    turn: AtomicU32,
    /// Set when the job ran.
    back: AtomicU32,
    job: Mutex<Option<Job>>,
}

/// A call on the waiting thread's stack, its lifetime erased: the waiting
/// thread does not return before the call ran (`run`).
struct Job(*mut (dyn FnMut() + 'static));

// SAFETY: the call runs only while its owner waits for it (the turn).
unsafe impl Send for Job {}

thread_local! {
    /// This thread's driver, started at its first background drive.
    static DRIVER: RefCell<Option<Arc<Driver>>> = const { RefCell::new(None) };
    /// Set while this thread starts a driver: `pthread_create` then makes
    /// a plain real thread (not simulated, not counted among the real
    /// threads a run waits for).
    static STARTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is starting its driver.
pub(crate) fn starting() -> bool {
    STARTING.try_with(std::cell::Cell::get).unwrap_or(false)
}

/// Runs `start`, in which `pthread_create` makes plain real threads: the
/// simulator's own (a driver, the hang watchdog), never simulated, never
/// counted among the real threads a run waits for.
pub(crate) fn plain<R>(start: impl FnOnce() -> R) -> R {
    let previous = STARTING.with(|s| s.replace(true));
    let result = start();
    STARTING.with(|s| s.set(previous));
    result
}

/// Runs `job` on this thread's driver thread and waits until it ran. The
/// job must not unwind (it catches its own panics).
pub(super) fn run(job: &mut dyn FnMut()) {
    let driver = DRIVER.with(|d| d.borrow_mut().get_or_insert_with(start).clone());
    let job: *mut (dyn FnMut() + '_) = job;
    // SAFETY: the lifetime is erased only until the driver hands the turn
    // back, which this function waits for before it returns.
    let job: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(job) };
    *lock(&driver.job) = Some(Job(job));
    give(&driver.turn);
    take(&driver.back);
}

/// Starts a driver thread: it waits for a job, runs it, hands the turn
/// back, until the process ends.
fn start() -> Arc<Driver> {
    let driver = Arc::new(Driver {
        turn: AtomicU32::new(0),
        back: AtomicU32::new(0),
        job: Mutex::new(None),
    });
    let theirs = driver.clone();
    let started = plain(|| {
        std::thread::Builder::new()
            .name("sim-background".to_string())
            .spawn(move || serve(&theirs))
    });
    started.expect("sim: could not start the thread that drives the simulation in the background");
    driver
}

/// The driver's loop; each pass is one job.
fn serve(driver: &Driver) -> ! {
    loop {
        take(&driver.turn);
        let job = lock(&driver.job).take();
        if let Some(Job(call)) = job {
            // SAFETY: its owner waits in `run` until `back` is given.
            unsafe { (*call)() };
        }
        give(&driver.back);
    }
}
