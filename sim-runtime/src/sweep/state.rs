//! What a test process's sweep keeps per thread: a sweep's seed and policy
//! for this thread, the last run's seed and panic, refused escapes, and the
//! stream of draws made before a run.

use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

thread_local! {
    /// The seed every run on this thread takes (a sweep's seed thread).
    pub(crate) static SEED_OVERRIDE: Cell<Option<u64>> = const { Cell::new(None) };
    /// A seed thread's policy, when the sweep decides it: the measuring
    /// run's `random`, or `pct` with the measured horizon.
    pub(crate) static POLICY_OVERRIDE: Cell<Option<crate::config::Policy>> = const { Cell::new(None) };
    /// Whether this thread runs one seed of an in-process sweep.
    pub(crate) static SWEEP_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Escapes refused on this thread since its last run started.
    pub(crate) static ESCAPES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The last panic on this thread, with its location.
    pub(crate) static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The seed of the last run started on this thread.
    pub(crate) static LAST_SEED: Cell<Option<u64>> = const { Cell::new(None) };
    /// Whether this thread's failure has already printed its seed line.
    pub(crate) static SEED_LINE_SHOWN: Cell<bool> = const { Cell::new(false) };
}

thread_local! {
    /// The randomness this thread draws outside any run (see
    /// [`fill_before_run`]), made on first use.
    pub(crate) static BEFORE_RUN: RefCell<Option<crate::rng::Rng>> = const { RefCell::new(None) };
}

/// Fills `buf` for a draw made outside any run, when the thread's seed is
/// known (a sweep's seed thread, or `SIM_SEED`, which `cargo sim test` always
/// sets): a test that draws before its run (`rand::random()` before
/// `Sim::new()`, a `HashMap` made first) replays too. The stream is named
/// after the crate and the thread (the test), so two tests never share it.
/// Returns false when the seed is unknown: the draw is then the OS's.
pub fn fill_before_run(buf: &mut [u8]) -> bool {
    static ENV_SEED: OnceLock<Option<u64>> = OnceLock::new();
    let seed = seed_override().or_else(|| {
        *ENV_SEED.get_or_init(|| {
            crate::settings::SEED
                .value()
                .and_then(|s| crate::config::parse_seed(&s).ok())
        })
    });
    let Some(seed) = seed else { return false };
    BEFORE_RUN
        .try_with(|stream| {
            let mut stream = stream.borrow_mut();
            let stream = stream.get_or_insert_with(|| {
                let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_default();
                let thread = std::thread::current();
                let name = format!("before the run {krate} {}", thread.name().unwrap_or(""));
                crate::rng::Rng::named(seed, &name)
            });
            stream.fill(buf);
        })
        .is_ok()
}

/// The seed an in-process sweep gave this thread, if any.
pub fn seed_override() -> Option<u64> {
    SEED_OVERRIDE.with(Cell::get)
}

/// The policy a sweep decided for this thread's run, if any.
pub fn policy_override() -> Option<crate::config::Policy> {
    POLICY_OVERRIDE.with(Cell::get)
}

/// Records a refused escape: the explanation goes with the failure it
/// causes, in the report and in the test's own failure output.
pub fn note_escape(message: &str) {
    ESCAPES.with(|e| {
        let mut e = e.borrow_mut();
        // Bounded: the first few explain the failure; a loop retrying a
        // refused call must not grow this without end.
        if e.len() < 8 && !e.iter().any(|m| m == message) {
            e.push(message.trim_end().to_string());
        }
    });
}

/// Whether runs print their seed and hash lines as they go (`SIM_VERBOSE`).
pub fn verbose() -> bool {
    static VERBOSE: OnceLock<bool> = OnceLock::new();
    *VERBOSE.get_or_init(|| {
        crate::settings::VERBOSE
            .value()
            .is_some_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no"))
    })
}
