//! What the executor is doing right now, for a watchdog on another thread.
//!
//! The executor publishes each run and each poll here with relaxed stores;
//! the hang watchdog (`sweep.rs`, above the core) reads them with real time beside it.
//! Nothing here feeds back into a run, so watching cannot change one.
//! Until a watchdog calls [`start_watching`], a poll pays one load.

use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// Incremented at every `block_on` start: the watchdog sees a new run.
static RUN_GENERATION: AtomicU64 = AtomicU64::new(0);
/// Whether a `block_on` is in progress.
static IN_RUN: AtomicBool = AtomicBool::new(false);
/// The seed of the run in progress.
static RUN_SEED: AtomicU64 = AtomicU64::new(0);
/// Whether a watchdog runs in this process.
static WATCHED: AtomicBool = AtomicBool::new(false);
/// Counts polls: the watchdog sees progress.
static POLLS: AtomicU64 = AtomicU64::new(0);
/// The task being polled (0 for a root future), or [`NO_TASK`].
static POLL_TASK: AtomicU64 = AtomicU64::new(NO_TASK);
/// Where the task being polled was spawned (null for a root future).
static POLL_SITE: AtomicPtr<Location<'static>> = AtomicPtr::new(std::ptr::null_mut());
/// The virtual time of the run in progress, in ns, as of its last move.
static VIRTUAL_NS: AtomicU64 = AtomicU64::new(0);

/// What [`Snapshot::task`] holds between polls.
pub const NO_TASK: u64 = u64::MAX;

/// A `block_on` of the run with `seed` starts (returns the previous state,
/// for [`block_on_ended`]).
#[inline]
pub fn block_on_started(seed: u64, now_ns: u64) -> bool {
    RUN_SEED.store(seed, Ordering::Relaxed);
    VIRTUAL_NS.store(now_ns, Ordering::Relaxed);
    RUN_GENERATION.fetch_add(1, Ordering::Relaxed);
    IN_RUN.swap(true, Ordering::Relaxed)
}

/// The `block_on` ended; `previous` is what [`block_on_started`] returned.
#[inline]
pub fn block_on_ended(previous: bool) {
    IN_RUN.store(previous, Ordering::Relaxed);
}

/// The run waits on something outside the simulation (a forked branch
/// run, `property::fork`): the watchdog times nothing until [`resume`],
/// given what this returned.
pub fn pause() -> bool {
    IN_RUN.swap(false, Ordering::Relaxed)
}

/// The wait [`pause`] began is over: the watchdog times the run afresh.
pub fn resume(paused: bool) {
    RUN_GENERATION.fetch_add(1, Ordering::Relaxed);
    IN_RUN.store(paused, Ordering::Relaxed);
}

/// A poll of `task` (0: the root future) starts. Plain stores: this is on
/// the hot path.
#[inline]
pub fn poll_started(task: u64, site: Option<&'static Location<'static>>) {
    if !WATCHED.load(Ordering::Relaxed) {
        return;
    }
    POLLS.store(
        POLLS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
    POLL_SITE.store(
        site.map_or(std::ptr::null_mut(), |s| s as *const _ as *mut _),
        Ordering::Relaxed,
    );
    POLL_TASK.store(task, Ordering::Relaxed);
}

/// The poll that [`poll_started`] announced returned.
#[inline]
pub fn poll_finished() {
    if !WATCHED.load(Ordering::Relaxed) {
        return;
    }
    POLL_TASK.store(NO_TASK, Ordering::Relaxed);
}

/// The task being polled now, to give back to [`turn_ended`].
#[derive(Clone, Copy, Debug)]
pub struct Turn {
    task: u64,
    site: *mut Location<'static>,
}

/// A poll hands the turn to the simulated thread of `task` from inside
/// itself (a blocking call on the simulator's thread runs the other
/// threads until it may return): until [`turn_ended`], the watchdog sees
/// that thread as the running task, not the poll that handed it the turn
/// (which a thread that spins without a blocking call would otherwise be
/// blamed for).
#[inline]
pub fn turn_started(task: u64) -> Turn {
    let previous = Turn {
        task: POLL_TASK.load(Ordering::Relaxed),
        site: POLL_SITE.load(Ordering::Relaxed),
    };
    poll_started(task, None);
    previous
}

/// The turn [`turn_started`] announced came back: the poll that handed it
/// out is the running task again.
#[inline]
pub fn turn_ended(previous: Turn) {
    if !WATCHED.load(Ordering::Relaxed) {
        return;
    }
    POLL_SITE.store(previous.site, Ordering::Relaxed);
    POLL_TASK.store(previous.task, Ordering::Relaxed);
}

/// The run's virtual clock moved to `now_ns`.
#[inline]
pub fn clock_moved(now_ns: u64) {
    if WATCHED.load(Ordering::Relaxed) {
        VIRTUAL_NS.store(now_ns, Ordering::Relaxed);
    }
}

/// A watchdog watches from now on: polls are published.
pub fn start_watching() {
    WATCHED.store(true, Ordering::Relaxed);
}

/// What the watchdog reads at one tick.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// Polls so far (wrapping).
    pub polls: u64,
    /// Runs started so far (wrapping).
    pub generation: u64,
    /// Whether a `block_on` is in progress.
    pub in_run: bool,
    /// The task being polled, or [`NO_TASK`].
    pub task: u64,
    /// Where that task was spawned, when known.
    pub site: Option<&'static Location<'static>>,
    /// The seed of the run in progress.
    pub seed: u64,
    /// Its virtual time, in ns, as of the clock's last move.
    pub virtual_ns: u64,
}

