//! The fork server of branch runs: a branch costs its suffix, not its
//! whole run.
//!
//! A branch job (`SIM_BRANCH` with `SIM_BRANCH_FORK`, from the runner)
//! holds several branch runs from one point: the same root seed and plan,
//! each with a salt of its own at the plan's last point. The process
//! replays the prefix once. At the last point it forks one child per salt
//! but the last, one at a time, and waits for each; each child draws its
//! suffix with its salt and ends when its run does. The process itself
//! then goes on with the last salt. A child is the process at that very
//! instant, so its run is the one a replay from the start with its salt
//! gives, event for event (a test of `cargo-sim` compares their hashes).
//!
//! Forking is sound only where the process is, in effect, one thread: a
//! child has only the thread that forked. The point must be reached with
//! no thread alive but the sweep's own idle ones (libtest's main thread,
//! the one waiting for an in-process sweep's seed thread, the watchdog,
//! which a child starts afresh). A simulated std thread, a real helper
//! thread, a trace file being written, or a failed `fork` all mean no
//! fork: the process goes on with the first salt, and the runner runs the
//! others as replays from the start.
//!
//! A child ends where its run's verdict is known. In an in-process sweep
//! (`sweep::run_test`) that is its seed's record, exact. In a test libtest
//! runs once per process (a harness test) the verdict is libtest's, whose
//! main thread a child lacks: the child ends when its test thread does,
//! with 0 when no panic happened after the fork and 101 otherwise, and
//! the runner replays a branch run that ended with anything but 0 from
//! the start, whose outcome is the one it counts (a panic the test
//! caught, or a task's that tokio turned into a `JoinError`, fails
//! nothing). A forked child of such a test never stops the job.
//!
//! Records: each run of a branch job starts with `branched <salt>`; the
//! parent writes `branch-ended <salt> <status>` after each child. Before
//! each fork it looks for the runner's stop file (`SIM_BRANCH_STOP`): a
//! child whose run made a new point ends the batch early, so that point is
//! dug at once. A child that failed ends the job (the sweep stops at a
//! failure) unless every seed counts (`SIM_SWEEP_KEEP_GOING`).

use crate::sweep::{write_record, Record};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;

/// Whether this process is a forked branch run.
static IN_CHILD: AtomicBool = AtomicBool::new(false);

/// Whether a panic happened in this forked branch run (its verdict, in a
/// test libtest runs once per process).
static CHILD_PANICKED: AtomicBool = AtomicBool::new(false);

/// The thread that waits for an in-process sweep's seed thread (`gettid`),
/// 0 when none: one of the sweep's own idle threads.
static SWEEP_CALLER_TID: AtomicI32 = AtomicI32::new(0);

/// An in-process sweep starts on the calling thread, which waits while
/// each seed runs on a thread of its own.
pub(crate) fn sweep_caller() {
    // SAFETY: gettid has no preconditions.
    SWEEP_CALLER_TID.store(unsafe { libc::gettid() }, Ordering::Relaxed);
}

/// The salts a branch job's other runs take at the plan's last point
/// (`SIM_BRANCH_FORK`), read once.
///
/// # Panics
/// On a salt that does not parse (the runner writes them).
fn other_salts() -> &'static [u64] {
    static SALTS: OnceLock<Vec<u64>> = OnceLock::new();
    SALTS.get_or_init(|| {
        let Some(text) = crate::settings::BRANCH_FORK.value() else {
            return Vec::new();
        };
        text.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| {
                crate::config::parse_seed(s.trim()).unwrap_or_else(|e| {
                    panic!(
                        "sim: {}: bad salt {s:?}: {e}",
                        crate::settings::BRANCH_FORK.name
                    )
                })
            })
            .collect()
    })
}

/// At the plan's last point, whose own salt is `first`: runs the job's
/// other branch runs as forked children, and returns the salt this process
/// draws its suffix with (a child's own; the last one in the parent; or
/// `first` when the job has one run or cannot fork).
pub(crate) fn serve(first: u64) -> u64 {
    let Some((&last, middle)) = other_salts().split_last() else {
        return first;
    };
    if IN_CHILD.load(Ordering::Relaxed) {
        return first;
    }
    if let Err(why) = fork_allowed() {
        if crate::sweep::verbose() {
            eprintln!("sim: branch runs from this point replay from the start: {why}");
        }
        // The runner says why in its summary.
        write_record(&Record::Unforked(why));
        return own_run(first);
    }
    for salt in std::iter::once(first).chain(middle.iter().copied()) {
        if stop_asked() {
            // A child's run made a point the runner digs first: this
            // process runs this salt, and the rest go back to the budget.
            return own_run(salt);
        }
        match fork_child(salt) {
            Forked::Child => return salt,
            Forked::Ended(status) => {
                write_record(&Record::BranchEnded { salt, status });
                // A harness test's child only suspects a failure (see the
                // module docs): the runner replays it.
                let exact = crate::sweep::on_sweep_thread();
                if status != 0 && exact && !crate::settings::SWEEP_KEEP_GOING.is_on() {
                    // The sweep stops at this failure: the job's later
                    // runs would not be reported.
                    end_process(0);
                }
            }
            // This process runs this one; the runner replays the rest.
            Forked::Failed => return own_run(salt),
        }
    }
    own_run(last)
}

/// This process goes on with `salt`: the records that follow are its run's.
fn own_run(salt: u64) -> u64 {
    write_record(&Record::Branched(salt));
    salt
}

