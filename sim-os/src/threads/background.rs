//! The thread that owns a runtime, blocked outside `block_on` (in a futex
//! wait, a join, a sleep): the simulation runs in the background meanwhile
//! (`Core::drive_background`), as a `multi_thread` runtime's workers and
//! the process's other threads run on tokio while its main thread waits.

use super::{core_has_threads, kernel_pause, lock, me};
use sim_runtime::Core;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

/// Background waits by key (a futex address, a thread), with the wakers of
/// their root futures: a wake of the key ends the wait.
static WAITERS: Mutex<BTreeMap<usize, Vec<Waiter>>> = Mutex::new(BTreeMap::new());

/// One background wait: its root future's waker, and the flag its wake
/// sets.
type Waiter = (Waker, Arc<AtomicBool>);

/// Background waits in progress: while zero, futex calls take the fast path.
static WAITING: AtomicUsize = AtomicUsize::new(0);

/// How many real pauses (each `IDLE_WAIT_NS`) one wait makes while
/// nothing in the simulation can move and a real thread might still end
/// it: 1,000 s of real time.
const REAL_PAUSES_MAX: u32 = 100_000;

/// Whether some background wait is in progress.
pub(crate) fn waiting() -> bool {
    WAITING.load(Ordering::Relaxed) > 0
}

/// The simulation the calling thread drives in the background while it
/// blocks: the newest live runtime built on it, when no `block_on` of it is
/// on the stack and it has work that runs without one (a `multi_thread`
/// runtime, simulated threads). `None` for a simulated thread.
pub(crate) fn core() -> Option<Rc<Core>> {
    if me().is_some() {
        return None;
    }
    // A runtime of this thread that another dropped closes first.
    sim_runtime::context::before_drive();
    let core = sim_runtime::context::thread_core()?;
    if core.in_block_on() || core.is_shut_down() {
        return None;
    }
    (core.runs_in_background() || core_has_threads(core.id())).then_some(core)
}

/// Wakes the background waits on `key`; how many there were.
pub(crate) fn wake(key: usize) -> usize {
    if !waiting() {
        return 0;
    }
    let woken = lock(&WAITERS).remove(&key).unwrap_or_default();
    for (waker, flag) in &woken {
        flag.store(true, Ordering::SeqCst);
        waker.wake_by_ref();
    }
    woken.len()
}

/// Counts a wait in progress while alive.
struct Waiting;

impl Waiting {
    fn new() -> Waiting {
        WAITING.fetch_add(1, Ordering::Relaxed);
        Waiting
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        WAITING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Blocks until `done` or a wake of `key`, driving `core` in the background
/// meanwhile. When nothing in the simulation can move, a real thread may
/// still end the wait: it pauses in the kernel (on `word`, if given) and
/// drives again.
///
/// # Errors
/// A deadlock report, when nothing in the simulation can move and no real
/// thread is left; the run's failure, when one is raised meanwhile.
pub(crate) fn wait(
    core: &Rc<Core>,
    key: usize,
    done: &dyn Fn() -> bool,
    word: Option<(&AtomicU32, u32)>,
    what: &str,
) -> Result<(), String> {
    let woken = Arc::new(AtomicBool::new(false));
    let root = std::pin::pin!(std::future::poll_fn(|cx| {
        if done() || woken.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        let mut waiters = lock(&WAITERS);
        let list = waiters.entry(key).or_default();
        if !list.iter().any(|(w, _)| w.will_wake(cx.waker())) {
            list.push((cx.waker().clone(), woken.clone()));
        }
        Poll::Pending
    }));
    let result = drive(core, root, word, what);
    if result.is_err() {
        forget(key);
    }
    result
}

/// Blocks until `future` completes, driving `core` in the background
/// meanwhile (a tokio blocking call, as `blocking_recv`, of the thread that
/// built the runtime).
///
/// # Errors
/// As [`wait`].
pub(crate) fn block_on(
    core: &Rc<Core>,
    future: Pin<&mut dyn Future<Output = ()>>,
    what: &str,
) -> Result<(), String> {
    drive(core, future, None, what)
}

/// A yield of the thread that built the runtime (`sched_yield`, as a loop
/// that spins on a flag a task sets does): the simulation runs meanwhile,
/// until no task is ready or for a time slice of `YIELD_SLICE_STEPS` turns
/// of its loop, as the runtime's workers run while the thread spins.
pub(crate) fn yield_now(core: &Rc<Core>) -> Result<(), String> {
    let mut first_step = None;
    let root = std::pin::pin!(std::future::poll_fn(|cx| {
        let steps = core.steps();
        let first = *first_step.get_or_insert(steps);
        let ran = steps - first;
        if ran > 0 && (core.ready_count() == 0 || ran >= YIELD_SLICE_STEPS) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }));
    drive(core, root, None, "a yield")
}

/// The most turns of the simulation's loop one yield of the thread that
/// built the runtime lets run (a time slice: a task that keeps respawning
/// itself must not keep the yielding thread from its next turn).
const YIELD_SLICE_STEPS: u64 = 64;

/// Drives `core` in the background, on the driver thread, until `root`
/// completes; while nothing in the simulation can move, pauses in the
/// kernel (on `word`) for a real thread to complete it.
fn drive(
    core: &Rc<Core>,
    mut root: Pin<&mut dyn Future<Output = ()>>,
    word: Option<(&AtomicU32, u32)>,
    what: &str,
) -> Result<(), String> {
    let _waiting = Waiting::new();
    for _ in 0..REAL_PAUSES_MAX {
        if closed_meanwhile(core) {
            return Ok(());
        }
        let mut driven = None;
        super::driver::run(&mut || {
            // The driver thread belongs to the simulation while it drives.
            let _adopted = sim_runtime::context::Adopted::new(core.clone());
            driven = Some(std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                || core.drive_background(root.as_mut()),
            )));
        });
        match driven.expect("the driver ran the drive") {
            Ok(Poll::Ready(())) => return Ok(()),
            Err(payload) => return Err(panic_text(&payload)),
            Ok(Poll::Pending) => {}
        }
        if closed_meanwhile(core) {
            return Ok(());
        }
        if crate::real_threads::others() == 0 {
            return Err(format!(
                "sim: deadlock: the thread that built the runtime waits on {what} outside \
                 block_on, and nothing in the simulation can release it: no task or thread \
                 can run and no timer or message is pending"
            ));
        }
        kernel_pause(word);
    }
    Err(format!(
        "sim: hang: the thread that built the runtime waited on {what} outside block_on for \
         1,000 s of real time, for a real thread that never released it"
    ))
}

/// Closes the runtimes of this thread another thread dropped (a
/// simulated thread the drive just ran, say): whether `core` went with
/// them. Then the wait ends: its waits end with the shutdown error, and the
/// caller looks again (a futex wait may end early).
fn closed_meanwhile(core: &Rc<Core>) -> bool {
    sim_runtime::context::before_drive();
    core.is_shut_down()
}

/// Drops the wakers left for `key` by a wait that gave up.
fn forget(key: usize) {
    lock(&WAITERS).remove(&key);
}

/// A panic's message.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "sim: the simulation failed in the background".to_string())
}
