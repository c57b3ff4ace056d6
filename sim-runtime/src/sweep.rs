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

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::path::PathBuf;
use std::process::{ExitCode, Termination};
use std::sync::{Mutex, Once, OnceLock};
use std::time::Duration;

/// The file a swept test process appends its records to.
pub const OUT_VAR: &str = "SIM_SWEEP_OUT";
/// The seeds of a sweep: comma-separated, in hex.
pub const SEEDS_VAR: &str = "SIM_SWEEP_SEEDS";
/// `1`: run every seed, not only up to the first failure.
pub const KEEP_GOING_VAR: &str = "SIM_SWEEP_KEEP_GOING";
/// A directory where every run of a sweep writes its trace.
pub const TRACE_DIR_VAR: &str = "SIM_SWEEP_TRACE_DIR";
/// The process id of the runner: only its own children report (a test's
/// child processes inherit the variables, and stay out of the records).
pub const PARENT_VAR: &str = "SIM_SWEEP_PARENT";
pub use crate::seed::REPLAY_VAR;
/// `1`: print every run's seed and hash lines, not only a failure's.
pub const VERBOSE_VAR: &str = "SIM_VERBOSE";
/// Harness fault units to leave out (`cargo sim test --shrink`; see
/// `sim_harness::shrink`): `3,7`.
pub const SHRINK_SKIP_VAR: &str = "SIM_SHRINK_SKIP";
/// `1`: every harness link's latency is 0 (a shrunk run).
pub const SHRINK_FAST_LINKS_VAR: &str = "SIM_SHRINK_FAST_LINKS";
/// Where a harness run appends the faults it applied (the shrinker's).
pub const SHRINK_OUT_VAR: &str = "SIM_SHRINK_OUT";
/// Harness fault units applied later, as `<unit>:<ns>,...` (shrinking).
pub const SHRINK_LATER_VAR: &str = "SIM_SHRINK_LATER";
/// Wall-clock seconds one poll may take before it is a hang (default 5).
pub const HANG_POLL_VAR: &str = "SIM_HANG_POLL_S";
/// Wall-clock seconds one run (`block_on`) may take before it is a hang
/// (default 300).
pub const HANG_RUN_VAR: &str = "SIM_HANG_RUN_S";

/// The exit code of a process the watchdog ended.
pub const HANG_EXIT_CODE: i32 = 86;

const DEFAULT_HANG_POLL_S: u64 = 5;
const DEFAULT_HANG_RUN_S: u64 = 300;

pub use crate::failure::{set_failure_class, FailureClass};

thread_local! {
    /// The seed every run on this thread takes (a sweep's seed thread).
    static SEED_OVERRIDE: Cell<Option<u64>> = const { Cell::new(None) };
    /// A seed thread's policy, when the sweep decides it: the measuring
    /// run's `random`, or `pct` with the measured horizon.
    static POLICY_OVERRIDE: Cell<Option<crate::config::Policy>> = const { Cell::new(None) };
    /// Whether this thread runs one seed of an in-process sweep.
    static SWEEP_THREAD: Cell<bool> = const { Cell::new(false) };
    /// Escapes refused on this thread since its last run started.
    static ESCAPES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// The last panic on this thread, with its location.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The seed of the last run started on this thread.
    static LAST_SEED: Cell<Option<u64>> = const { Cell::new(None) };
    /// Whether this thread's failure has already printed its seed line.
    static SEED_LINE_SHOWN: Cell<bool> = const { Cell::new(false) };
}

thread_local! {
    /// The randomness this thread draws outside any run (see
    /// [`fill_before_run`]), made on first use.
    static BEFORE_RUN: RefCell<Option<crate::rng::Rng>> = const { RefCell::new(None) };
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
            std::env::var(crate::config::SEED_VAR)
                .ok()
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

/// PCT's horizon, measured as the reference harness does: seed 0 runs
/// once under the random schedule, and its scheduling decisions times 1.5,
/// at least 100 and at least room for the change points, are the horizon.
/// Fixing the measuring seed keeps a found seed replayable alone: its
/// replay measures the same horizon.
fn measure_pct_horizon<R: Termination + 'static>(depth: u32, body: fn() -> R) -> u64 {
    let measuring = std::thread::Builder::new()
        .name("sim-pct-horizon".to_string())
        .spawn(move || {
            SWEEP_THREAD.with(|s| s.set(true));
            SEED_OVERRIDE.with(|s| s.set(Some(0)));
            POLICY_OVERRIDE.with(|p| p.set(Some(crate::config::Policy::Random)));
            let _ = std::panic::catch_unwind(move || {
                let _ = body();
            });
            crate::summary::last_run().map_or(0, |run| run.decisions)
        })
        .expect("a thread for the horizon's measuring run");
    let decisions = measuring.join().unwrap_or(0);
    crate::config::pct_horizon(decisions, depth)
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
        std::env::var(VERBOSE_VAR).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false" | "no"))
    })
}

