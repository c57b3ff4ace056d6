//! What tasks wait on, and lock cycles.
//!
//! A task that starts waiting for a `Mutex` or an `RwLock` is registered
//! here with where it waits (the first frame of the stack outside the
//! facade and the standard library, captured when it starts to wait).
//! Right after that poll, the tasks that block it are looked at: the
//! lock's holders and the waiters queued ahead. When every one of them is
//! itself parked on such a lock, and so on until the chain closes, and no
//! task in it can be woken by anything else (each one's only live waker
//! clones are its lock waits), the run fails at once with class
//! `deadlock`, naming each task, the lock it waits for, where, and who
//! holds it, even while other tasks and timers go on.
//!
//! The registry also answers the runtime's end-of-run reports ("waits for
//! `Mutex<u64>` #2 at src/db.rs:40:9, held by task 3").

use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// What the registry asks of a lock (the semaphore under a `Mutex` or an
/// `RwLock`) to follow a chain of waits.
pub(crate) trait WaitedLock {
    /// The tasks that hold the lock and those queued ahead of `waiter`,
    /// and whether the free permits would serve `waiter` now.
    fn blockers(&self, waiter: u64) -> (Vec<u64>, bool);
    /// The waker `waiter` keeps, for telling whose it is.
    fn waiter_waker(&self, waiter: u64) -> Option<std::task::Waker>;
}

/// A lock's address, which numbers it in reports.
fn address(sem: *const dyn WaitedLock) -> usize {
    sem.cast::<()>() as usize
}

/// A registered lock wait; dropping it does not unregister (see
/// [`lock_wait_done`]).
pub(crate) struct WaitToken(u64);

struct LockWait {
    task: u64,
    /// The lock's semaphore. Valid while the wait is registered: the
    /// waiting future borrows (or, for owned guards, keeps alive) the lock,
    /// and unregisters before it goes.
    sem: *const dyn WaitedLock,
    waiter: u64,
    kind: &'static str,
    what: &'static str,
    needed: usize,
    at: Backtrace,
}

#[derive(Default)]
struct Registry {
    waits: RefCell<BTreeMap<u64, LockWait>>,
    next_token: Cell<u64>,
    /// Locks by address -> the number reports give them, in the order
    /// they were first waited for (addresses are looked up, never listed).
    numbers: RefCell<BTreeMap<usize, u64>>,
    describer_set: Cell<bool>,
}

fn registry() -> Option<Rc<Registry>> {
    sim_runtime::context::with_current(|core| core.extension(Registry::default))
}

/// Registers the current task's wait for `sem` (its queue entry
/// `waiter`), and checks for a cycle right after this poll.
pub(crate) fn lock_wait(
    sem: &(dyn WaitedLock + 'static),
    waiter: u64,
    kind: &'static str,
    what: &'static str,
    needed: usize,
) -> Option<WaitToken> {
    let registry = registry()?;
    let task = sim_runtime::context::with_current(|core| core.current_task())?;
    if task == 0 {
        // The root future is not a task: its waits are not tracked.
        return None;
    }
    let token = registry.next_token.get() + 1;
    registry.next_token.set(token);
    {
        let mut numbers = registry.numbers.borrow_mut();
        let next = numbers.len() as u64 + 1;
        numbers.entry(address(sem)).or_insert(next);
    }
    registry.waits.borrow_mut().insert(
        token,
        LockWait {
            task,
            sem,
            waiter,
            kind,
            what,
            needed,
            at: Backtrace::force_capture(),
        },
    );
    sim_runtime::context::with_current(|core| {
        if !registry.describer_set.replace(true) {
            let weak = Rc::downgrade(&registry);
            core.set_wait_describer(Rc::new(move |task| {
                weak.upgrade().and_then(|r| r.describe(task))
            }));
        }
        core.defer(Box::new(move || check(task)));
    });
    Some(WaitToken(token))
}

/// The wait is over (the lock was taken, or the future dropped).
pub(crate) fn lock_wait_done(token: &mut Option<WaitToken>) {
    if let Some(WaitToken(token)) = token.take() {
        if let Some(registry) = registry() {
            registry.waits.borrow_mut().remove(&token);
        }
    }
}

/// The first frame of `bt` that is the user's code: not the standard
/// library, not this facade or the simulator, not the async machinery.
fn user_frame(bt: &Backtrace) -> Option<String> {
    let text = bt.to_string();
    let own = [
        env!("CARGO_MANIFEST_DIR"),
        concat!(env!("CARGO_MANIFEST_DIR"), "/../sim-runtime"),
    ];
    let own_rel = ["sim-tokio/src/", "sim-runtime/src/"];
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("at "))
        .find(|location| {
            // A frame of C (libc's thread start, in a build without line
            // tables for the user's code) is never the place to name.
            let file = location.rsplitn(3, ':').last().unwrap_or(location);
            let c_source = [".c", ".S", ".s", ".h"]
                .iter()
                .any(|ext| file.ends_with(ext));
            !c_source
                && !location.starts_with("/rustc/")
                && !location.contains("/library/core/")
                && !location.contains("/library/std/")
                && !own.iter().any(|dir| location.starts_with(dir))
                && !own_rel.iter().any(|dir| location.starts_with(dir))
        })
        .map(|location| {
            // A workspace member's frames are relative to its package
            // (where `cargo test` runs it): make them whole.
            match (
                location.strip_prefix("./"),
                std::env::var("CARGO_MANIFEST_DIR"),
            ) {
                (Some(rest), Ok(dir)) => format!("{dir}/{rest}"),
                _ => location.to_string(),
            }
        })
}