/// Whether the runner asked this job to fork no more (`SIM_BRANCH_STOP`:
/// the file exists).
fn stop_asked() -> bool {
    crate::settings::BRANCH_STOP
        .path()
        // The simulator's own real file: never the run's simulated files.
        .is_some_and(|path| crate::outside::outside(|| path.exists()))
}

enum Forked {
    /// This is the child.
    Child,
    /// The child ended with this wait status.
    Ended(i32),
    /// `fork` failed.
    Failed,
}

/// Forks the run of `salt` and, in the parent, waits for it.
fn fork_child(salt: u64) -> Forked {
    // Output buffered now would be written twice.
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let Some(layer) = crate::seams::os_layer() else {
        return Forked::Failed;
    };
    match layer.real_fork() {
        -1 => Forked::Failed,
        0 => {
            become_child(parent, salt);
            Forked::Child
        }
        pid => Forked::Ended(wait_for(pid)),
    }
}

/// The child's first steps: die with its parent, say which run it is, and
/// start its own watchdog.
fn become_child(parent: libc::pid_t, salt: u64) {
    IN_CHILD.store(true, Ordering::Relaxed);
    // SAFETY: prctl with PR_SET_PDEATHSIG and getppid have no memory
    // preconditions; a child whose parent is gone already ends at once.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
    write_record(&Record::Branched(salt));
    crate::sweep::restart_watchdog_in_child();
    END_WITH_THREAD.with(|end| *end.borrow_mut() = Some(EndWithThread));
}

/// In a forked branch run: ends the child when the thread that forked
/// ends. In a test libtest runs once per process, that is how the child
/// ends (the test returned or unwound, and libtest's thread handed its
/// result to a main thread the child does not have). In an in-process
/// sweep the child ends at its seed's record (`child_done`), so this ends
/// it only when the thread unwound before: the child's own watchdog
/// thread would otherwise keep it alive, and its parent waiting, forever.
struct EndWithThread;

impl Drop for EndWithThread {
    fn drop(&mut self) {
        end_process(match CHILD_PANICKED.load(Ordering::Relaxed) {
            true => 101,
            false => 0,
        });
    }
}

thread_local! {
    static END_WITH_THREAD: std::cell::RefCell<Option<EndWithThread>> =
        const { std::cell::RefCell::new(None) };
}

/// Whether this process is a forked branch run of a test libtest runs once
/// per process, whose panics only make the runner replay it.
pub(crate) fn judged_by_panics() -> bool {
    IN_CHILD.load(Ordering::Relaxed) && !crate::sweep::on_sweep_thread()
}

/// A panic began (the panic hook): in a forked branch run, its verdict.
pub(crate) fn note_panic() {
    if IN_CHILD.load(Ordering::Relaxed) {
        CHILD_PANICKED.store(true, Ordering::Relaxed);
    }
}

/// Waits for the child `pid`; its wait status. The watchdog does not time
/// the wait: the child's own watchdog times its run.
fn wait_for(pid: libc::pid_t) -> i32 {
    let paused = crate::watch::pause();
    let mut status = 0;
    // Bounded: each turn is one wait interrupted by a signal.
    loop {
        // SAFETY: `status` is a valid place for waitpid to write.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // No such child: count it as killed.
            status = libc::SIGKILL;
            break;
        }
    }
    crate::watch::resume(paused);
    status
}

/// In a forked branch run whose seed ended with `record`: writes it and
/// ends the child (0 for a pass, 1 for a failure), as the parent expects.
/// Does nothing in any other process.
pub(crate) fn child_done(record: &Record) {
    if !IN_CHILD.load(Ordering::Relaxed) {
        return;
    }
    write_record(record);
    end_process(i32::from(matches!(record, Record::Fail { .. })));
}

fn end_process(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` is always safe to call; what is left to do (the
    // seeds after this one, libtest's report) belongs to another process.
    unsafe { libc::_exit(code) }
}

/// Why this point cannot fork, if it cannot.
fn fork_allowed() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("forking needs Linux".to_string());
    }
    if crate::settings::TRACE.is_set() || crate::settings::SWEEP_TRACE_DIR.is_set() {
        return Err("each run writes a trace file".to_string());
    }
    let others = other_threads()?;
    if others > 0 {
        return Err(format!(
            "{others} other thread{} alive at the point (a std thread, simulated or real), and \
             a child has only the thread that forks",
            if others == 1 { " was" } else { "s were" }
        ));
    }
    Ok(())
}

/// Threads of this process but the calling one and the sweep's own idle
/// ones (libtest's main thread, the sweep's caller, the watchdog).
fn other_threads() -> Result<usize, String> {
    // SAFETY: getpid and gettid have no preconditions.
    let (pid, me) = unsafe { (libc::getpid(), libc::gettid()) };
    let known = [
        me,
        pid,
        SWEEP_CALLER_TID.load(Ordering::Relaxed),
        crate::sweep::watchdog_tid().unwrap_or(0),
    ];
    // The simulator's own real file: never the run's simulated files.
    let tasks = crate::outside::outside(|| std::fs::read_dir("/proc/self/task"))
        .map_err(|e| format!("/proc/self/task cannot be read: {e}"))?;
    let mut others = 0;
    // Bounded by the process's threads.
    for entry in crate::outside::outside(|| tasks.collect::<Vec<_>>()) {
        let entry = entry.map_err(|e| e.to_string())?;
        let tid: i32 = entry.file_name().to_string_lossy().parse().unwrap_or(0);
        if !known.contains(&tid) {
            others += 1;
        }
    }
    Ok(others)
}
