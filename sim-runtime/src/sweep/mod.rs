//! Seed sweeps: what a test process does when `cargo sim test` runs it.
//!
//! `cargo sim test` (the runner in `cargo-sim/`) starts a test binary for one
//! test at a time with these variables set:
//!
//! - `SIM_SWEEP_OUT`: a file this process appends result records to, one
//!   per line (see [`Record`]). The runner reads it while the process runs
//!   and after it exits, so a record written before a crash survives it.
//! - `SIM_SWEEP_SEEDS`: the seeds to run, comma-separated hex.
//! - `SIM_SWEEP_KEEP_GOING`: `1` to run every seed instead of stopping at
//!   the first failure.
//! - `SIM_SWEEP_TRACE_DIR`: write every run's trace into this directory (the
//!   determinism check compares two of them).
//! - `SIM_SWEEP_PORTFOLIO`: `1` when each seed's policy comes from the
//!   portfolio (`portfolio.rs`).
//!
//! A `#[tokio::test]` expands to a call of [`run_test`]: with the variables
//! set, it runs the body once per seed in this process, each on a fresh
//! thread (so thread-locals, std's `HashMap` keys and rand's `ThreadRng`,
//! start as they would in a fresh process) and records each outcome. Any
//! other test (a plain `#[test]` that builds a runtime or a harness `Sim`)
//! runs once per process with `SIM_SEED`; its runs and panics are recorded
//! by [`run_started`], [`run_finished`] and the panic hook.
//!
//! A watchdog thread (started with the first run of such a process) catches
//! what no seed-driven limit can: one poll that never returns (a loop with
//! no `.await`, a blocking call) and a run that takes too long in wall time.
//! It records a `hang`, naming the task being polled and where it was
//! spawned, and ends the process.
//!
//! The same module classifies failures ([`FailureClass`]) and remembers
//! refused escapes, so that a test's failure message explains them.
//!
//! The files: `vars.rs` (the variables), `record.rs` (the records),
//! `portfolio.rs` (the policy each seed of a sweep runs under),
//! `run.rs` (`run_test`), `panic.rs` (the panic hook), `watchdog.rs` (the
//! hang watchdog) and `state.rs` (what each thread keeps).

mod abort;
mod panic;
pub mod portfolio;
mod record;
mod run;
mod state;
mod vars;
mod watchdog;

pub use crate::failure::{set_failure_class, FailureClass};
pub use crate::seed::REPLAY_VAR;
pub use panic::payload_text;
pub use record::{reporting, write_record, Record, SiteRecord};
pub use run::{decode_seeds, encode_items, encode_seeds, run_test, SeedItem, ShouldPanic};
pub use state::{fill_before_run, note_escape, policy_override, seed_override, verbose};
pub use vars::{
    DEFAULT_HANG_RUN_S, HANG_EXIT_CODE, HANG_POLL_VAR, HANG_RUN_VAR, KEEP_GOING_VAR, OUT_VAR,
    PARENT_VAR, SEEDS_VAR, SHRINK_DRAWS_OUT_VAR, SHRINK_FAST_LINKS_VAR, SHRINK_LATER_VAR,
    SHRINK_OUT_VAR, SHRINK_SKIP_VAR, TRACE_DIR_VAR, TRACE_NAMED_VAR, VERBOSE_VAR,
};

use crate::property::site::Reached;
use abort::install_abort_report;
use panic::install_panic_hook;
use state::{ESCAPES, LAST_SEED, SEED_LINE_SHOWN};
use std::path::PathBuf;
use watchdog::start_watchdog;

/// Whether the calling thread runs one seed of an in-process sweep.
pub(crate) fn on_sweep_thread() -> bool {
    state::SWEEP_THREAD.with(std::cell::Cell::get)
}

pub(crate) use watchdog::{restart_in_child as restart_watchdog_in_child, watchdog_tid};

/// The run's seed line was printed (its start announced it): a failure
/// does not print it again.
pub fn seed_line_shown() {
    SEED_LINE_SHOWN.with(|s| s.set(true));
}

/// A runtime was built with `seed` on this thread.
pub fn run_started(seed: u64) {
    LAST_SEED.with(|s| s.set(Some(seed)));
    SEED_LINE_SHOWN.with(|s| s.set(false));
    ESCAPES.with(|e| e.borrow_mut().clear());
    install_panic_hook();
    install_abort_report();
    if reporting() {
        declare_properties();
        write_record(&Record::Start(seed));
        start_watchdog();
    }
}

/// A run ended with this summary, having reached these properties.
pub fn run_finished(summary: &crate::summary::RunSummary, properties: &[Reached]) {
    for reached in properties {
        write_record(&Record::Property {
            seed: summary.seed,
            site: SiteRecord::of(reached.site),
            held: reached.held,
            broken: reached.broken,
            fresh: reached.fresh,
        });
    }
    write_record(&Record::Run {
        seed: summary.seed,
        hash: summary.trace_hash.clone(),
        events: summary.events,
        end_ns: summary.end_ns,
    });
}

/// Once per process, before its first run's records: every property site
/// of the binary, so the runner knows the ones no run reaches.
fn declare_properties() {
    static DECLARED: std::sync::Once = std::sync::Once::new();
    DECLARED.call_once(|| {
        for site in crate::property::sites() {
            write_record(&Record::Declare(SiteRecord::of(site)));
        }
    });
}

/// Where the trace of the `run_index`th run on this thread goes, when a
/// sweep collects traces (`SIM_SWEEP_TRACE_DIR`).
pub fn trace_override(seed: u64, run_index: u64) -> Option<PathBuf> {
    let dir = crate::settings::SWEEP_TRACE_DIR.path()?;
    if crate::settings::SWEEP_TRACE_NAMED.is_on() {
        let thread = std::thread::current();
        let test = thread.name().filter(|name| *name != "main");
        return Some(dir.join(trace_file_name(test, seed, run_index)));
    }
    Some(dir.join(format!("{seed:016x}-{run_index}.trace")))
}

/// The name `cargo sim test --trace` gives the `run_index`th run of `test`
/// (`None`: a binary run whole) at `seed`: `<test>-<seed>.trace`, and
/// `<test>-<seed>.<n>.trace` for a test's later runs.
pub fn trace_file_name(test: Option<&str>, seed: u64, run_index: u64) -> String {
    let test = crate::trace::file_name_part(test.unwrap_or("main"));
    match run_index {
        0 | 1 => format!("{test}-{seed:#x}.trace"),
        n => format!("{test}-{seed:#x}.{n}.trace"),
    }
}

#[cfg(test)]
mod tests;