impl Registry {
    fn number(&self, sem: *const dyn WaitedLock) -> u64 {
        self.numbers
            .borrow()
            .get(&address(sem))
            .copied()
            .unwrap_or(0)
    }

    fn lock_name(&self, wait: &LockWait) -> String {
        let mode = match (wait.kind, wait.needed) {
            ("RwLock", 1) => " (to read)",
            ("RwLock", _) => " (to write)",
            _ => "",
        };
        let short = wait
            .what
            .replace("tokio::sync::mutex::", "")
            .replace("tokio::sync::rwlock::", "");
        format!("{short} #{}{mode}", self.number(wait.sem))
    }

    fn describe(&self, task: u64) -> Option<String> {
        let waits = self.waits.borrow();
        let mine: Vec<&LockWait> = waits.values().filter(|w| w.task == task).collect();
        if mine.is_empty() {
            return None;
        }
        let parts: Vec<String> = mine
            .iter()
            .map(|w| {
                // SAFETY: a registered wait's semaphore is alive (see
                // `LockWait::sem`).
                let (blockers, _) = unsafe { &*w.sem }.blockers(w.waiter);
                let at = user_frame(&w.at).map_or(String::new(), |at| format!(" at {at}"));
                let held = if blockers.is_empty() {
                    String::new()
                } else {
                    let names: Vec<String> = blockers.iter().map(|t| format!("task {t}")).collect();
                    format!(", held (or next in line) by {}", names.join(", "))
                };
                format!("for {}{at}{held}", self.lock_name(w))
            })
            .collect();
        Some(parts.join("; and "))
    }
}

/// Looks for a knot of lock waits through `start`, and fails the run on
/// one.
fn check(start: u64) {
    let Some(registry) = registry() else { return };
    let Some(cycle) =
        sim_runtime::context::with_current(|core| knot(&registry, core, start)).flatten()
    else {
        return;
    };
    sim_runtime::context::with_current(|core| {
        let mut report = format!(
            "sim: deadlock: tasks wait for each other's locks, so none of them can ever go on \
             (virtual time {:?}, seed {:#x}):\n",
            std::time::Duration::from_nanos(core.now_ns()),
            core.config().seed
        );
        for task in &cycle {
            report.push_str(&format!(
                "  {}\n    waits {}\n",
                core.describe_task(*task),
                registry.describe(*task).unwrap_or_default()
            ));
        }
        report.push_str(
            "Other tasks and timers may still run, but none of them holds these locks. Take \
             the locks in one order everywhere, or hold one at a time.",
        );
        core.fail_run(sim_runtime::sweep::FailureClass::Deadlock, report);
    });
}

/// The tasks of a knot through `start`: each is parked, can be woken only
/// through its lock waits, and each task blocking one of those waits is in
/// the knot too. `None` when some task in the chain could still run.
fn knot(registry: &Registry, core: &sim_runtime::Core, start: u64) -> Option<Vec<u64>> {
    let waits = registry.waits.borrow();
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut stack = vec![start];
    // Bounded by the number of registered waits: each task is expanded once.
    while let Some(task) = stack.pop() {
        if !seen.insert(task) {
            continue;
        }
        order.push(task);
        let mine: Vec<&LockWait> = waits.values().filter(|w| w.task == task).collect();
        if mine.is_empty() {
            return None;
        }
        // Parked, and woken by nothing but these waits.
        let clones = core.parked_wakers(task)?;
        if clones as usize != mine.len() {
            return None;
        }
        for wait in mine {
            // SAFETY: see `LockWait::sem`.
            let sem = unsafe { &*wait.sem };
            // A combinator's waker in the queue: it may wake for others.
            if !sem
                .waiter_waker(wait.waiter)
                .is_some_and(|w| core.is_own_waker(task, &w))
            {
                return None;
            }
            let (blockers, free) = sem.blockers(wait.waiter);
            if free || blockers.is_empty() {
                return None;
            }
            stack.extend(blockers);
        }
    }
    order.sort_unstable();
    Some(order)
}
