//! What a test process wrote, and what it comes to: its records read as
//! they grow, each applied to its test (a seed's outcome, a branch run's,
//! properties, hashes), the determinism check of a seed run again, and the
//! outcome of a process that died.

use super::branch::last_salt;
use super::{Job, JobKind, Mode, Outcome, SweepConfig, TestState};
use crate::explore::BranchFailure;
use crate::process::{signal_name, tail, tail_of};
use crate::properties::Seen;
use sim_runtime::property::branch::Plan;
use sim_runtime::sweep::{FailureClass, Record};
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Instant;

/// Where a test's traces go for the determinism check: the sweep's run
/// (`a`) and the fresh process's (`b`).
pub(super) fn trace_dir(config: &SweepConfig, test: usize, check: bool) -> PathBuf {
    config
        .work_dir
        .join("traces")
        .join(format!("{test}-{}", if check { "b" } else { "a" }))
}

pub(super) fn read_records(job: &mut Job, state: &mut TestState, config: &SweepConfig) {
    let Ok(mut file) = std::fs::File::open(&job.out) else {
        return;
    };
    if file.seek(SeekFrom::Start(job.offset)).is_err() {
        return;
    }
    let mut text = String::new();
    let Ok(read) = file.read_to_string(&mut text) else {
        return;
    };
    job.offset += read as u64;
    if read > 0 {
        job.progress_at = Instant::now();
    }
    job.partial.push_str(&text);
    // Bounded by the bytes read: each pass consumes one whole line.
    while let Some(end) = job.partial.find('\n') {
        let line: String = job.partial.drain(..=end).collect();
        let Some(record) = Record::parse(line.trim_end_matches('\n')) else {
            continue;
        };
        apply(job, state, record, config);
    }
}

pub(super) fn seed_position(job: &Job, state: &TestState, seed: u64, from: usize) -> Option<usize> {
    // Bounded by the job's seeds; records come in order, so the search
    // ends at once.
    (from..job.seeds.len()).find(|&p| {
        job.seeds
            .get(p)
            .is_some_and(|i| state.result.case.seeds.get(i) == seed)
    })
}

pub(super) fn apply(job: &mut Job, state: &mut TestState, record: Record, config: &SweepConfig) {
    match record {
        Record::Sweep => {
            job.saw_sweep = true;
            if job.kind == JobKind::Probe {
                state.result.mode = Mode::InProcess;
                state.probing = false;
            }
        }
        Record::Begin(seed) => {
            let from = job.position.map_or(0, |p| p + 1);
            job.position = seed_position(job, state, seed, from);
            job.run_hashes.clear();
            job.seen = Seen::default();
        }
        Record::Start(_) => job.runs_started += 1,
        Record::Declare(site) => state.result.properties.declare(site),
        Record::Property {
            seed,
            site,
            held,
            broken,
            fresh,
        } => job.seen.reached(site, held, broken, fresh, seed),
        Record::Run { hash, .. } => {
            job.seen.run_ended();
            // Bounded: a test that runs thousands of simulations per seed
            // keeps the first 64 hashes, plenty to compare two processes.
            if job.run_hashes.len() < 64 {
                job.run_hashes.push(hash);
            }
        }
        Record::Pass { .. } | Record::Fail { .. } => seed_ended(job, state, record, config),
        // A refused escape is the cause of what fails after it: it stays.
        Record::Panic { class, message, .. } => {
            if job
                .last_panic
                .as_ref()
                .is_none_or(|(kept, _)| *kept != FailureClass::Escape)
            {
                job.last_panic = Some((class, message));
            }
        }
        Record::Hang { message, .. } => job.hang = Some(message),
        Record::Unforked(why) => {
            let explorer = &mut state.result.explorer;
            explorer.unforked += job.batch.len() as u64;
            explorer.unforked_why.get_or_insert(why);
        }
        Record::Branched(salt) => {
            // The batch's last run is the process's own; after children
            // (runs that started before it), it too costs only its suffix.
            let own = job.batch.last().is_some_and(|p| last_salt(p) == salt);
            if own && !job.branched.is_empty() {
                state.result.explorer.forked += 1;
            }
            branch_started(job, salt);
        }
        Record::BranchEnded { status, .. } if !job.saw_sweep => {
            per_process_child_ended(job, state, status, config);
        }
        Record::BranchEnded { status, .. } => forked_child_ended(job, state, status, config),
    }
}

