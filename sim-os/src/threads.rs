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

use sim_runtime::Core;
use sim_runtime::TaskMeta;
use sim_runtime::WaitDetail;
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
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
    /// Creation order within the process: picks and reports are sorted by it.
    number: u64,
    /// Set when the thread may run; it waits on it.
    turn: AtomicU32,
    /// Set when the thread hands the turn back; the giver waits on it.
    back: AtomicU32,
    inner: Mutex<Inner>,
    /// A poll the simulator's thread hands over (`run_on_thread`).
    request: Mutex<Option<Request>>,
}

/// A call the simulator's thread hands to a thread waiting in its
/// `block_on`: a poll of a task of the runtime it blocks on.
struct Request {
    /// The call, its lifetime erased: the simulator's thread waits until it
    /// is `Done`, with the call's frame on its stack.
    call: *mut (dyn FnMut() + 'static),
    /// The core's scope and host for the call (the task's).
    current: Option<(u16, u32)>,
    state: RequestState,
}

enum RequestState {
    Handed,
    Running,
    /// Ran; a panic's payload goes on in the simulator's thread.
    Done(Option<Box<dyn std::any::Any + Send>>),
}

// Safety: only one OS thread runs at a time (the turn), and the call is made
// only while its owner waits for it.
unsafe impl Send for Request {}

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

// ----- raw futexes (the turn), past the interposed `syscall` -------------------

/// A private futex call on `word`, straight to the kernel; `timeout` bounds
/// a wait (null: none).
fn raw_futex(word: &AtomicU32, op: i32, val: u32, timeout: *const libc::timespec) -> i64 {
    // Safety: a futex call on a live word; a wait's spurious returns are
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

    /// The thread's side: hands the turn back and waits for the next.
    fn pause(&self) {
        let saved = save_current();
        give(&self.back);
        take(&self.turn);
        restore_current(saved);
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

fn me() -> Option<Arc<SimThread>> {
    ME.try_with(|m| m.borrow().clone()).ok().flatten()
}

/// Whether simulated threads are in play for this call: some are alive, and
/// the calling thread is one or runs a simulation.
fn active() -> bool {
    LIVE.load(Ordering::Relaxed) > 0
}

// ----- creation ------------------------------------------------------------------

struct Boot {
    start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    arg: *mut libc::c_void,
    thread: Arc<SimThread>,
    core: *const Core,
}

extern "C" fn trampoline(boot: *mut libc::c_void) -> *mut libc::c_void {
    // Safety: `spawn` passed a leaked `Boot`.
    let boot = unsafe { Box::from_raw(boot.cast::<Boot>()) };
    let thread = boot.thread.clone();
    ME.with(|m| *m.borrow_mut() = Some(thread.clone()));
    take(&thread.turn);
    // Safety: `spawn` leaked one strong count for this thread; the core is
    // only touched while this thread holds the turn.
    let core = unsafe { Rc::from_raw(boot.core) };
    let retval = {
        let _adopted = sim_runtime::context::Adopted::new(core.clone());
        // A thread is no runtime's worker: it may block on a runtime, as a
        // std thread may.
        sim_runtime::context::blocking_section(|| (boot.start)(boot.arg))
    };
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

type PthreadCreate = unsafe extern "C" fn(
    *mut libc::pthread_t,
    *const libc::pthread_attr_t,
    extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    *mut libc::c_void,
) -> libc::c_int;

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
        turn: AtomicU32::new(0),
        back: AtomicU32::new(0),
        inner: Mutex::new(Inner {
            core_id: core.id(),
            waker: None,
            notified: true,
            exited: false,
            reaped: false,
            retval: 0,
            // Safety: a plain integer type on Linux.
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
    let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_create".as_ptr());
    if real.is_null() {
        return libc::EAGAIN;
    }
    let real: PthreadCreate = std::mem::transmute(real);
    let rc = real(thread, attr, trampoline, boot.cast());
    if rc != 0 {
        // Safety: the thread was not made: the boot and its count are ours.
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
        name: Some(format!("thread {}", sim.number).into_boxed_str()),
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

/// Wakes a simulated thread blocked in `block_on`.
struct ThreadWake(Arc<SimThread>);

impl std::task::Wake for ThreadWake {
    fn wake(self: Arc<Self>) {
        self.0.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

/// `block_on` on a simulated thread (a thread that runs its own runtime, as
/// tokio-util's `LocalPoolHandle` does): the thread polls its future in the
/// runtime's context and scope, and between polls hands the turn back, so
/// the simulation (its clock, its tasks, this runtime's tasks) runs on
/// until the future's waker makes the thread runnable again. While it
/// waits, the simulator's thread hands it the polls of its runtime's tasks
/// (`run_on_thread`): they run on this thread, as in tokio.
pub(crate) fn block_on<F: Future>(core: &Rc<Core>, future: F) -> F::Output {
    let thread = me().expect("block_on on a simulated thread");
    let waker = Waker::from(Arc::new(ThreadWake(thread.clone())));
    let mut cx = Context::from_waker(&waker);
    let scope = core.current_scope();
    let _enter = sim_runtime::context::Enter::new(core.clone());
    // The runtime is blocked on: its current_thread tasks may run, here.
    let driving_scope = sim_runtime::executor::ScopeDriving::on_thread(core, token(&thread));
    // Its future is no blocking section: what it runs drives tasks.
    let _driving = sim_runtime::context::Driving::new();
    let mut future = std::pin::pin!(future);
    // Bounded by the run: each pass waits for a wake of the future.
    loop {
        // The simulator's thread changes the scope between turns.
        let previous = core.set_scope(scope);
        let polled = future.as_mut().poll(&mut cx);
        core.set_scope(previous);
        if let Poll::Ready(output) = polled {
            return output;
        }
        wait_in_block_on(&thread, &driving_scope);
    }
}

/// A thread in `block_on` hands the turn back until its future is woken,
/// polling the tasks the simulator's thread hands it meanwhile.
fn wait_in_block_on(thread: &Arc<SimThread>, driving: &sim_runtime::executor::ScopeDriving<'_>) {
    driving.set_idle(true);
    {
        let mut inner = lock(&thread.inner);
        inner.waits = "the future it blocks on (block_on)";
        inner.idle = true;
    }
    thread.pause();
    // Bounded by the simulation: each pass is one poll handed over.
    loop {
        let call = {
            let mut request = lock(&thread.request);
            match request.as_mut() {
                Some(r) if matches!(r.state, RequestState::Handed) => {
                    r.state = RequestState::Running;
                    Some((r.call, r.current))
                }
                _ => None,
            }
        };
        let Some((call, current)) = call else {
            break;
        };
        lock(&thread.inner).idle = false;
        driving.set_idle(false);
        restore_current(current);
        // Safety: the simulator's thread waits for `Done` with the call
        // alive on its stack (`run_on_thread`).
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*call)() }));
        if let Some(r) = lock(&thread.request).as_mut() {
            r.state = RequestState::Done(outcome.err());
        }
        driving.set_idle(true);
        {
            let mut inner = lock(&thread.inner);
            inner.waits = "the future it blocks on (block_on)";
            inner.idle = true;
        }
        thread.pause();
    }
    lock(&thread.inner).idle = false;
    driving.set_idle(false);
}

/// The token the core knows a simulated thread by (its handle).
fn token(thread: &SimThread) -> u64 {
    (thread.number << 1) | 1
}

/// The calling thread's token, if it is a simulated thread.
pub(crate) fn current_token() -> Option<u64> {
    me().map(|t| token(&t))
}

/// The simulator's side of a poll handed to the thread `token` waiting in
/// its `block_on`: hands it `call` and waits until it ran. While the thread
/// blocks inside the call (a std lock, a sleep), the simulator's thread
/// runs the other runnable threads, as when it blocks itself. False when
/// the thread does not wait in its `block_on`.
pub(crate) fn run_on_thread(token: u64, call: &mut dyn FnMut()) -> bool {
    let Some(thread) = lock(&THREADS).get(&token).cloned() else {
        return false;
    };
    {
        let inner = lock(&thread.inner);
        if !inner.idle || inner.exited {
            return false;
        }
    }
    let call: *mut (dyn FnMut() + '_) = call;
    // Safety: the lifetime is erased only until the call is `Done`, which
    // this function waits for before it returns.
    let call: *mut (dyn FnMut() + 'static) = unsafe { std::mem::transmute(call) };
    *lock(&thread.request) = Some(Request {
        call,
        current: save_current(),
        state: RequestState::Handed,
    });
    let done = || {
        matches!(
            lock(&thread.request).as_ref().map(|r| &r.state),
            Some(RequestState::Done(_))
        )
    };
    thread.run();
    if !done() {
        if let Err(report) = simulator_waits(done, None, "a task polled on its runtime's thread") {
            // The call's frame is on the blocked thread's stack: the run
            // cannot go on.
            fatal(&report);
        }
    }
    let request = lock(&thread.request).take();
    if let Some(Request {
        state: RequestState::Done(Some(payload)),
        ..
    }) = request
    {
        std::panic::resume_unwind(payload);
    }
    true
}

/// A simulated thread about to block on a real pipe or socket (`call` on
/// `fd`, in blocking mode): the kernel, not the simulation, would decide
/// when it returns, and the whole run would stop with it. Refused: `Some`
/// with the errno, after failing the run with a message that names the
/// call. `None` lets the call go on (not a thread, or no such descriptor).
pub(crate) fn refuse_real_block(fd: i32, call: &str) -> Option<i32> {
    let thread = me()?;
    // Safety: plain queries of a descriptor.
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
        None => format!("thread {} (task {})", thread.number, inner.task),
    }
}

/// A simulated thread as a task: each poll is one turn.
struct ThreadTask {
    thread: Arc<SimThread>,
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
    type PthreadJoin = unsafe extern "C" fn(libc::pthread_t, *mut *mut libc::c_void) -> i32;
    // Safety: dlsym of libc's pthread_join, called once on a live thread.
    unsafe {
        let real = libc::dlsym(libc::RTLD_NEXT, c"pthread_join".as_ptr());
        if !real.is_null() {
            let real: PthreadJoin = std::mem::transmute(real);
            let mut ignored = std::ptr::null_mut();
            real(os, &mut ignored);
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
}

/// Whether the core `core_id` runs simulated threads that have not ended.
fn core_has_threads(core_id: u16) -> bool {
    lock(&THREADS).values().any(|t| {
        let inner = lock(&t.inner);
        inner.core_id == core_id && !inner.reaped
    })
}

// ----- blocking on the simulator's own thread -----------------------------------

/// How long the simulator's thread waits in the kernel when no simulated
/// thread can run (something outside the run may release it), and how many
/// such waits in a row make a deadlock.
const IDLE_WAIT_NS: i64 = 10_000_000;
const IDLE_WAITS_MAX: u32 = 10;

/// The simulator's thread waits until `done`: it runs runnable threads of
/// its core, picked by the seed, in the meantime. With none to run, it waits
/// a moment in the kernel on `word` (a lock word, for a release from
/// outside the run) and looks again.
///
/// # Errors
/// With the report's text when no thread can run and `done` stays false.
fn simulator_waits(
    done: impl Fn() -> bool,
    word: Option<(&AtomicU32, u32)>,
    what: &str,
) -> Result<(), String> {
    let mut idle = 0;
    for _ in 0..NESTED_TURNS_MAX {
        if done() {
            return Ok(());
        }
        let Some(core_id) = sim_runtime::context::current_id() else {
            return Ok(());
        };
        let runnable: Vec<Arc<SimThread>> = lock(&THREADS)
            .values()
            .filter(|t| {
                let inner = lock(&t.inner);
                inner.core_id == core_id && inner.notified && !inner.exited
            })
            .cloned()
            .collect();
        if runnable.is_empty() {
            // Threads that sleep, or wait with a deadline: time moves on
            // under the blocked call, as it would under a real one.
            if sim_runtime::context::with_current(|core| core.advance_to_next_event())
                .unwrap_or(false)
            {
                continue;
            }
            idle += 1;
            if word.is_some() && idle <= IDLE_WAITS_MAX {
                kernel_pause(word);
                continue;
            }
            let waiting: Vec<String> = lock(&THREADS)
                .values()
                .filter(|t| {
                    let inner = lock(&t.inner);
                    inner.core_id == core_id && !inner.reaped
                })
                .map(|t| {
                    let waits = lock(&t.inner).waits;
                    format!("{} waits on {waits}", describe(t))
                })
                .collect();
            return Err(format!(
                "sim: deadlock: the simulator's thread waits on {what}, and no simulated thread \
                 can run to release it ({})",
                if waiting.is_empty() {
                    "no threads left".to_string()
                } else {
                    waiting.join("; ")
                }
            ));
        }
        idle = 0;
        let index = sim_runtime::context::with_current(|core| {
            core.stream_below("threads", runnable.len() as u64)
        })
        .unwrap_or(0) as usize;
        let thread = &runnable[index];
        let task = {
            let mut inner = lock(&thread.inner);
            inner.notified = false;
            inner.task
        };
        // A turn the simulator's thread hands out itself is a poll of the
        // thread's task in the trace, as any other turn.
        sim_runtime::context::with_current(|core| {
            core.trace(
                sim_runtime::trace::EventKind::Poll,
                task,
                sim_runtime::trace::Label::None,
            )
        });
        thread.run();
        if lock(&thread.inner).exited {
            reap(thread);
        }
    }
    Err(format!(
        "sim: livelock: the simulator's thread waited on {what} for too many turns"
    ))
}

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

// ----- the interposed calls -----------------------------------------------------

/// `syscall(SYS_futex, ...)` while simulated threads are alive: `Some`
/// with the result, `None` to pass the call on to the kernel.
///
/// # Safety
/// `uaddr` is a futex word, as the kernel's contract.
pub(crate) unsafe fn futex(
    uaddr: *const AtomicU32,
    op: i32,
    val: u32,
    timeout: *const libc::timespec,
) -> Option<libc::c_long> {
    if !active() {
        return None;
    }
    let cmd = op & libc::FUTEX_CMD_MASK;
    match cmd {
        libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET => {
            let word = &*uaddr;
            if word.load(Ordering::SeqCst) != val {
                return Some(fail(libc::EAGAIN));
            }
            // A deadline in true virtual ns: relative for WAIT, absolute
            // on the monotonic clock for WAIT_BITSET.
            let deadline = if timeout.is_null() {
                None
            } else {
                let t = &*timeout;
                let ns = t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64;
                sim_runtime::context::with_simulation(|core| {
                    if cmd == libc::FUTEX_WAIT {
                        core.now_ns() + ns
                    } else {
                        ns.saturating_sub(crate::raw::MONOTONIC_ORIGIN_NS)
                    }
                })
            };
            match me() {
                Some(thread) => Some(thread_wait(&thread, uaddr as usize, deadline)),
                None => {
                    // The simulator's thread, while its threads live; any
                    // other waits in the kernel.
                    let core_id = sim_runtime::context::current_id()?;
                    if !core_has_threads(core_id) {
                        return None;
                    }
                    let changed = || word.load(Ordering::SeqCst) != val;
                    match simulator_waits(changed, Some((word, val)), "a std lock or channel") {
                        Ok(()) => Some(0),
                        // A timed wait gives up (the clock cannot move under
                        // a task's poll); an untimed one is a deadlock.
                        Err(_) if deadline.is_some() => Some(fail(libc::ETIMEDOUT)),
                        Err(report) => fatal(&report),
                    }
                }
            }
        }
        libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => {
            let woken = wake(uaddr as usize, val as usize);
            // Also whoever waits in the kernel (a thread outside the run).
            let rest = (val as usize).saturating_sub(woken);
            let kernel = if rest > 0 {
                raw_wake(&*uaddr, rest.min(i32::MAX as usize) as i32).max(0) as usize
            } else {
                0
            };
            // A wake is a scheduling point: the woken may run first.
            if let (Some(thread), true) = (me(), woken > 0) {
                thread.notify();
                lock(&thread.inner).waits = "its turn (after a wake)";
                thread.pause();
            }
            Some((woken + kernel) as libc::c_long)
        }
        _ => None,
    }
}

/// Says why the run fails: on stderr (past capture) and in the run's
/// failure, so the sweep classes it.
fn report_failure(report: &str) {
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{report}\n").as_bytes());
    sim_runtime::context::with_current(|core| {
        core.fail_run(
            sim_runtime::sweep::FailureClass::Deadlock,
            report.to_string(),
        )
    });
    sim_runtime::sweep::set_failure_class(sim_runtime::sweep::FailureClass::Deadlock);
}

/// A deadlock inside a std call that cannot fail (a lock, a channel): the
/// report, then the process ends, since no panic may unwind through libc's
/// frames.
fn fatal(report: &str) -> ! {
    report_failure(report);
    std::process::abort()
}

fn fail(errno: i32) -> libc::c_long {
    // Safety: errno is thread-local and writable.
    unsafe { *libc::__errno_location() = errno };
    -1
}

/// Wakes up to `n` simulated threads waiting on `addr`, in arrival order.
fn wake(addr: usize, n: usize) -> usize {
    let woken: Vec<Arc<SimThread>> = {
        let mut waiters = lock(&WAITERS);
        let Some(queue) = waiters.get_mut(&addr) else {
            return 0;
        };
        let take = n.min(queue.len());
        let woken = queue.drain(..take).collect();
        if queue.is_empty() {
            waiters.remove(&addr);
        }
        woken
    };
    for t in &woken {
        t.notify();
    }
    woken.len()
}

/// A simulated thread's futex wait: queued on `addr`, the turn handed back
/// until a wake (or the deadline).
fn thread_wait(thread: &Arc<SimThread>, addr: usize, deadline_ns: Option<u64>) -> libc::c_long {
    lock(&WAITERS)
        .entry(addr)
        .or_default()
        .push_back(thread.clone());
    let timer = deadline_ns.and_then(|at| {
        let t = thread.clone();
        sim_runtime::context::with_simulation(|core| {
            core.schedule(
                at,
                "thread timeout",
                Box::new(move || {
                    lock(&t.inner).timed_out = true;
                    t.notify();
                }),
            )
        })
    });
    {
        let mut inner = lock(&thread.inner);
        inner.waits = "a std lock or channel (futex)";
        inner.timed_out = false;
    }
    thread.pause();
    // Woken, timed out, or given a turn spuriously: std checks again.
    let still_queued = {
        let mut waiters = lock(&WAITERS);
        let mut found = false;
        if let Some(queue) = waiters.get_mut(&addr) {
            if let Some(i) = queue.iter().position(|t| Arc::ptr_eq(t, thread)) {
                queue.remove(i);
                found = true;
            }
            if queue.is_empty() {
                waiters.remove(&addr);
            }
        }
        found
    };
    if let Some(key) = timer {
        sim_runtime::context::with_simulation(|core| core.event_cancel(key));
    }
    let timed_out = std::mem::take(&mut lock(&thread.inner).timed_out);
    if still_queued && timed_out {
        fail(libc::ETIMEDOUT)
    } else {
        0
    }
}

/// `nanosleep`/`clock_nanosleep` on a simulated thread: virtual time. `None`
/// when the caller is not one.
pub(crate) fn sleep_until(deadline_ns: impl FnOnce(&Core) -> u64) -> Option<()> {
    let thread = me()?;
    let deadline = sim_runtime::context::with_simulation(deadline_ns)?;
    // Bounded: each turn either finds the deadline reached or waits for it.
    loop {
        let now = sim_runtime::context::with_simulation(|core| core.now_ns())?;
        if now >= deadline {
            return Some(());
        }
        let t = thread.clone();
        sim_runtime::context::with_simulation(|core| {
            core.schedule(deadline, "thread sleep", Box::new(move || t.notify()))
        });
        lock(&thread.inner).waits = "a sleep";
        thread.pause();
    }
}

/// `sched_yield` on a simulated thread: a scheduling point.
pub(crate) fn yield_now() -> bool {
    let Some(thread) = me() else {
        return false;
    };
    thread.notify();
    lock(&thread.inner).waits = "its turn (after a yield)";
    thread.pause();
    true
}

/// `pthread_join` of a simulated thread: waits (as a thread, or as the
/// simulator) for it to end. `None` for a thread that is not one.
pub(crate) fn join(os: libc::pthread_t, retval: *mut *mut libc::c_void) -> Option<i32> {
    let target = lock(&THREADS).get(&(os as u64)).cloned()?;
    let ended = || lock(&target.inner).reaped;
    match me() {
        Some(thread) => {
            // Bounded by the target's end: each pass waits for a wake.
            while !ended() {
                let exited = {
                    let mut inner = lock(&target.inner);
                    if !inner.exited {
                        inner.joiners.push(thread.clone());
                    }
                    inner.exited
                };
                if exited {
                    // Its task reaps it at its next turn.
                    thread.notify();
                }
                lock(&thread.inner).waits = "a thread's end (join)";
                thread.pause();
            }
        }
        None => {
            if let Err(report) = simulator_waits(
                || {
                    let exited = lock(&target.inner).exited;
                    if exited {
                        reap(&target);
                    }
                    ended()
                },
                None,
                "a thread's end (join)",
            ) {
                // std turns the error into a panic of the joining code; the
                // report says why.
                report_failure(&report);
                return Some(libc::EDEADLK);
            }
        }
    }
    lock(&target.inner).released = true;
    lock(&THREADS).remove(&(os as u64));
    if !retval.is_null() {
        // Safety: the caller's out pointer.
        unsafe { *retval = lock(&target.inner).retval as *mut libc::c_void };
    }
    Some(0)
}

/// `pthread_detach` of a simulated thread: nothing to do (its task reaps
/// it). `None` for a thread that is not one.
pub(crate) fn detach(os: libc::pthread_t) -> Option<i32> {
    let target = lock(&THREADS).get(&(os as u64)).cloned()?;
    let reaped = {
        let mut inner = lock(&target.inner);
        inner.released = true;
        inner.reaped
    };
    if reaped {
        lock(&THREADS).remove(&(os as u64));
    }
    Some(0)
}
