//! Which runtime (simulation) the current thread is in: the thread's
//! registry of cores, and the guards that enter one.
//!
//! Each simulation belongs to the thread that built it and is kept in that
//! thread's registry; handles to it (runtimes, join handles, wakers) carry
//! only its id, so they are plain data and can be sent anywhere. Using one
//! from another thread is an escape from the simulation and is refused.

use super::Core;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU16, Ordering};

thread_local! {
    static CURRENT: Cell<*const Core> = const { Cell::new(std::ptr::null()) };
    static REGISTRY: RefCell<Vec<Rc<Core>>> = const { RefCell::new(Vec::new()) };
    /// On a simulated OS thread (the OS layer's threads): the simulation it belongs
    /// to. It has no runtime context there (tokio's `spawn` panics, as on a
    /// std thread), but its clock, randomness and files are the run's.
    static ADOPTED: Cell<*const Core> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` on the simulation this thread is in: the current runtime, or on
/// a simulated OS thread the simulation that runs it. What the libc
/// interposition (clock, randomness, files) asks.
#[inline]
pub fn with_simulation<R>(f: impl FnOnce(&Core) -> R) -> Option<R> {
    let ptr = CURRENT.try_with(|c| c.get()).ok()?;
    let ptr = if ptr.is_null() {
        ADOPTED.try_with(|c| c.get()).ok()?
    } else {
        ptr
    };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: CURRENT is set by an `Enter` guard and ADOPTED by an
    // `Adopted` guard, each holding an `Rc` to the core while installed.
    Some(f(unsafe { &*ptr }))
}

/// The simulation of this thread's runtimes: the current one, else the
/// newest runtime built on this thread and still alive (outside any
/// `block_on`, a thread that blocks drives it in the background; see
/// `Core::drive_background`).
pub fn thread_core() -> Option<Rc<Core>> {
    if let Some(core) = current_id().and_then(lookup) {
        return Some(core);
    }
    REGISTRY
        .try_with(|r| r.borrow().iter().rev().find(|c| !c.is_shut_down()).cloned())
        .ok()
        .flatten()
}

/// As [`with_simulation`], and outside any `block_on`, the newest runtime
/// built on this thread and still alive: its clock is the thread's clock
/// (a program that reads `Instant::now()` before `block_on` and again after
/// it sees the virtual time the run took, as it sees the real time on
/// tokio).
pub fn with_thread_clock<R>(f: impl FnOnce(&Core) -> R) -> Option<R> {
    let mut f = Some(f);
    if let Some(result) = with_simulation(|core| f.take().expect("called once")(core)) {
        return Some(result);
    }
    let newest = REGISTRY
        .try_with(|r| r.borrow().iter().rev().find(|c| !c.is_shut_down()).cloned())
        .ok()
        .flatten()?;
    Some(f.take().expect("called once")(&newest))
}

/// While alive, this (simulated OS) thread belongs to `core`: the core is
/// in its registry (handles work) and answers [`with_simulation`].
pub struct Adopted {
    core: std::mem::ManuallyDrop<Rc<Core>>,
    /// The thread's releases when made (see `RELEASES`).
    releases: u32,
}

impl Adopted {
    /// This thread belongs to `core` until the guard drops.
    pub fn new(core: Rc<Core>) -> Adopted {
        ADOPTED.with(|c| c.set(Rc::as_ptr(&core)));
        REGISTRY.with(|r| r.borrow_mut().push(core.clone()));
        Adopted {
            core: std::mem::ManuallyDrop::new(core),
            releases: releases(),
        }
    }
}

impl Drop for Adopted {
    fn drop(&mut self) {
        if releases() != self.releases {
            // Released: the count stays (see `release_adopted`).
            return;
        }
        let id = self.core.id();
        let _ = REGISTRY.try_with(|r| r.borrow_mut().retain(|c| c.id() != id));
        let _ = ADOPTED.try_with(|c| c.set(std::ptr::null()));
        // SAFETY: dropped once, here; the field is not used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.core) };
    }
}

thread_local! {
    /// This simulated OS thread was released from its simulation.
    /// How many times this thread was released (a guard made before a
    /// release leaves what it holds; one made after works as usual).
    static RELEASES: Cell<u32> = const { Cell::new(0) };
}

/// A simulated OS thread whose simulation ended while it ran goes on as a
/// real thread: it leaves the simulation here. The counts it holds on the
/// core are leaked, never dropped: the core's counts are not atomic, and
/// the thread now runs beside the simulator's thread.
pub fn release_adopted() {
    let _ = RELEASES.try_with(|r| r.set(r.get() + 1));
    let _ = ADOPTED.try_with(|c| c.set(std::ptr::null()));
    let _ = CURRENT.try_with(|c| c.set(std::ptr::null()));
    let held = REGISTRY
        .try_with(|r| std::mem::take(&mut *r.borrow_mut()))
        .unwrap_or_default();
    std::mem::forget(held);
}

/// How many times this thread was released from a simulation.
fn releases() -> u32 {
    RELEASES.try_with(Cell::get).unwrap_or(u32::MAX)
}

/// Whether this thread was released from its simulation.
pub fn is_released() -> bool {
    releases() > 0
}

thread_local! {
    /// How deep this thread is in blocking sections (`block_in_place`, a
    /// `spawn_blocking` closure) not yet inside a `block_on` of their own.
    static BLOCKING: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f` as a blocking section: `block_in_place`'s closure, or a
/// `spawn_blocking` closure. The thread is not driving tasks there, so it
/// may block on a runtime (`Handle::block_on`, a new runtime), as in tokio.
pub fn blocking_section<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = BLOCKING.try_with(|b| b.set(b.get().saturating_sub(1)));
        }
    }
    BLOCKING.with(|b| b.set(b.get() + 1));
    let _leave = Leave;
    f()
}

