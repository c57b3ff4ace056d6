//! The interposed calls of simulated threads (futex, sleep, yield, join,
//! detach) and the simulator's own thread when it blocks in one.

use super::{
    active, core_has_threads, describe, kernel_pause, lock, me, raw_wake, reap, SimThread,
    NESTED_TURNS_MAX, THREADS, WAITERS,
};
use sim_runtime::Core;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

// ----- blocking on the simulator's own thread -----------------------------------

/// How many real waits in a row (each `IDLE_WAIT_NS`, see `kernel_pause`)
/// make a deadlock when no simulated thread can run.
const IDLE_WAITS_MAX: u32 = 10;

/// The simulator's thread waits until `done`, or until virtual time
/// reaches `deadline_ns` (a timed wait): it runs runnable threads of its
/// core, picked by the seed, in the meantime. With none to run, it waits a
/// moment in the kernel on `word` (a lock word, for a release from outside
/// the run) and looks again.
///
/// # Errors
/// With the report's text when no thread can run and `done` stays false,
/// or when the deadline came first.
pub(super) fn simulator_waits(
    done: impl Fn() -> bool,
    word: Option<(&AtomicU32, u32)>,
    deadline_ns: Option<u64>,
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
        let now_ns = || sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(0);
        if deadline_ns.is_some_and(|deadline| now_ns() >= deadline) {
            return Err(format!(
                "sim: the simulator's thread waited on {what} past its timeout"
            ));
        }
        let runnable = runnable_threads(core_id);
        if runnable.is_empty() {
            // Threads that sleep, or wait with a deadline: time moves on
            // under the blocked call, as it would under a real one, to the
            // next event or this wait's own deadline, whichever comes first
            // (a real timed wait ends at its timeout, not at the next event).
            if sim_runtime::context::with_current(|core| advance_within(core, deadline_ns))
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
        run_one_turn(&runnable);
    }
    Err(format!(
        "sim: livelock: the simulator's thread waited on {what} for too many turns"
    ))
}