// ----- records ------------------------------------------------------------

/// One line of a sweep's result file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// `run_test` took charge of the seeds in this process.
    Sweep,
    /// A seed is about to run.
    Begin(u64),
    /// A runtime (one run) was built with this seed.
    Start(u64),
    /// A seed passed; the hash is its last run's.
    Pass {
        /// The seed.
        seed: u64,
        /// The last run's trace hash.
        hash: String,
    },
    /// A seed failed.
    Fail {
        /// The seed.
        seed: u64,
        /// Why.
        class: FailureClass,
        /// The failure's message.
        message: String,
    },
    /// A run (one runtime or harness) ended.
    Run {
        /// The seed.
        seed: u64,
        /// The run's trace hash.
        hash: String,
        /// Trace events.
        events: u64,
        /// Virtual time at its end, in ns.
        end_ns: u64,
    },
    /// A panic on a test thread outside an in-process sweep.
    Panic {
        /// The seed of the last run on that thread (0 when none ran).
        seed: u64,
        /// The class.
        class: FailureClass,
        /// The message.
        message: String,
    },
    /// The watchdog ended the process.
    Hang {
        /// The seed that was running.
        seed: u64,
        /// What was stuck.
        message: String,
    },
}

use crate::escape::{escape_field, unescape_field};

impl Record {
    /// The record as one line (without the newline).
    pub fn to_line(&self) -> String {
        match self {
            Record::Sweep => "sweep".to_string(),
            Record::Begin(seed) => format!("begin\t{seed:#x}"),
            Record::Start(seed) => format!("start\t{seed:#x}"),
            Record::Pass { seed, hash } => format!("pass\t{seed:#x}\t{hash}"),
            Record::Fail {
                seed,
                class,
                message,
            } => format!(
                "fail\t{seed:#x}\t{}\t{}",
                class.as_str(),
                escape_field(message)
            ),
            Record::Run {
                seed,
                hash,
                events,
                end_ns,
            } => format!("run\t{seed:#x}\t{hash}\t{events}\t{end_ns}"),
            Record::Panic {
                seed,
                class,
                message,
            } => format!(
                "panic\t{seed:#x}\t{}\t{}",
                class.as_str(),
                escape_field(message)
            ),
            Record::Hang { seed, message } => {
                format!("hang\t{seed:#x}\t{}", escape_field(message))
            }
        }
    }

    /// Parses a line written by [`Record::to_line`]; `None` for anything
    /// else (a line cut short by a crash).
    pub fn parse(line: &str) -> Option<Record> {
        let fields: Vec<&str> = line.split('\t').collect();
        let seed = |i: usize| -> Option<u64> { crate::config::parse_seed(fields.get(i)?).ok() };
        let class = |i: usize| FailureClass::parse(fields.get(i)?);
        let text = |i: usize| fields.get(i).map(|f| unescape_field(f));
        Some(match *fields.first()? {
            "sweep" => Record::Sweep,
            "begin" => Record::Begin(seed(1)?),
            "start" => Record::Start(seed(1)?),
            "pass" => Record::Pass {
                seed: seed(1)?,
                hash: text(2)?,
            },
            "fail" => Record::Fail {
                seed: seed(1)?,
                class: class(2)?,
                message: text(3)?,
            },
            "run" => Record::Run {
                seed: seed(1)?,
                hash: text(2)?,
                events: fields.get(3)?.parse().ok()?,
                end_ns: fields.get(4)?.parse().ok()?,
            },
            "panic" => Record::Panic {
                seed: seed(1)?,
                class: class(2)?,
                message: text(3)?,
            },
            "hang" => Record::Hang {
                seed: seed(1)?,
                message: text(2)?,
            },
            _ => return None,
        })
    }
}