/// Whether this thread is in a blocking section (see [`blocking_section`]).
pub fn in_blocking_section() -> bool {
    BLOCKING.try_with(Cell::get).unwrap_or(0) > 0
}

thread_local! {
    /// This thread runs a `spawn_blocking` closure (tokio's blocking pool).
    static BLOCKING_POOL: Cell<bool> = const { Cell::new(false) };
    /// Futures of the simulation that returned `Pending` to this thread
    /// outside any runtime (see [`pending_outside_runtime`]).
    static PENDING_OUTSIDE: Cell<u32> = const { Cell::new(0) };
    /// This thread owes a scheduling point (see [`yield_if_due`]).
    static YIELD_DUE: Cell<bool> = const { Cell::new(false) };
    /// For a simulated thread: how many more of the simulation's locks it
    /// takes before it yields (see [`yield_between_locks`]); 0 for any
    /// other thread.
    static SPIN_LOCKS_LEFT: Cell<u32> = const { Cell::new(0) };
}

/// How many of the simulation's locks a simulated thread takes between
/// yields, outside any runtime. A loop that polls by hand may spin on a
/// future of its own (a mock's readiness, say) that never returns
/// `Pending` from the simulation, only checking the simulation's state on
/// the way (a oneshot's `is_closed`, as tower's buffer worker does): it
/// yields here, as a real OS would preempt it.
const SPIN_LOCKS: u32 = 64;

/// The calling thread is a simulated OS thread: from now on it yields
/// every [`SPIN_LOCKS`]th lock of the simulation it takes outside any
/// runtime (see [`yield_if_due`]).
pub fn yield_between_locks() {
    SPIN_LOCKS_LEFT.with(|left| left.set(SPIN_LOCKS));
}

/// A future polled by hand on a simulated OS thread outside any runtime
/// (a thread that loops over `poll` until ready, as tower's buffer tests
/// do) is not ready. Such a loop never blocks, so it never gives the turn
/// back, where a real OS would preempt it: every `SPIN_PENDING_POLLS`th
/// `Pending` here makes the thread owe a scheduling point, taken at the
/// next [`yield_if_due`] (not here: the primitive may hold its lock).
pub fn pending_outside_runtime() {
    /// How many not-ready polls a thread makes between yields.
    const SPIN_PENDING_POLLS: u32 = 16;
    if with_current(|_| ()).is_some() || with_simulation(|_| ()).is_none() {
        return;
    }
    let count = PENDING_OUTSIDE.with(|p| {
        let next = p.get().wrapping_add(1);
        p.set(next);
        next
    });
    if count % SPIN_PENDING_POLLS == 0 {
        YIELD_DUE.with(|y| y.set(true));
    }
}

