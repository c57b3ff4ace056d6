//! `cargo sim test`: builds the tests as a simulation build and runs every
//! selected test once per seed. One file per phase, in the order they run:
//!
//! 1. [`plan`]: the options resolved: which seeds, for how long, how many
//!    jobs, which share of a partition;
//! 2. [`build`]: the simulation build of the test binaries (the user's lock
//!    swapped out and back), going on past targets that do not compile;
//! 3. [`cases`]: each test of each binary, with its saved seeds first and
//!    its replay line;
//! 4. [`sweep`]: the runs, over `--jobs` processes (`crate::runner`);
//! 5. [`carried`]: a test whose failing seed passes alone carries state
//!    between seeds: its seeds run again, one process each;
//! 6. [`order`]: a failing test's first failing seed runs again in the
//!    order tokio's `current_thread` runtime runs tasks, so the report can
//!    say when the failure needs another order;
//! 7. [`doc`]: the doc tests, through cargo, at one seed;
//! 8. [`summary`]: each failure's report, its seed saved, shrunk, traced
//!    or drawn as asked, the JUnit file and the closing lines.

mod build;
mod carried;
mod cases;
mod doc;
mod no_match;
mod order;
mod plan;
mod summary;
mod sweep;

use crate::cli::TestOptions;
use std::process::ExitCode;

/// Why a phase stopped the command early.
pub(crate) enum Halt {
    /// A signal arrived (Ctrl-C, SIGTERM, SIGHUP): exit as it asks.
    Signal(i32),
    /// An error, printed with cargo sim's prefix; exit 2.
    Error(String),
}

impl From<String> for Halt {
    fn from(message: String) -> Halt {
        Halt::Error(message)
    }
}

/// Stops with the signal that arrived, if one did.
pub(crate) fn check_signal() -> Result<(), Halt> {
    match crate::signals::received() {
        Some(signal) => Err(Halt::Signal(signal)),
        None => Ok(()),
    }
}

/// `cargo sim test`'s arguments as they split (`crate::cli::split_test_args`).
pub(crate) struct TestArgs {
    /// Every argument after `test`, as given.
    pub(crate) raw: Vec<String>,
    /// cargo's (before `--`).
    pub(crate) cargo: Vec<String>,
    /// The test binaries' (after `--`).
    pub(crate) tests: Vec<String>,
}

/// Runs `cargo sim test` with its own options, cargo's arguments and the
/// test binaries'.
pub(crate) fn command(options: TestOptions, args: TestArgs) -> Result<ExitCode, String> {
    if args.cargo.iter().any(|a| a == "--no-run" || a == "--doc") {
        // Build only, or doc tests only (cargo runs those, with SIM_SEED):
        // nothing to sweep.
        let mut argv = vec!["test".to_string()];
        argv.extend(args.raw);
        return crate::passthrough(&argv);
    }
    match phases(options, args.cargo, args.tests) {
        Ok(code) => Ok(code),
        Err(Halt::Signal(signal)) => Ok(crate::exit_for_signal(signal)),
        Err(Halt::Error(message)) => Err(message),
    }
}

fn phases(
    options: TestOptions,
    cargo_args: Vec<String>,
    test_args: Vec<String>,
) -> Result<ExitCode, Halt> {
    let started = std::time::Instant::now();
    let plan = plan::Plan::resolve(options, cargo_args, test_args)?;
    let built = build::build(&plan)?;
    let cases = cases::cases(&plan, &built.binaries)?;
    if cases.is_empty() && !plan.selection.is_empty() && !built.binaries.is_empty() {
        // A filter that matches nothing is a typo, not a pass.
        return Err(Halt::Error(no_match::error(
            &plan.selection,
            &built.binaries,
        )));
    }
    if let Some(note) = no_match::only_whole_binaries(&plan.selection, &built.binaries, &cases) {
        eprintln!("sim: note: {note}");
    }
    let built_in = started.elapsed();
    let mut swept = sweep::sweep(&plan, &built, cases)?;
    let interrupted = crate::signals::received();
    if let Some(signal) = interrupted {
        // The report of what ran, nothing more started (no confirmations,
        // doc tests, shrinks or timelines).
        eprintln!("sim: interrupted by signal {signal}; the report of what ran follows");
    } else if plan.soak.is_none() {
        carried::run_again(&built.binaries, &mut swept)?;
        order::check(&built.binaries, &mut swept);
    }
    swept.show_logs();
    let docs = match interrupted {
        None => doc::run(&plan, &built, &swept.work_dir)?,
        Some(_) => doc::DocTests::default(),
    };
    summary::report(&plan, &built, &swept, &docs, started, built_in)
}