fn out_file() -> Option<&'static Mutex<std::fs::File>> {
    static OUT: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    OUT.get_or_init(|| {
        let path = std::env::var_os(OUT_VAR).filter(|p| !p.is_empty())?;
        let parent: u32 = std::env::var(PARENT_VAR).ok()?.trim().parse().ok()?;
        // Safety: getppid has no preconditions.
        if unsafe { libc::getppid() } as u32 != parent {
            return None;
        }
        // Opened before any run, so the real filesystem is reached even
        // when a run's file calls are simulated.
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Some(Mutex::new(file)),
            Err(e) => {
                eprintln!(
                    "sim: cannot open {OUT_VAR}={}: {e}; sweep results are lost",
                    std::path::Path::new(&path).display()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Whether this process reports to a sweep runner.
pub fn reporting() -> bool {
    out_file().is_some()
}

/// Appends `record` to the sweep's result file, if there is one. Each
/// record is one `write` of a whole line, so a crash never tears one.
pub fn write_record(record: &Record) {
    if let Some(file) = out_file() {
        let mut line = record.to_line();
        line.push('\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.write_all(line.as_bytes());
    }
}

// ----- runs: what the runtime reports -------------------------------------

/// A runtime was built with `seed` on this thread.
pub fn run_started(seed: u64) {
    LAST_SEED.with(|s| s.set(Some(seed)));
    SEED_LINE_SHOWN.with(|s| s.set(false));
    ESCAPES.with(|e| e.borrow_mut().clear());
    install_panic_hook();
    if reporting() {
        write_record(&Record::Start(seed));
        start_watchdog();
    }
}

/// A run ended with this summary.
pub fn run_finished(summary: &crate::summary::RunSummary) {
    write_record(&Record::Run {
        seed: summary.seed,
        hash: summary.trace_hash.clone(),
        events: summary.events,
        end_ns: summary.end_ns,
    });
}

/// Where the trace of the `run_index`th run on this thread goes, when a
/// sweep collects traces (`SIM_SWEEP_TRACE_DIR`).
pub fn trace_override(seed: u64, run_index: u64) -> Option<PathBuf> {
    let dir = std::env::var_os(TRACE_DIR_VAR).filter(|d| !d.is_empty())?;
    Some(PathBuf::from(dir).join(format!("{seed:016x}-{run_index}.trace")))
}

// ----- the panic hook -----------------------------------------------------

/// The text of a panic's payload (its message, for `&str` and `String`).
pub fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "Box<dyn Any>".to_string()
    }
}

/// The failure of this thread: its class and a message that carries the
/// explanation of any refused escape.
fn classify(message: String) -> (FailureClass, String) {
    let class = crate::failure::take_failure_class();
    let escapes = ESCAPES.with(|e| e.borrow().clone());
    match class {
        Some(class) => (class, message),
        None if message.contains("sim: escape refused") => (FailureClass::Escape, message),
        None if !escapes.is_empty() => {
            let mut message = message;
            for escape in escapes {
                message.push_str("\n\n");
                message.push_str(&escape);
            }
            (FailureClass::Escape, message)
        }
        None => (FailureClass::Panic, message),
    }
}

fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "an unknown place".to_string());
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("<unnamed>");
            let mut text = format!(
                "thread '{name}' panicked at {location}:\n{}",
                payload_text(info.payload())
            );
            // Inside a run: what happened just before.
            // Inside a run: what happened just before; after one: how the
            // last run on this thread ended.
            let (recent, when) =
                match crate::executor::context::with_current(|core| core.recent_events()) {
                    Some(recent) => (recent, "of the run before it"),
                    None => match crate::executor::context::alive().last() {
                        Some(core) => (core.recent_events(), "of the last run before it"),
                        None => (
                            crate::summary::last_run_recent_events(),
                            "of the last run, as it ended",
                        ),
                    },
                };
            let recent_text = if recent.is_empty() {
                String::new()
            } else {
                format!("\nThe last events {when}:\n  {}", recent.join("\n  "))
            };
            text.push_str(&recent_text);
            previous(info);
            if SWEEP_THREAD.with(Cell::get) {
                // The sweep's record carries it, with the seed; the output
                // (above) goes to the runner's log of this process.
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
                return;
            }
            let Some(seed) = LAST_SEED.with(Cell::get) else {
                return;
            };
            // The failure report of a test shows what it printed: say which
            // seed failed, and why an escape was refused, right there.
            let escapes = ESCAPES.with(|e| e.borrow().clone());
            for escape in &escapes {
                eprintln!("{escape}");
            }
            if !SEED_LINE_SHOWN.with(|s| s.replace(true)) {
                let test = name_of_test(&thread);
                eprintln!(
                    "sim: {}: seed {seed:#x}; replay: {}",
                    test.unwrap_or("main"),
                    crate::seed::replay_command(seed, test)
                );
            }
            if !recent_text.is_empty() {
                eprintln!("{}", recent_text.trim_start());
            }
            if reporting() {
                let class = crate::failure::failure_class().unwrap_or(if escapes.is_empty() {
                    FailureClass::Panic
                } else {
                    FailureClass::Escape
                });
                let mut message = text;
                for escape in &escapes {
                    message.push_str("\n\n");
                    message.push_str(escape);
                }
                write_record(&Record::Panic {
                    seed,
                    class,
                    message,
                });
            }
        }));
    });
}