/// Takes the scheduling point [`pending_outside_runtime`] made due, if
/// any, or the one every [`SPIN_LOCKS`]th lock of a simulated thread
/// makes. Called where the thread holds none of the simulation's locks (a
/// primitive about to take its own).
#[inline]
pub fn yield_if_due() {
    if YIELD_DUE.try_with(|y| y.replace(false)).unwrap_or(false) {
        yield_thread();
        return;
    }
    // Zero but on a simulated thread: one load on the hot path.
    if SPIN_LOCKS_LEFT.try_with(Cell::get).unwrap_or(0) != 0 {
        count_spin_lock();
    }
}

/// A lock of a simulated thread: every `SPIN_LOCKS`th yields, when the
/// thread is outside any runtime (and its simulation goes on).
#[cold]
fn count_spin_lock() {
    let left = SPIN_LOCKS_LEFT.with(|left| {
        let next = left.get() - 1;
        left.set(if next == 0 { SPIN_LOCKS } else { next });
        next
    });
    if left == 0 && with_current(|_| ()).is_none() && with_simulation(|_| ()).is_some() {
        yield_thread();
    }
}

fn yield_thread() {
    // Interposed in simulation builds: the thread's scheduling point.
    // SAFETY: a plain libc call.
    unsafe { libc::sched_yield() };
}

/// The calling thread runs `spawn_blocking` closures from now on (a thread
/// of the blocking pool, which exists for its closure).
pub fn join_blocking_pool() {
    BLOCKING_POOL.with(|b| b.set(true));
}

/// Whether the calling thread runs a `spawn_blocking` closure: while the
/// clock is paused, tokio does not move it for such a thread's sleep.
pub fn on_blocking_pool() -> bool {
    BLOCKING_POOL.try_with(Cell::get).unwrap_or(false)
}

/// Until the guard drops, this thread drives tasks again (a `block_on`
/// inside a blocking section): the section's permission does not reach
/// into the tasks it runs.
pub struct Driving(u32);

// A guard with an effect on the thread: not a value to default to.
#[allow(clippy::new_without_default)]
impl Driving {
    /// The thread drives tasks until the guard drops.
    pub fn new() -> Driving {
        Driving(BLOCKING.with(|b| b.replace(0)))
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        let _ = BLOCKING.try_with(|b| b.set(self.0));
    }
}

static NEXT_CORE_ID: AtomicU16 = AtomicU16::new(1);

/// A fresh runtime id. Ids wrap after 65535 runtimes in one process; a stale
/// waker that meets a reused id is caught by the task generation check.
pub(crate) fn next_core_id() -> u16 {
    loop {
        let id = NEXT_CORE_ID.fetch_add(1, Ordering::Relaxed);
        if id != 0 {
            return id;
        }
    }
}

/// What a thread that owns a simulation runs before it drives one outside
/// a `block_on` (the facade closes the runtimes other threads dropped).
static BEFORE_DRIVE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Installs [`before_drive`]'s call (once per process; later calls are
/// ignored).
pub fn set_before_drive(hook: fn()) {
    let _ = BEFORE_DRIVE.set(hook);
}

/// Called by the OS layer before the thread that owns a simulation drives
/// it while it waits outside `block_on`.
pub fn before_drive() {
    if let Some(hook) = BEFORE_DRIVE.get() {
        hook();
    }
}

/// Runs `f` on the runtime the current thread is inside, if any.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&Core) -> R) -> Option<R> {
    let ptr = CURRENT.try_with(|c| c.get()).ok()?;
    if ptr.is_null() {
        return None;
    }
    // SAFETY: CURRENT is only set by an `Enter` guard, which holds an `Rc`
    // to the core for as long as the pointer is installed.
    Some(f(unsafe { &*ptr }))
}

/// The id of the runtime the current thread is inside.
#[inline]
pub fn current_id() -> Option<u16> {
    with_current(|core| core.id())
}