/// A seed's end record (`Pass` or `Fail`): the determinism check's, or
/// the seed's outcome.
fn seed_ended(job: &mut Job, state: &mut TestState, record: Record, config: &SweepConfig) {
    let Some(index) = job.position.and_then(|p| job.seeds.get(p)) else {
        return;
    };
    let hashes = std::mem::take(&mut job.run_hashes);
    if job.kind == JobKind::Check {
        check(state, index, hashes, config);
        return;
    }
    let failing = matches!(record, Record::Fail { .. });
    // A seed's hashes are kept only where they are read again (the
    // determinism check, a failure's report): a sweep of millions
    // of seeds holds a few bytes per passing seed.
    let keep = config.check_determinism || failing;
    let outcome = match record {
        Record::Pass { .. } if keep => Outcome::Pass(hashes.clone()),
        Record::Pass { .. } => Outcome::Pass(Vec::new()),
        // The log's tail now is this seed's output: its process
        // stops at a failure unless every seed counts.
        Record::Fail { class, message, .. } => Outcome::Fail {
            class,
            message,
            output: tail(&job.log, 40),
        },
        _ => unreachable!("matched above"),
    };
    if keep {
        state.swept_hashes.insert(index, hashes);
    }
    settle(job, state, index, outcome, config);
}

/// A forked branch run of an in-process sweep ended with wait `status`.
fn forked_child_ended(job: &mut Job, state: &mut TestState, status: i32, config: &SweepConfig) {
    state.result.explorer.forked += 1;
    // A child that ended without its seed's record died.
    let index = job.position.and_then(|p| job.seeds.get(p));
    if let (false, Some(index)) = (job.settled, index) {
        use std::os::unix::process::ExitStatusExt;
        let outcome = died(job, std::process::ExitStatus::from_raw(status));
        settle(job, state, index, outcome, config);
    }
}

/// Records what a run of seed `index` came to: a plain seed's outcome, or
/// a branch run's (`crate::explore`).
pub(super) fn settle(
    job: &mut Job,
    state: &mut TestState,
    index: usize,
    outcome: Outcome,
    config: &SweepConfig,
) {
    let seen = std::mem::take(&mut job.seen);
    job.settled = true;
    let plan = &job.plan;
    if job.kind != JobKind::Branch {
        record_outcome(state, index, (outcome, seen), config);
        return;
    }
    let seed = state.result.case.seeds.get(index);
    let count = state.result.case.seeds.len();
    let explorer = &mut state.result.explorer;
    explorer.runs += 1;
    let made_point = explorer.run_ended(index, seed, plan, &seen);
    let at = count + explorer.runs as usize;
    state.result.properties.add(seen, at);
    if let Outcome::Fail {
        class,
        message,
        output,
    } = outcome
    {
        state.result.explorer.failures.push(BranchFailure {
            seed,
            plan: plan.clone(),
            class,
            message,
            output,
        });
    }
    if made_point && job.batch.len() > 1 {
        super::branch::ask_stop(job);
    }
}

/// Records seed `index`'s outcome, and what its runs said of the
/// properties.
pub(super) fn record_outcome(
    state: &mut TestState,
    index: usize,
    (outcome, seen): (Outcome, Seen),
    config: &SweepConfig,
) {
    if state.stopped_before(index, config.keep_going) {
        // Past the first failure: it would not be reported.
        return;
    }
    let seed = state.result.case.seeds.get(index);
    let explorer = &mut state.result.explorer;
    explorer.run_ended(index, seed, &Plan::default(), &seen);
    state.result.properties.add(seen, index);
    let failing = matches!(outcome, Outcome::Fail { .. });
    if failing {
        let hashes = state.swept_hashes.get(&index).cloned().unwrap_or_default();
        state.result.failing_hashes.insert(index, hashes);
        if state.first_failure.is_none_or(|f| index < f) {
            state.first_failure = Some(index);
            if !config.keep_going {
                // An earlier failure came in late: what is past it goes.
                state.result.outcomes.forget_past(index, false);
            }
        }
    }
    let checkable = match &outcome {
        Outcome::Pass(hashes) => !hashes.is_empty(),
        Outcome::Fail { class, .. } => !matches!(class, FailureClass::Hang | FailureClass::Crash),
    };
    state.result.outcomes.insert(index, outcome);
    if config.check_determinism && checkable && state.result.mode != Mode::NotSimulated {
        state.checks.push(index);
    }
}