fn name_of_test(thread: &std::thread::Thread) -> Option<&str> {
    thread.name().filter(|name| *name != "main")
}

// ----- the watchdog -------------------------------------------------------

fn budget(var: &str, default_s: u64) -> Duration {
    let secs = std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(default_s as f64);
    Duration::from_secs_f64(secs)
}

fn start_watchdog() {
    static WATCHDOG: Once = Once::new();
    WATCHDOG.call_once(|| {
        let poll_budget = budget(HANG_POLL_VAR, DEFAULT_HANG_POLL_S);
        let run_budget = budget(HANG_RUN_VAR, DEFAULT_HANG_RUN_S);
        // Started outside any run (or refused inside one, as any thread
        // would be); it reads only the atomics above and real time, so it
        // cannot change what a run does.
        let spawned = std::thread::Builder::new()
            .name("sim-watchdog".into())
            .stack_size(64 * 1024)
            .spawn(move || watchdog(poll_budget, run_budget));
        match spawned {
            Ok(_) => crate::watch::start_watching(),
            Err(e) => eprintln!(
                "sim: the hang watchdog could not start ({e}); a stuck run will not be caught"
            ),
        }
    });
}

fn watchdog(poll_budget: Duration, run_budget: Duration) {
    let tick = Duration::from_millis(50);
    let mut last_polls = u64::MAX;
    let mut last_generation = u64::MAX;
    let mut poll_since = std::time::Instant::now();
    let mut run_since = std::time::Instant::now();
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
        }
        let stuck_poll = in_run && task != u64::MAX && now - poll_since > poll_budget;
        let slow_run = in_run && now - run_since > run_budget;
        if !(stuck_poll || slow_run) {
            continue;
        }
        let who = if task == crate::watch::NO_TASK {
            "no task is being polled".to_string()
        } else if task == 0 {
            "the running task is the test's own future (the root of block_on)".to_string()
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
                "hang: one poll has run for {:.1}s of wall time without returning ({who}). A \
                 loop with no .await, or a blocking call, never gives the scheduler its turn. \
                 The budget is {HANG_POLL_VAR}={}.",
                (now - poll_since).as_secs_f64(),
                poll_budget.as_secs_f64()
            )
        } else {
            format!(
                "hang: the run has taken {:.1}s of wall time ({who}). The budget is \
                 {HANG_RUN_VAR}={}.",
                (now - run_since).as_secs_f64(),
                run_budget.as_secs_f64()
            )
        };
        let seed = watched.seed;
        write_record(&Record::Hang { seed, message });
        // The stuck thread cannot be stopped from here: end the process.
        // Safety: `_exit` is always safe to call.
        unsafe { libc::_exit(HANG_EXIT_CODE) };
    }
}

// ----- in-process sweeps --------------------------------------------------

