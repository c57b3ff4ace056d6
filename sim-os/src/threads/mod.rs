//! Deterministic OS threads (simulation builds): during a run,
//! `std::thread::spawn` (`pthread_create`) starts a real OS thread that
//! runs only when the simulator hands it the turn.
//!
//! - Exactly one OS thread runs at a time: the simulator's, or one
//!   simulated thread. The turn passes through two flags per thread
//!   (`turn`, `back`) on raw futexes, never through the interposed ones.
//! - Each simulated thread is a task of the run (`ThreadTask`, kind
//!   `thread`): polling it gives the thread the turn until its next
//!   scheduling point, so the seed orders threads and tasks alike, through
//!   the same policy, and the trace shows every turn as a poll.
//! - Scheduling points are where std blocks or wakes: futex waits and wakes
//!   (`Mutex`, `Condvar`, `RwLock`, `Once`, `park`, `mpsc`, `Barrier` all
//!   go through `syscall(SYS_futex)` on Linux), `sleep` (virtual time),
//!   `sched_yield` and `pthread_join`.
//! - When the simulator's own thread blocks (a task locks a `std` mutex a
//!   thread holds, or joins a thread), it runs the runnable threads, picked
//!   by the seed, until it can go on; when none can run, the run fails with
//!   a deadlock report instead of hanging.
//! - A thread has no tokio runtime context (as a std thread), but its
//!   clock, randomness and files are the run's (`context::with_simulation`),
//!   and runtime handles work on it.
//!
//! `SIM_ALLOW_THREADS=1` starts real, parallel threads instead.

pub(crate) mod ambient;
mod background;
mod block_on;
mod calls;
mod driver;

use block_on::Request;
pub(crate) use block_on::{block_on, current_token, run_on_thread};
pub(crate) use driver::{plain as plain_thread, starting as starting_driver};

/// `OsLayer::block_in_background`: `None` when the calling thread drives no
/// simulation in the background.
pub(crate) fn block_in_background(
    future: Pin<&mut dyn Future<Output = ()>>,
) -> Option<Result<(), String>> {
    let core = background::core()?;
    Some(background::block_on(&core, future, "a tokio blocking call"))
}

/// `sched_yield` of the thread that built a runtime, outside its
/// `block_on`: the simulation takes a turn. False for any other thread.
pub(crate) fn yield_in_background() -> bool {
    let Some(core) = background::core() else {
        return false;
    };
    if let Err(report) = background::yield_now(&core) {
        calls::fatal(&report);
    }
    true
}
pub(crate) use calls::{
    background_sleep, detach, futex, idle_sleep, join, simulator_sleep, sleep_until, yield_now,
};

use sim_runtime::Core;
use sim_runtime::TaskMeta;
use sim_runtime::WaitDetail;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Simulated threads alive in the process: 0 keeps every futex call on its
/// fast path to the kernel.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// How many turns the simulator's thread hands out while it waits itself,
/// before the wait is a livelock (threads that keep waking each other).
const NESTED_TURNS_MAX: u64 = 10_000_000;

thread_local! {
    /// The simulated thread this OS thread is, if it is one.
    static ME: std::cell::RefCell<Option<Arc<SimThread>>> = const { std::cell::RefCell::new(None) };
}

/// One simulated OS thread.
pub(crate) struct SimThread {
    /// Creation order within the process: picks are sorted by it, and the
    /// caller's handle is made of it.
    number: u64,
    /// Creation order within its simulation, from 0: its name in traces and
    /// reports (a process-wide count would name the threads of a seed
    /// differently in a fresh process, and its replay would differ).
    ordinal: u64,
    /// Set when the thread may run; it waits on it.
    turn: AtomicU32,
    /// Set when the thread hands the turn back; the giver waits on it.
    back: AtomicU32,
    /// Its simulation ended while it ran: it goes on as a real thread
    /// (`release`).
    free: AtomicBool,
    inner: Mutex<Inner>,
    /// A poll the simulator's thread hands over (`run_on_thread`).
    request: Mutex<Option<Request>>,
}

