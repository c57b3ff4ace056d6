//! The hang watchdog: a thread that reads what the loop publishes
//! (`crate::watch`) with real time beside it, and ends a process whose poll
//! or run passes its wall budget, with a `hang` record naming the task and
//! its spawn site.

use super::record::{write_record, Record};
use super::vars::{
    DEFAULT_HANG_POLL_S, DEFAULT_HANG_RUN_S, HANG_EXIT_CODE, HANG_POLL_VAR, HANG_RUN_VAR,
};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Once;
use std::time::Duration;

pub(crate) fn budget(setting: &crate::settings::Setting, default_s: u64) -> Duration {
    let secs = setting
        .value()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default_s as f64);
    Duration::from_secs_f64(secs)
}

/// The watchdog thread's id (`gettid`), 0 before it starts: the fork
/// server knows it for one of the sweep's own threads.
static WATCHDOG_TID: AtomicI32 = AtomicI32::new(0);
/// Whether the watchdog thread was started.
static WATCHDOG_SPAWNED: AtomicBool = AtomicBool::new(false);

pub(crate) fn start_watchdog() {
    static WATCHDOG: Once = Once::new();
    WATCHDOG.call_once(spawn_watchdog);
}

/// The watchdog's thread id, if it was started: a thread just started
/// publishes its id when it first runs, which on a busy machine may take
/// a while (up to a second is waited).
pub(crate) fn watchdog_tid() -> Option<i32> {
    if !WATCHDOG_SPAWNED.load(Ordering::Acquire) {
        return None;
    }
    // Bounded: a thousand waits of 1 ms.
    for _ in 0..1_000 {
        let tid = WATCHDOG_TID.load(Ordering::Acquire);
        if tid != 0 {
            return Some(tid);
        }
        // Real time: the interposed sleeps are virtual during a run.
        match crate::seams::os_layer() {
            Some(layer) => layer.real_sleep(Duration::from_millis(1)),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    None
}

/// In a forked branch run (`property::fork`): the parent's watchdog did
/// not come along (a child has only the thread that forked), so the child
/// starts its own, if the parent had one.
pub(crate) fn restart_in_child() {
    if WATCHDOG_SPAWNED.load(Ordering::Acquire) {
        WATCHDOG_TID.store(0, Ordering::Release);
        WATCHDOG_SPAWNED.store(false, Ordering::Release);
        spawn_watchdog();
    }
}

fn spawn_watchdog() {
    let poll_budget = budget(&crate::settings::HANG_POLL_S, DEFAULT_HANG_POLL_S);
    let run_budget = budget(&crate::settings::HANG_RUN_S, DEFAULT_HANG_RUN_S);
    // Started outside any run (or refused inside one, as any thread
    // would be); it reads only the atomics above and real time, so it
    // cannot change what a run does.
    // A plain thread (`outside`): never a simulated one, nor the
    // first thread of a plain test's simulation (sim-os's `ambient`).
    let spawn = || {
        std::thread::Builder::new()
            .name("sim-watchdog".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                // SAFETY: gettid has no preconditions.
                WATCHDOG_TID.store(unsafe { libc::gettid() }, Ordering::Release);
                watchdog(poll_budget, run_budget)
            })
    };
    let spawned = match crate::seams::os_layer() {
        Some(layer) => {
            let mut spawned = None;
            layer.start_plain_thread(&mut || spawned = Some(crate::outside::outside(spawn)));
            spawned.expect("start_plain_thread runs its closure")
        }
        None => crate::outside::outside(spawn),
    };
    match spawned {
        Ok(_) => {
            WATCHDOG_SPAWNED.store(true, Ordering::Release);
            crate::watch::start_watching();
        }
        Err(e) => eprintln!(
            "sim: the hang watchdog could not start ({e}); a stuck run will not be caught"
        ),
    }
}

pub(crate) fn watchdog(poll_budget: Duration, run_budget: Duration) {
    let tick = Duration::from_millis(50);
    let mut last_polls = u64::MAX;
    let mut last_generation = u64::MAX;
    let mut poll_since = std::time::Instant::now();
    let mut run_since = std::time::Instant::now();
    // The run's virtual time when the watchdog first saw it.
    let mut run_virtual_ns = 0;
    loop {
        std::thread::sleep(tick);
        let now = std::time::Instant::now();
        let watched = crate::watch::snapshot();
        let (polls, generation, in_run, task) = (
            watched.polls,
            watched.generation,
            watched.in_run,
            watched.task,
        );
        if polls != last_polls || task == u64::MAX {
            last_polls = polls;
            poll_since = now;
        }
        if generation != last_generation || !in_run {
            last_generation = generation;
            run_since = now;
            run_virtual_ns = watched.virtual_ns;
        }
        let stuck_poll = in_run && task != u64::MAX && now - poll_since > poll_budget;
        let slow_run = in_run && now - run_since > run_budget;
        if !(stuck_poll || slow_run) {
            continue;
        }
        let thread_site = (task != crate::watch::NO_TASK && task != 0)
            .then(|| crate::watch::thread_site(watched.seed, task))
            .flatten();
        let who = if task == crate::watch::NO_TASK {
            "no task is being polled".to_string()
        } else if task == 0 {
            "the running task is the test's own future (the root of block_on)".to_string()
        } else if let Some(site) = &thread_site {
            format!("the running task is task {task}, a std thread spawned at {site}")
        } else if let Some(site) = watched.site {
            format!(
                "the running task is task {task}, spawned at {}:{}:{}",
                site.file(),
                site.line(),
                site.column()
            )
        } else {
            format!("the running task is task {task}")
        };
        let message = if stuck_poll {
            format!(
                "hang: one poll has run for {:.1}s of wall time without returning ({who}). {} \
                 The budget is {HANG_POLL_VAR}={}.",
                (now - poll_since).as_secs_f64(),
                stuck_why(thread_site.is_some()),
                poll_budget.as_secs_f64()
            )
        } else {
            format!(
                "hang: the run has taken {:.1}s of wall time ({who}); {}. The budget is \
                 {HANG_RUN_VAR}={}.",
                (now - run_since).as_secs_f64(),
                virtual_time_moved(run_virtual_ns, watched.virtual_ns),
                run_budget.as_secs_f64()
            )
        };
        let story = crate::watch::story_text();
        let message = if story.is_empty() {
            message
        } else {
            format!("{message}\n{}", story.trim_end())
        };
        let seed = watched.seed;
        write_record(&Record::Hang { seed, message });
        // The stuck thread cannot be stopped from here: end the process.
        // SAFETY: `_exit` is always safe to call.
        unsafe { libc::_exit(HANG_EXIT_CODE) };
    }
}

/// Why a poll that never returns stops the run, for a task or a thread.
fn stuck_why(std_thread: bool) -> &'static str {
    if std_thread {
        // Simulated threads take turns: one that never blocks keeps its
        // turn, where a real OS would preempt it.
        "The simulation runs one thread at a time, and a thread has the turn until it \
         blocks (a sleep, a lock or a channel that waits, I/O, a join): a loop that only \
         polls or spins on memory of its own never gives it back. Let the loop block \
         (std::thread::sleep, a Condvar, a channel's recv) or make it a task."
    } else {
        "A loop with no .await, or a blocking call, never gives the scheduler its turn."
    }
}

/// What the virtual clock did during a slow run: moved (how far), or stood
/// still, which no timer can end (every step finishes at one instant: a
/// busy loop, or links and disks that take no time). A poll's own cost on
/// a clock that is not paused is not counted: only events move it here.
pub(crate) fn virtual_time_moved(from_ns: u64, to_ns: u64) -> String {
    let at = |ns: u64| format!("{:.6}s", ns as f64 / 1e9);
    if to_ns > from_ns {
        format!("virtual time moved from {} to {}", at(from_ns), at(to_ns))
    } else {
        format!(
            "virtual time stood still at {} the whole time, so no timer could end the \
             run: every step finished at one instant, but for what its poll cost (a loop \
             that never sleeps, or links and disks that take no time)",
            at(from_ns)
        )
    }
}