/// Adds a runtime to this thread's registry.
pub(crate) fn register(core: Rc<Core>) {
    REGISTRY.with(|r| r.borrow_mut().push(core));
}

/// Removes a runtime from this thread's registry and returns it.
pub(crate) fn unregister(id: u16) -> Option<Rc<Core>> {
    REGISTRY
        .try_with(|r| {
            let mut r = r.borrow_mut();
            let index = r.iter().position(|c| c.id() == id)?;
            Some(r.swap_remove(index))
        })
        .ok()
        .flatten()
}

/// The runtimes alive on this thread, newest last (for failure reports
/// after a `block_on` returned).
pub fn alive() -> Vec<Rc<Core>> {
    REGISTRY
        .try_with(|r| r.borrow().clone())
        .unwrap_or_default()
}

/// Finds a runtime of this thread by id.
#[inline]
pub fn lookup(id: u16) -> Option<Rc<Core>> {
    REGISTRY
        .try_with(|r| r.borrow().iter().find(|c| c.id() == id).cloned())
        .ok()
        .flatten()
}

/// Runs `f` on the runtime `id` of this thread: the current one without a
/// registry search, any other by lookup.
#[inline]
pub fn with_core<R>(id: u16, f: impl FnOnce(&Core) -> R) -> Option<R> {
    let ptr = CURRENT.try_with(|c| c.get()).ok()?;
    if !ptr.is_null() {
        // SAFETY: as in `with_current`.
        let core = unsafe { &*ptr };
        if core.id() == id {
            return Some(f(core));
        }
    }
    lookup(id).map(|core| f(&core))
}

/// While alive, the current thread is inside `core`.
pub struct Enter {
    previous: *const Core,
    core: std::mem::ManuallyDrop<Rc<Core>>,
    /// The thread's releases when made (see `RELEASES`).
    releases: u32,
}

impl Enter {
    /// Makes `core` the current runtime until the guard drops.
    pub fn new(core: Rc<Core>) -> Enter {
        let previous = CURRENT.with(|c| c.replace(Rc::as_ptr(&core)));
        Enter {
            previous,
            core: std::mem::ManuallyDrop::new(core),
            releases: releases(),
        }
    }
}

impl Drop for Enter {
    fn drop(&mut self) {
        if releases() != self.releases {
            // Released from its simulation: it stays out of it, and its
            // count stays (see `release_adopted`).
            return;
        }
        let _ = CURRENT.try_with(|c| c.set(self.previous));
        // SAFETY: dropped once, here; the field is not used again.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.core) };
    }
}

thread_local! {
    /// Harness simulations being built on this thread (made, not yet run):
    /// a future given to one was made outside any run.
    static SIMS_BUILDING: Cell<u32> = const { Cell::new(0) };
}

/// Held by a harness simulation from its making to the end of its run (see
/// [`no_runtime`]).
pub struct BuildingSim(());

impl BuildingSim {
    /// A simulation is being built on this thread.
    pub fn start() -> BuildingSim {
        SIMS_BUILDING.with(|n| n.set(n.get() + 1));
        BuildingSim(())
    }
}

impl Drop for BuildingSim {
    fn drop(&mut self) {
        SIMS_BUILDING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// Panics with tokio's message for a call that needs a runtime and has
/// none; while a harness simulation is being built on the thread, it says
/// why (a future made before the run) and how to fix it.
#[track_caller]
pub fn no_runtime() -> ! {
    const TOKIO: &str =
        "there is no reactor running, must be called from the context of a Tokio 1.x runtime";
    if SIMS_BUILDING.with(Cell::get) > 0 {
        panic!(
            "{TOKIO}\nsim: this call came while the test builds its Sim, before the run. A \
             future given to `sim.client` or `sim.host` that makes a timer or a socket as it \
             is constructed (`tokio::time::sleep(d)`, `TcpStream::connect(..)` called there) \
             has no simulation to bind to yet. Make it inside the run with an async block: \
             `sim.client(\"name\", async move {{ tokio::time::sleep(d).await }})`."
        );
    }
    panic!("{TOKIO}")
}