/// Moves `core`'s clock to its next event, firing it, or to `deadline_ns`
/// when that comes first (or when no event is due): whether the clock
/// moved.
fn advance_within(core: &Core, deadline_ns: Option<u64>) -> bool {
    let now = core.now_ns();
    match (core.next_event_ns(), deadline_ns) {
        (next, Some(deadline)) if deadline > now && next.is_none_or(|next| next > deadline) => {
            core.advance_clock(std::time::Duration::from_nanos(deadline - now));
            true
        }
        _ => core.advance_to_next_event(),
    }
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
    let cmd = op & libc::FUTEX_CMD_MASK;
    let waits = matches!(cmd, libc::FUTEX_WAIT | libc::FUTEX_WAIT_BITSET);
    // Past the fast path: simulated threads or background waits alive, or
    // the thread that built a runtime waits outside its `block_on`.
    if !(active() || waits && super::background::core().is_some()) {
        return None;
    }
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
                sim_runtime::context::with_thread_clock(|core| {
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
                    // The thread that built a runtime, outside its
                    // `block_on`: the simulation runs meanwhile.
                    if let Some(core) = super::background::core() {
                        return Some(background_futex_wait(&core, word, val, deadline));
                    }
                    // The simulator's thread, while its threads live; any
                    // other waits in the kernel.
                    let core_id = sim_runtime::context::current_id()?;
                    if !core_has_threads(core_id) {
                        return None;
                    }
                    let changed = || word.load(Ordering::SeqCst) != val;
                    let waited = simulator_waits(
                        changed,
                        Some((word, val)),
                        deadline,
                        "a std lock or channel",
                    );
                    match waited {
                        Ok(()) => Some(0),
                        // A timed wait ends at its deadline, or when no
                        // thread can run; an untimed one is a deadlock.
                        Err(_) if deadline.is_some() => Some(fail(libc::ETIMEDOUT)),
                        Err(report) => fatal(&report),
                    }
                }
            }
        }
        libc::FUTEX_WAKE | libc::FUTEX_WAKE_BITSET => {
            let woken = wake(uaddr as usize, val as usize);
            // A background wait on the word ends too; it may also be
            // pausing in the kernel, woken below with the rest.
            super::background::wake(uaddr as usize);
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

/// A futex wait of the thread that built a runtime, outside its
/// `block_on`: the simulation runs in the background until a wake of the
/// word, a change of it, or the deadline (in virtual ns).
fn background_futex_wait(
    core: &std::rc::Rc<Core>,
    word: &AtomicU32,
    val: u32,
    deadline: Option<u64>,
) -> libc::c_long {
    let key = word.as_ptr() as usize;
    let timed_out = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let timer = deadline.map(|at| {
        let flag = timed_out.clone();
        core.schedule(
            at,
            "thread timeout",
            Box::new(move || {
                flag.store(true, Ordering::SeqCst);
                super::background::wake(key);
            }),
        )
    });
    let changed = || word.load(Ordering::SeqCst) != val;
    let result = super::background::wait(
        core,
        key,
        &changed,
        Some((word, val)),
        "a std lock or channel",
    );
    if let Some(key) = timer {
        core.event_cancel(key);
    }
    match result {
        Ok(()) if timed_out.load(Ordering::SeqCst) && !changed() => fail(libc::ETIMEDOUT),
        Ok(()) => 0,
        Err(report) => fatal(&report),
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
pub(super) fn fatal(report: &str) -> ! {
    report_failure(report);
    std::process::abort()
}

fn fail(errno: i32) -> libc::c_long {
    // SAFETY: errno is thread-local and writable.
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
    // A paused tokio clock does not move while a blocking task runs: the
    // task's sleep passes in system time, which that clock does not see.
    // Here the sleep takes no virtual time; others get a turn.
    if sim_runtime::context::on_blocking_pool()
        && sim_runtime::context::with_simulation(|core| core.is_paused()).unwrap_or(false)
    {
        yield_now();
        return Some(());
    }
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

/// How much virtual time one turn of a simulated thread takes while the
/// simulator's thread sleeps: a thread that spins (polls, never blocks)
/// would otherwise hold the clock still under the sleep forever.
const SLEEP_TURN_NS: u64 = 100_000;

/// The most turns one sleep of the simulator's thread hands out.
const SLEEP_TURNS_MAX: u64 = 10_000_000;

/// `nanosleep`/`clock_nanosleep` on the simulator's own thread inside a run
/// (a task calls `std::thread::sleep`, as tests do to "let a worker
/// work"): the task holds its runtime's thread, so no task runs, but the
/// simulated threads do, picked by the seed, and virtual time passes to the
/// deadline (each turn costs `SLEEP_TURN_NS`; with no thread to run the
/// clock jumps to the next event). `None` when the caller is not the
/// simulator's thread in a run.
pub(crate) fn simulator_sleep(deadline_ns: impl FnOnce(&Core) -> u64) -> Option<()> {
    if me().is_some() {
        return None;
    }
    let deadline = sim_runtime::context::with_current(deadline_ns)?;
    let core_id = sim_runtime::context::current_id()?;
    let now = || sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(u64::MAX);
    // Moves the clock by at most `by`, never past the deadline, firing the
    // events it passes.
    let pass = |by: u64| {
        sim_runtime::context::with_current(|core| {
            let now = core.now_ns();
            let next = core.next_event_ns().unwrap_or(u64::MAX).max(now);
            let to = now.saturating_add(by).min(deadline).min(next);
            core.advance_clock(std::time::Duration::from_nanos(to - now));
        });
    };
    for _ in 0..SLEEP_TURNS_MAX {
        if now() >= deadline {
            return Some(());
        }
        let runnable = runnable_threads(core_id);
        if runnable.is_empty() {
            pass(u64::MAX);
            continue;
        }
        run_one_turn(&runnable);
        pass(SLEEP_TURN_NS);
    }
    Some(())
}

/// A sleep of a thread that built a runtime, outside its `block_on`, when
/// nothing of the simulation runs in the background (a `current_thread`
/// runtime): its clock is the runtime's, so the sleep passes in virtual
/// time, and the events it passes happen (a timer due meanwhile fires at
/// the next `block_on`, as tokio's would). `None` for another thread.
pub(crate) fn idle_sleep(deadline_ns: impl FnOnce(&Core) -> u64) -> Option<()> {
    if me().is_some() || sim_runtime::context::current_id().is_some() {
        return None;
    }
    let core = sim_runtime::context::thread_core()?;
    let deadline = deadline_ns(&core);
    let _enter = sim_runtime::context::Enter::new(core.clone());
    // Bounded: each turn reaches the deadline or the next event, which it
    // fires (a timer's wake only readies a task; it runs in `block_on`).
    for _ in 0..SLEEP_TURNS_MAX {
        let now = core.now_ns();
        if now >= deadline {
            break;
        }
        let next = core.next_event_ns().unwrap_or(u64::MAX).max(now);
        core.advance_clock(std::time::Duration::from_nanos(deadline.min(next) - now));
    }
    Some(())
}

/// `nanosleep`/`clock_nanosleep` of the thread that built a runtime,
/// outside its `block_on`: the simulation runs in the background until the
/// virtual deadline (as the runtime's workers and the other threads run on
/// tokio while it sleeps). `None` when the caller is not such a thread.
pub(crate) fn background_sleep(deadline_ns: impl FnOnce(&Core) -> u64) -> Option<()> {
    let core = super::background::core()?;
    let deadline = deadline_ns(&core);
    // The key: an address of this call's own, unique while it waits.
    let anchor = 0u8;
    let key = std::ptr::addr_of!(anchor) as usize;
    let timer = core.schedule(
        deadline,
        "thread sleep",
        Box::new(move || {
            super::background::wake(key);
        }),
    );
    let reached = || core.now_ns() >= deadline;
    let result = super::background::wait(&core, key, &reached, None, "a sleep");
    core.event_cancel(timer);
    if let Err(report) = result {
        fatal(&report);
    }
    Some(())
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
    let target = lock(&THREADS).get(&os).cloned()?;
    let ended = || lock(&target.inner).reaped;
    if target.free.load(Ordering::SeqCst) {
        // Released (its simulation ended while it ran): a real join.
        reap(&target);
    }
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
            let ended_now = || {
                let exited = lock(&target.inner).exited;
                if exited {
                    reap(&target);
                }
                ended()
            };
            // The thread that built a runtime, outside its `block_on`: the
            // simulation runs meanwhile; inside, only its threads do.
            let waited = match super::background::core() {
                Some(core) => super::background::wait(
                    &core,
                    Arc::as_ptr(&target) as usize,
                    &ended_now,
                    None,
                    "a thread's end (join)",
                ),
                None => simulator_waits(ended_now, None, None, "a thread's end (join)"),
            };
            if let Err(report) = waited {
                // std turns the error into a panic of the joining code; the
                // report says why.
                report_failure(&report);
                return Some(libc::EDEADLK);
            }
        }
    }
    lock(&target.inner).released = true;
    lock(&THREADS).remove(&os);
    if !retval.is_null() {
        // SAFETY: the caller's out pointer.
        unsafe { *retval = lock(&target.inner).retval as *mut libc::c_void };
    }
    Some(0)
}

/// `pthread_detach` of a simulated thread: nothing to do (its task reaps
/// it). `None` for a thread that is not one.
pub(crate) fn detach(os: libc::pthread_t) -> Option<i32> {
    let target = lock(&THREADS).get(&os).cloned()?;
    let reaped = {
        let mut inner = lock(&target.inner);
        inner.released = true;
        inner.reaped
    };
    if reaped {
        lock(&THREADS).remove(&os);
    }
    Some(0)
}

/// The simulated threads of simulation `core_id` that may take a turn.
fn runnable_threads(core_id: u16) -> Vec<Arc<SimThread>> {
    lock(&THREADS)
        .values()
        .filter(|t| {
            let inner = lock(&t.inner);
            inner.core_id == core_id && inner.notified && !inner.exited
        })
        .cloned()
        .collect()
}

/// Gives one of `runnable` (not empty), picked by the seed, a turn: a turn
/// the simulator's thread hands out itself is a poll of the thread's task
/// in the trace, as any other turn.
fn run_one_turn(runnable: &[Arc<SimThread>]) {
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
    sim_runtime::context::with_current(|core| {
        core.trace(
            sim_runtime::trace::EventKind::Poll,
            task,
            sim_runtime::trace::Label::None,
        )
    });
    let previous = sim_runtime::watch::turn_started(task);
    thread.run();
    sim_runtime::watch::turn_ended(previous);
    if lock(&thread.inner).exited {
        reap(thread);
    }
}