/// Reads the published state.
pub fn snapshot() -> Snapshot {
    let site = POLL_SITE.load(Ordering::Relaxed);
    Snapshot {
        polls: POLLS.load(Ordering::Relaxed),
        generation: RUN_GENERATION.load(Ordering::Relaxed),
        in_run: IN_RUN.load(Ordering::Relaxed),
        task: POLL_TASK.load(Ordering::Relaxed),
        // SAFETY: the pointer is null or came from a `&'static Location`.
        site: (!site.is_null()).then(|| unsafe { &*site }),
        seed: RUN_SEED.load(Ordering::Relaxed),
        virtual_ns: VIRTUAL_NS.load(Ordering::Relaxed),
    }
}

/// Where simulated threads were spawned (`std::thread::spawn` in the
/// user's code, or a library's), by the run's seed and the thread's task:
/// a report on that task names this place rather than the simulator's own
/// spawn of it. Captured unresolved (cheap); resolved only for a report.
/// Bounded: the last `THREAD_SITES_MAX` threads.
static THREAD_SITES: std::sync::Mutex<std::collections::VecDeque<ThreadSite>> =
    std::sync::Mutex::new(std::collections::VecDeque::new());

/// How many threads' spawn sites are kept.
const THREAD_SITES_MAX: usize = 256;

struct ThreadSite {
    seed: u64,
    task: u64,
    backtrace: std::sync::Arc<std::backtrace::Backtrace>,
}

/// A simulated thread's task `task` was spawned by the code on `backtrace`.
pub fn thread_spawned(task: u64, backtrace: std::backtrace::Backtrace) {
    let seed = RUN_SEED.load(Ordering::Relaxed);
    let mut sites = THREAD_SITES.lock().unwrap_or_else(|e| e.into_inner());
    if sites.len() == THREAD_SITES_MAX {
        sites.pop_front();
    }
    sites.push_back(ThreadSite {
        seed,
        task,
        backtrace: std::sync::Arc::new(backtrace),
    });
}

/// Where the simulated thread of task `task` in the run with `seed` was
/// spawned: the first frame of the spawning stack in the user's code (a
/// dependency's when none is the user's), as `file:line:col`.
pub fn thread_site(seed: u64, task: u64) -> Option<String> {
    let backtrace = {
        let sites = THREAD_SITES.lock().unwrap_or_else(|e| e.into_inner());
        sites
            .iter()
            .rev()
            .find(|s| s.seed == seed && s.task == task)?
            .backtrace
            .clone()
    };
    user_frame(&backtrace.to_string())
}

/// The first frame of a backtrace's text in the user's code (a
/// dependency's when none is the user's), as `file:line:col`: not std's,
/// not the simulator's, never a C frame.
pub fn user_frame(text: &str) -> Option<String> {
    // std prints a path under the current directory as `./...`: a test of
    // `sim-os` itself runs in `sim-os/`, where the simulator's frames read
    // `./src/...`. They are told apart by their full path.
    let cwd = std::env::current_dir().unwrap_or_default();
    let full = |at: &str| match at.strip_prefix("./") {
        Some(relative) => cwd.join(relative).to_string_lossy().into_owned(),
        None => at.to_string(),
    };
    let frames: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("at "))
        .filter(|at| {
            let file = at.rsplitn(3, ':').last().unwrap_or(at);
            let path = full(at);
            !(at.starts_with("/rustc/")
                || at.contains("/library/std/")
                || at.contains("/library/core/")
                || at.contains("/library/alloc/")
                || ["sim-os/src/", "sim-runtime/src/", "sim-tokio/src/"]
                    .iter()
                    .any(|own| path.contains(own))
                || [".c", ".S", ".h"].iter().any(|ext| file.ends_with(ext)))
        })
        .collect();
    frames
        .iter()
        .find(|at| !at.contains("/.cargo/registry/"))
        .or(frames.first())
        .map(|at| at.to_string())
}

/// The story of the run in progress, for the watchdog's hang report.
static STORY: std::sync::Mutex<Option<crate::story::WatchedStory>> = std::sync::Mutex::new(None);

/// A run starts: the watchdog may tell its story (when one watches).
pub(crate) fn run_story(story: &crate::story::SharedStory) {
    if WATCHED.load(Ordering::Relaxed) {
        let mut slot = STORY
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *slot = Some(story.watched());
    }
}

/// The story of the run in progress (empty when none is known, or when
/// its writer stays inside it: a poll stuck inside the story's own code).
/// It freezes the story: the process ends after the report.
pub(crate) fn story_text() -> String {
    let slot = STORY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    slot.as_ref()
        .and_then(|story| story.freeze_and_read(|story| story.report(None)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::user_frame;

    #[test]
    fn the_user_frame_skips_the_simulator_and_std() {
        let text = "   0: std::backtrace\n             at /rustc/abc/library/std/src/backtrace.rs:1:2\n   1: sim_os::threads::spawn\n             at /work/sim-os/src/threads/mod.rs:329:48\n   2: threads::test\n             at /work/sim-os/tests/threads.rs:259:35\n";
        assert_eq!(
            user_frame(text).as_deref(),
            Some("/work/sim-os/tests/threads.rs:259:35")
        );
    }

    #[test]
    fn a_path_under_the_current_directory_is_told_apart_by_its_full_path() {
        // A test of the simulator's own crate runs in its directory, where
        // std prints the simulator's frames as `./src/...`.
        // cargo runs a package's tests in the package's directory.
        assert!(std::env::current_dir().unwrap().ends_with("sim-runtime"));
        let text = "   1: sim_runtime::spawn\n             at ./src/executor/mod.rs:10:5\n   2: user::test\n             at ./tests/user.rs:7:9\n";
        assert_eq!(user_frame(text).as_deref(), Some("./tests/user.rs:7:9"));
    }
}