/// What a `#[should_panic]` attribute asked of a test.
#[derive(Clone, Copy, Debug)]
pub enum ShouldPanic {
    /// No attribute: a panic fails the test.
    No,
    /// `#[should_panic]`, with the `expected` text if given.
    Yes(Option<&'static str>),
}

struct Plan {
    seeds: Vec<u64>,
    keep_going: bool,
}

fn plan() -> Option<Plan> {
    let seeds = std::env::var(SEEDS_VAR).ok().filter(|s| !s.is_empty())?;
    if !reporting() {
        return None;
    }
    let seeds = seeds
        .split(',')
        .map(|s| {
            crate::config::parse_seed(s)
                .unwrap_or_else(|e| panic!("sim: {SEEDS_VAR} holds a bad seed: {e}"))
        })
        .collect();
    let keep_going = std::env::var(KEEP_GOING_VAR).is_ok_and(|v| v == "1");
    Some(Plan { seeds, keep_going })
}

/// Runs a `#[tokio::test]` body: once, or, under a sweep runner, once per
/// seed on a fresh thread each, recording every outcome; then the process
/// ends (the runner reads the records, not libtest's verdict).
///
/// `body` builds the runtime and runs the test's future to completion.
pub fn run_test<R: Termination + 'static>(should_panic: ShouldPanic, body: fn() -> R) -> R {
    let Some(plan) = plan() else {
        return body();
    };
    write_record(&Record::Sweep);
    let name = std::thread::current().name().map(str::to_string);
    // PCT without a given horizon: measure it once for this test.
    let policy = match crate::config::policy_from(&crate::decision::var) {
        Ok(crate::config::Policy::Pct { depth, .. })
            if std::env::var(crate::config::PCT_HORIZON_VAR).is_err() =>
        {
            Some(crate::config::Policy::Pct {
                depth,
                horizon: measure_pct_horizon(depth, body),
            })
        }
        _ => None,
    };
    for &seed in &plan.seeds {
        write_record(&Record::Begin(seed));
        let mut builder = std::thread::Builder::new();
        if let Some(name) = &name {
            builder = builder.name(name.clone());
        }
        let seed_thread = builder.spawn(move || {
            POLICY_OVERRIDE.with(|p| p.set(policy));
            run_seed(seed, should_panic, body)
        });
        let record = match seed_thread.map(|t| t.join()) {
            Ok(Ok(record)) => record,
            Ok(Err(payload)) => Record::Fail {
                seed,
                class: FailureClass::Panic,
                message: format!(
                    "the test thread panicked outside the test: {}",
                    payload_text(&*payload)
                ),
            },
            Err(e) => panic!("sim: cannot start a thread for seed {seed:#x}: {e}"),
        };
        let failed = matches!(record, Record::Fail { .. });
        write_record(&record);
        if failed && !plan.keep_going {
            break;
        }
    }
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(0);
}

fn run_seed<R: Termination>(seed: u64, should_panic: ShouldPanic, body: fn() -> R) -> Record {
    SWEEP_THREAD.with(|s| s.set(true));
    SEED_OVERRIDE.with(|s| s.set(Some(seed)));
    let before = crate::summary::last_run();
    let result = std::panic::catch_unwind(move || body().report() == ExitCode::SUCCESS);
    let hash = crate::summary::last_run()
        .filter(|run| Some(run) != before.as_ref())
        .map(|run| run.trace_hash)
        .unwrap_or_default();
    let panic_text = || {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "the test panicked".to_string())
    };
    match (result, should_panic) {
        (Ok(true), ShouldPanic::No) => Record::Pass { seed, hash },
        (Ok(false), ShouldPanic::No) => {
            let (class, message) = classify(
                "the test returned an error (its Debug form is in the test's output)".to_string(),
            );
            Record::Fail {
                seed,
                class,
                message,
            }
        }
        (Ok(_), ShouldPanic::Yes(_)) => Record::Fail {
            seed,
            class: FailureClass::Panic,
            message: "the test did not panic as #[should_panic] expects".to_string(),
        },
        (Err(payload), ShouldPanic::Yes(expected)) => {
            let text = payload_text(&*payload);
            match expected {
                Some(expected) if !text.contains(expected) => Record::Fail {
                    seed,
                    class: FailureClass::Panic,
                    message: format!(
                        "the test panicked with {text:?}, which does not contain the expected \
                         {expected:?}"
                    ),
                },
                _ => Record::Pass { seed, hash },
            }
        }
        (Err(_), ShouldPanic::No) => {
            let (class, message) = classify(panic_text());
            Record::Fail {
                seed,
                class,
                message,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_a_line() {
        let records = [
            Record::Sweep,
            Record::Begin(0x2a),
            Record::Start(0x2b),
            Record::Pass {
                seed: 1,
                hash: "ab".into(),
            },
            Record::Fail {
                seed: u64::MAX,
                class: FailureClass::Deadlock,
                message: "two\nlines\twith \\ tab".into(),
            },
            Record::Run {
                seed: 3,
                hash: "cd".into(),
                events: 12,
                end_ns: 7,
            },
            Record::Panic {
                seed: 4,
                class: FailureClass::Escape,
                message: "x".into(),
            },
            Record::Hang {
                seed: 5,
                message: "stuck".into(),
            },
        ];
        for record in records {
            let line = record.to_line();
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(Record::parse(&line), Some(record));
        }
        assert_eq!(Record::parse("fail\t0x1"), None);
        assert_eq!(Record::parse(""), None);
    }

    #[test]
    fn every_class_has_a_name_that_parses_back() {
        for name in [
            "panic",
            "deadlock",
            "time-limit",
            "step-limit",
            "livelock",
            "hang",
            "escape",
            "crash",
            "nondeterminism",
            "correctness",
            "liveness",
        ] {
            assert_eq!(FailureClass::parse(name).unwrap().as_str(), name);
        }
    }
}