struct Inner {
    /// The core it belongs to (by id: cores are per OS thread).
    core_id: u16,
    /// Its task's waker, to make it runnable.
    waker: Option<Waker>,
    /// Woken since it last ran.
    notified: bool,
    exited: bool,
    /// The real thread was joined (its thread-locals are destroyed).
    reaped: bool,
    retval: usize,
    os: libc::pthread_t,
    /// What it waits on, for reports.
    waits: &'static str,
    timed_out: bool,
    /// Threads and the simulator waiting for it to end.
    joiners: Vec<Arc<SimThread>>,
    /// Its name (`thread::Builder::name`, as std sets it), for reports.
    name: Option<String>,
    /// Its task's id, for the trace of turns the simulator's thread hands
    /// out itself.
    task: u64,
    /// Its handle was joined or detached: once reaped too, it leaves
    /// `THREADS`.
    released: bool,
    /// It waits in its `block_on` between polls of its future, so it may
    /// poll the tasks of the runtime it blocks on.
    idle: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The simulated threads of the process, by the handle `pthread_create`
/// gave out, until reaped and joined or detached.
static THREADS: Mutex<BTreeMap<u64, Arc<SimThread>>> = Mutex::new(BTreeMap::new());

/// Futex waiters by address, in arrival order.
static WAITERS: Mutex<BTreeMap<usize, VecDeque<Arc<SimThread>>>> = Mutex::new(BTreeMap::new());

static NUMBER: AtomicUsize = AtomicUsize::new(0);

/// The count of threads a simulation started (a per-run extension of the
/// core).
struct Ordinals(std::cell::Cell<u64>);

fn next_ordinal(core: &Core) -> u64 {
    let ordinals = core.extension(|| Ordinals(std::cell::Cell::new(0)));
    let n = ordinals.0.get();
    ordinals.0.set(n + 1);
    n
}

// ----- raw futexes (the turn), past the interposed `syscall` -------------------

/// How long the simulator's thread waits in the kernel when no simulated
/// thread can run (something outside the run may release it).
const IDLE_WAIT_NS: i64 = 10_000_000;

/// A short real wait: on the lock word (a release from a thread outside
/// the run wakes it), or a plain pause.
fn kernel_pause(word: Option<(&AtomicU32, u32)>) {
    let pause = libc::timespec {
        tv_sec: 0,
        tv_nsec: IDLE_WAIT_NS,
    };
    let spare = AtomicU32::new(0);
    let (word, val) = word.unwrap_or((&spare, 0));
    raw_futex(word, libc::FUTEX_WAIT, val, &pause);
}

/// A private futex call on `word`, straight to the kernel; `timeout` bounds
/// a wait (null: none).
fn raw_futex(word: &AtomicU32, op: i32, val: u32, timeout: *const libc::timespec) -> i64 {
    // SAFETY: a futex call on a live word; a wait's spurious returns are
    // re-checked by every caller.
    unsafe {
        crate::raw::real_syscall(
            libc::SYS_futex,
            word.as_ptr() as libc::c_long,
            (op | libc::FUTEX_PRIVATE_FLAG) as libc::c_long,
            val as libc::c_long,
            timeout as libc::c_long,
            0,
            0,
        ) as i64
    }
}

fn raw_wait(word: &AtomicU32, expected: u32) {
    raw_futex(word, libc::FUTEX_WAIT, expected, std::ptr::null());
}

fn raw_wake(word: &AtomicU32, n: i32) -> i64 {
    raw_futex(word, libc::FUTEX_WAKE, n as u32, std::ptr::null())
}

fn give(flag: &AtomicU32) {
    flag.store(1, Ordering::SeqCst);
    raw_wake(flag, 1);
}

fn take(flag: &AtomicU32) {
    // Bounded by the giver: each wait ends when the flag is set.
    while flag.swap(0, Ordering::SeqCst) == 0 {
        raw_wait(flag, 0);
    }
}

/// The core's "current" state a turn must not carry over to the other
/// side: the runtime scope and the host of the running code.
fn save_current() -> Option<(u16, u32)> {
    sim_runtime::context::with_simulation(|core| (core.current_scope(), core.current_node()))
}

fn restore_current(saved: Option<(u16, u32)>) {
    if let Some((scope, node)) = saved {
        sim_runtime::context::with_simulation(|core| {
            core.set_scope(scope);
            core.set_node(node);
        });
    }
}

impl SimThread {
    /// The simulator's side: runs the thread until it hands the turn back.
    fn run(&self) {
        let saved = save_current();
        give(&self.turn);
        take(&self.back);
        restore_current(saved);
    }