/// Compares a seed's second, fresh-process run with its sweep run.
pub(super) fn check(
    state: &mut TestState,
    index: usize,
    hashes: Vec<String>,
    config: &SweepConfig,
) {
    if state.stopped_before(index, config.keep_going) {
        return;
    }
    state.result.checked += 1;
    let swept = state.swept_hashes.get(&index).cloned().unwrap_or_default();
    if swept == hashes {
        return;
    }
    let seed = state.result.case.seeds.get(index);
    let test = state.index;
    let run = swept
        .iter()
        .zip(&hashes)
        .position(|(a, b)| a != b)
        .unwrap_or(swept.len().min(hashes.len()));
    let name = format!("{seed:016x}-{}.trace", run + 1);
    let a = trace_dir(config, test, false).join(&name);
    let b = trace_dir(config, test, true).join(&name);
    let divergence = match sim_runtime::trace::compare::first_difference(&a, &b) {
        Ok(Some(d)) => d.describe(),
        Ok(None) => "the trace files are identical, but the runs' hashes differ".to_string(),
        Err(e) => format!("the traces could not be compared: {e}"),
    };
    let message = format!(
        "nondeterminism: seed {seed:#x} gave run {} a different trace in a fresh process \
         (sweep: {} runs {:?}; fresh process: {} runs {:?}).\n{divergence}\nSomething the \
         seed does not control reached the run: process-wide state kept from an earlier seed \
         (a static, a OnceLock, a global subscriber), real time, or a real thread. The \
         traces are {} and {}.",
        run + 1,
        swept.len(),
        swept
            .iter()
            .map(|h| &h[..h.len().min(12)])
            .collect::<Vec<_>>(),
        hashes.len(),
        hashes
            .iter()
            .map(|h| &h[..h.len().min(12)])
            .collect::<Vec<_>>(),
        a.display(),
        b.display(),
    );
    if state.first_failure.is_none_or(|f| index < f) {
        state.first_failure = Some(index);
        if !config.keep_going {
            state.result.outcomes.forget_past(index, true);
        }
    }
    state.result.outcomes.insert(
        index,
        Outcome::Fail {
            class: FailureClass::Nondeterminism,
            message,
            output: String::new(),
        },
    );
}

/// The failure of a seed whose test process died before it reported the
/// seed: why (see [`death`]), and the end of its output.
fn died(job: &Job, status: std::process::ExitStatus) -> Outcome {
    let (class, message) = death(job, status);
    Outcome::Fail {
        class,
        message,
        output: tail(&job.log, 40),
    }
}

/// Why a test process that never reported the seed it ran died: a hang
/// the watchdog named, a signal, or an exit.
fn death(job: &Job, status: std::process::ExitStatus) -> (FailureClass, String) {
    use std::os::unix::process::ExitStatusExt;
    if let Some(message) = &job.hang {
        return (FailureClass::Hang, message.clone());
    }
    match status.signal() {
        Some(signal) => (
            FailureClass::Crash,
            format!(
                "the test process was killed by signal {signal} ({}): an abort, a stack \
                 overflow or a crash ended it during this seed",
                signal_name(signal)
            ),
        ),
        None => (
            FailureClass::Crash,
            format!(
                "the test process exited with code {} during this seed, before it could \
                 report (std::process::exit in the test?)",
                status.code().unwrap_or(-1)
            ),
        ),
    }
}

pub(super) fn finish_job(
    job: &mut Job,
    state: &mut TestState,
    status: std::process::ExitStatus,
    config: &SweepConfig,
) {
    use std::os::unix::process::ExitStatusExt;
    // Ended by the signal that stops the runner too (Ctrl-C reaches the
    // whole process group): its seed was not run, it did not fail. The
    // runner's own handler has run by the time the exit is seen.
    let stopping = status
        .signal()
        .is_some_and(|s| matches!(s, libc::SIGINT | libc::SIGTERM | libc::SIGHUP));
    if stopping && crate::signals::received().is_some() {
        return;
    }
    if job.saw_sweep {
        in_process_job_ended(job, state, status, config);
    } else {
        single_run_ended(job, state, status, config);
    }
}