    /// The thread's side: hands the turn back and waits for the next. A
    /// thread released meanwhile returns at once, as a real thread.
    fn pause(&self) {
        if self.free.load(Ordering::SeqCst) {
            return;
        }
        let saved = save_current();
        give(&self.back);
        take(&self.turn);
        if self.free.load(Ordering::SeqCst) {
            leave_simulation();
            return;
        }
        restore_current(saved);
    }

    /// The simulator's side, when the thread's task is dropped before the
    /// thread ended (its simulation ended: the runtime was dropped): the
    /// thread goes on as a real thread, as it would on tokio.
    fn release(&self) {
        if lock(&self.inner).exited || self.free.swap(true, Ordering::SeqCst) {
            return;
        }
        give(&self.turn);
    }

    /// Makes the thread runnable: its task is woken.
    fn notify(&self) {
        let waker = {
            let mut inner = lock(&self.inner);
            inner.notified = true;
            inner.waker.clone()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The calling simulated thread leaves its simulation for good, while it
/// holds the turn (it starts a simulation of its own, see `ambient.rs`):
/// the simulator takes it as ended and joins the real thread when it
/// ends; from now on its calls are real ones.
pub(crate) fn release_self() {
    let Some(thread) = me() else {
        return;
    };
    {
        let mut inner = lock(&thread.inner);
        inner.exited = true;
        inner.waits = "";
    }
    thread.free.store(true, Ordering::SeqCst);
    leave_simulation();
    give(&thread.back);
}

/// The calling (released) thread leaves its simulation: from now on its
/// calls are real ones.
fn leave_simulation() {
    let _ = ME.try_with(|m| m.borrow_mut().take());
    sim_runtime::context::release_adopted();
}

fn me() -> Option<Arc<SimThread>> {
    ME.try_with(|m| m.borrow().clone()).ok().flatten()
}

/// Whether simulated threads are in play for this call: some are alive, and
/// the calling thread is one or runs a simulation.
fn active() -> bool {
    LIVE.load(Ordering::Relaxed) > 0 || background::waiting()
}

// ----- creation ------------------------------------------------------------------

struct Boot {
    start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
    thread: Arc<SimThread>,
    core: *const Core,
}

extern "C" fn trampoline(boot: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `spawn` passed a leaked `Boot`.
    let boot = unsafe { Box::from_raw(boot.cast::<Boot>()) };
    let thread = boot.thread.clone();
    ME.with(|m| *m.borrow_mut() = Some(thread.clone()));
    take(&thread.turn);
    if thread.free.load(Ordering::SeqCst) {
        // Released before its first turn: a real thread from the start (the
        // core's count stays leaked; see `release_adopted`).
        leave_simulation();
        return (boot.start)(boot.arg);
    }
    // SAFETY: `spawn` leaked one strong count for this thread; the core is
    // only touched while this thread holds the turn.
    let core = unsafe { Rc::from_raw(boot.core) };
    let retval = {
        let _adopted = sim_runtime::context::Adopted::new(core.clone());
        // A loop of the thread that only checks the simulation's state
        // gives the turn back now and then, as a real OS preempts it.
        sim_runtime::context::yield_between_locks();
        // A thread is no runtime's worker: it may block on a runtime, as a
        // std thread may.
        sim_runtime::context::blocking_section(|| (boot.start)(boot.arg))
    };
    if sim_runtime::context::is_released() {
        // Released while it ran: it ends as a real thread.
        std::mem::forget(core);
        return retval;
    }
    drop(core);
    {
        let mut inner = lock(&thread.inner);
        inner.exited = true;
        inner.retval = retval as usize;
        inner.waits = "";
    }
    ME.with(|m| *m.borrow_mut() = None);
    // Handed back for good: the simulator joins the real thread (waiting
    // for its thread-local destructors) before it goes on.
    give(&thread.back);
    retval
}

/// `pthread_create` during a run: a simulated thread, as a task of the run.
///
/// # Safety
/// As libc's `pthread_create`.
pub(crate) unsafe fn spawn(
    core: &Core,
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
) -> libc::c_int {
    let Some(rc) = sim_runtime::context::lookup(core.id()) else {
        return libc::EAGAIN;
    };
    let sim = Arc::new(SimThread {
        number: NUMBER.fetch_add(1, Ordering::Relaxed) as u64,
        ordinal: next_ordinal(core),
        turn: AtomicU32::new(0),
        back: AtomicU32::new(0),
        free: AtomicBool::new(false),
        inner: Mutex::new(Inner {
            core_id: core.id(),
            waker: None,
            notified: true,
            exited: false,
            reaped: false,
            retval: 0,
            // SAFETY: a plain integer type on Linux.
            os: unsafe { std::mem::zeroed() },
            waits: "",
            timed_out: false,
            joiners: Vec::new(),
            name: None,
            task: 0,
            released: false,
            idle: false,
        }),
        request: Mutex::new(None),
    });
    let boot = Box::into_raw(Box::new(Boot {
        start,
        arg,
        thread: sim.clone(),
        core: Rc::into_raw(rc),
    }));
    let Some(real) = crate::symbols::real_pthread_create() else {
        return libc::EAGAIN;
    };
    let rc = real(thread, attr, trampoline, boot.cast());
    if rc != 0 {
        // SAFETY: the thread was not made: the boot and its count are ours.
        let boot = Box::from_raw(boot);
        drop(Rc::from_raw(boot.core));
        return rc;
    }
    // The caller gets a handle of its own (odd, so never a real thread's
    // address): the real one is joined when the thread ends, and glibc
    // reuses it for the next thread while the caller may still join this.
    lock(&sim.inner).os = *thread;
    let handle = (sim.number << 1) | 1;
    *thread = handle as libc::pthread_t;
    lock(&THREADS).insert(handle, sim.clone());
    LIVE.fetch_add(1, Ordering::Relaxed);
    let meta = TaskMeta {
        name: Some(format!("thread {}", sim.ordinal).into_boxed_str()),
        location: std::panic::Location::caller(),
        kind: "thread",
    };
    let raw = core.spawn(
        ThreadTask {
            thread: sim.clone(),
        },
        meta,
        0,
    );
    lock(&sim.inner).task = raw.id;
    // Where the code spawned it, for reports (resolved only for one).
    sim_runtime::watch::thread_spawned(raw.id, std::backtrace::Backtrace::force_capture());
    0
}

/// Whether the calling OS thread is a simulated thread.
pub(crate) fn on_sim_thread() -> bool {
    me().is_some()
}

/// A simulated thread about to block on a real pipe or socket (`call` on
/// `fd`, in blocking mode): the kernel, not the simulation, would decide
/// when it returns, and the whole run would stop with it. Refused: `Some`
/// with the errno, after failing the run with a message that names the
/// call. `None` lets the call go on (not a thread, or no such descriptor).
pub(crate) fn refuse_real_block(fd: i32, call: &str) -> Option<i32> {
    let thread = me()?;
    // SAFETY: plain queries of a descriptor.
    let (flags, kind) = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        let mut stat: libc::stat = std::mem::zeroed();
        if flags < 0 || libc::fstat(fd, &mut stat) != 0 {
            return None;
        }
        (flags, stat.st_mode & libc::S_IFMT)
    };
    let blocking_stream =
        (kind == libc::S_IFIFO || kind == libc::S_IFSOCK) && flags & libc::O_NONBLOCK == 0;
    if !blocking_stream {
        return None;
    }
    let what = if kind == libc::S_IFIFO {
        "pipe"
    } else {
        "socket"
    };
    let message = format!(
        "sim: escape refused: {} called {call} on a real {what} (descriptor {fd}) during a \
         simulation; the kernel, not the seed, would decide when it returns, and the run would \
         stop with it. Use a simulated one (tokio::net, tokio::sync, std::sync channels) or \
         set SIM_ALLOW_THREADS=1 for real, parallel threads.",
        describe(&thread)
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{message}\n").as_bytes());
    sim_runtime::sweep::note_escape(&message);
    sim_runtime::context::with_simulation(|core| {
        core.fail_run(sim_runtime::sweep::FailureClass::Escape, message.clone())
    });
    Some(libc::EPERM)
}

/// `pthread_setname_np` on a simulated thread (std names a thread from the
/// thread itself): the name its reports use.
pub(crate) fn set_name(name: &str) {
    if let Some(thread) = me() {
        lock(&thread.inner).name = Some(name.to_string());
    }
}

/// How a report names a thread: its name, or its number.
fn describe(thread: &SimThread) -> String {
    let inner = lock(&thread.inner);
    match &inner.name {
        Some(name) => format!("thread '{name}' (task {})", inner.task),
        None => format!("thread {} (task {})", thread.ordinal, inner.task),
    }
}

/// A simulated thread as a task: each poll is one turn.
struct ThreadTask {
    thread: Arc<SimThread>,
}

impl Drop for ThreadTask {
    fn drop(&mut self) {
        // Dropped before the thread ended: its simulation ended.
        self.thread.release();
    }
}

impl Future for ThreadTask {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let thread = &self.thread;
        {
            let mut inner = lock(&thread.inner);
            inner.waker = Some(cx.waker().clone());
            inner.notified = false;
            if inner.exited {
                drop(inner);
                reap(thread);
                return Poll::Ready(());
            }
        }
        thread.run();
        let waits = {
            let inner = lock(&thread.inner);
            if inner.exited {
                None
            } else {
                Some(inner.waits)
            }
        };
        match waits {
            None => {
                reap(thread);
                Poll::Ready(())
            }
            Some(what) => {
                sim_runtime::context::with_current(|core| {
                    core.note_wait(sim_runtime::WaitNote {
                        what: if what.is_empty() { "std thread" } else { what },
                        detail: WaitDetail::None,
                        site: None,
                    })
                });
                Poll::Pending
            }
        }
    }
}

/// Joins the real thread of an exited simulated thread (its thread-local
/// destructors run meanwhile, with the turn), once, and wakes its joiners.
fn reap(thread: &Arc<SimThread>) {
    let (os, joiners) = {
        let mut inner = lock(&thread.inner);
        if inner.reaped {
            return;
        }
        inner.reaped = true;
        (inner.os, std::mem::take(&mut inner.joiners))
    };
    let real = crate::symbols::libc_fn!(
        c"pthread_join",
        fn(libc::pthread_t, *mut *mut libc::c_void) -> libc::c_int
    );
    if let Some(real) = real {
        let mut retval = std::ptr::null_mut();
        // SAFETY: libc's pthread_join, called once on a live thread.
        unsafe { real(os, &mut retval) };
        if thread.free.load(Ordering::SeqCst) {
            // A released thread ended as a real one: its value is the
            // real thread's.
            lock(&thread.inner).retval = retval as usize;
        }
    }
    LIVE.fetch_sub(1, Ordering::Relaxed);
    if lock(&thread.inner).released {
        let handle = (thread.number << 1) | 1;
        lock(&THREADS).remove(&handle);
    }
    for j in joiners {
        j.notify();
    }
    background::wake(Arc::as_ptr(thread) as usize);
}

/// Whether the core `core_id` runs simulated threads that have not ended.
fn core_has_threads(core_id: u16) -> bool {
    lock(&THREADS).values().any(|t| {
        let inner = lock(&t.inner);
        inner.core_id == core_id && !inner.reaped
    })
}