/// An in-process sweep's process ended: a seed begun and never reported
/// is where it died.
fn in_process_job_ended(
    job: &mut Job,
    state: &mut TestState,
    status: std::process::ExitStatus,
    config: &SweepConfig,
) {
    let Some(position) = job.position else { return };
    let index = job.seeds.get(position).expect("a position of the job");
    if job.kind == JobKind::Check {
        // A check that dies says nothing of determinism; the sweep
        // already judged the seed.
        return;
    }
    let reported = match job.kind {
        JobKind::Branch => job.settled,
        _ => state.result.outcomes.contains_key(&index),
    };
    if reported {
        return;
    }
    let outcome = died(job, status);
    settle(job, state, index, outcome, config);
    // The rest of that share still runs when every seed counts.
    if config.keep_going && position + 1 < job.seeds.len() {
        state.shares.push(job.seeds.from(position + 1));
    }
}

/// One run with SIM_SEED ended: a probe, a single, or a check of such a
/// test.
fn single_run_ended(
    job: &mut Job,
    state: &mut TestState,
    status: std::process::ExitStatus,
    config: &SweepConfig,
) {
    let index = job.seeds.get(0).expect("a job has a seed");
    let simulated = job.runs_started > 0 || !job.run_hashes.is_empty() || job.hang.is_some();
    if job.kind == JobKind::Probe {
        state.probing = false;
        state.result.mode = if simulated {
            state.next_single = 1;
            Mode::PerProcess
        } else {
            Mode::NotSimulated
        };
    }
    let hashes = std::mem::take(&mut job.run_hashes);
    match job.kind {
        JobKind::Check => return check(state, index, hashes, config),
        // Its last run was a forked child's, already counted: the process
        // ended before it ran its own.
        JobKind::Branch if job.settled => return,
        JobKind::Branch => {}
        _ => {
            let panicked = job.last_panic.is_some();
            state.passed_without_panic |= status.success() && !panicked;
            state.failed_without_panic |= status.code() == Some(101) && !panicked;
        }
    }
    let outcome = single_run_outcome(job, state, status, &hashes);
    state.swept_hashes.insert(index, hashes);
    settle(job, state, index, outcome, config);
}

/// What one run with SIM_SEED came to, from its exit `status`, its panic
/// record and its log.
fn single_run_outcome(
    job: &Job,
    state: &TestState,
    status: std::process::ExitStatus,
    hashes: &[String],
) -> Outcome {
    let ran = state.result.case.whole_binary
        || std::fs::read_to_string(&job.log)
            .is_ok_and(|log| log.lines().any(|l| l == "running 1 test"));
    if status.success() && !ran {
        Outcome::Fail {
            class: FailureClass::Crash,
            message: format!(
                "the test binary ran no test named {:?} (its output is below)",
                state.result.case.name
            ),
            output: tail(&job.log, 40),
        }
    } else if status.success() {
        Outcome::Pass(hashes.to_vec())
    } else if status.code() == Some(101) {
        match job.last_panic.clone() {
            Some((class, message)) => Outcome::Fail {
                class,
                message,
                output: tail(&job.log, 40),
            },
            // No record of the panic (it ran no simulation): the output,
            // panic report included, says what failed.
            None => Outcome::Fail {
                class: FailureClass::Panic,
                message: "the test failed (its output is below)".to_string(),
                output: tail_of(&job.log, 40, false),
            },
        }
    } else {
        died(job, status)
    }
}

/// A forked branch run of a test libtest runs once per process ended with
/// wait status `status`: 0 is a pass; anything else only suspects a
/// failure (the child judged by panics), so the run is replayed from the
/// start, alone, and that outcome counts.
fn per_process_child_ended(
    job: &mut Job,
    state: &mut TestState,
    status: i32,
    config: &SweepConfig,
) {
    if job.settled {
        return;
    }
    let index = job.seeds.get(0).expect("a job has a seed");
    if status == 0 {
        state.result.explorer.forked += 1;
        settle(job, state, index, Outcome::Pass(Vec::new()), config);
        return;
    }
    job.settled = true;
    let replay = crate::explore::Branch {
        index,
        plan: job.plan.clone(),
    };
    state.result.explorer.requeue(vec![replay]);
}

/// A branch job's run with `salt` starts: what comes next is that run's.
fn branch_started(job: &mut Job, salt: u64) {
    if let Some(plan) = job.batch.iter().find(|p| last_salt(p) == salt) {
        job.plan = plan.clone();
    }
    job.branched.push(salt);
    job.seen = Seen::default();
    job.run_hashes.clear();
    job.settled = false;
    job.last_panic = None;
    job.hang = None;
}
