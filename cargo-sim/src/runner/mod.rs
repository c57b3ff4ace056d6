//! The sweep: every selected test, once per seed, over `--jobs` processes.
//!
//! A test is first started with its first share of the seeds (a probe). A
//! `#[tokio::test]` takes them all in that one process (it records
//! `sweep`), and the other shares start at once in parallel. Any other test
//! runs once, with `SIM_SEED`; if it ran a simulation, each further seed
//! gets a process of its own, and if it did not, it is not a simulation
//! test and runs once.
//!
//! Seeds are handed out in their order (share k holds the seeds whose
//! index is k modulo the number of shares), and each process runs its
//! share in order. So the first failing seed is well defined: when seed
//! i fails, every process that has moved past i is stopped, and those
//! still below it go on until they pass it. Without `--keep-going` a test
//! ends at its first failing seed.
//!
//! The files: this one (which job starts next, and starting it),
//! `records.rs` (what a process wrote, and what it comes to), `branch.rs`
//! (branch jobs: which tests fork, their settings, runs left unrun).

mod branch;
mod records;

use crate::compile::TestBinary;
use crate::explore::Explorer;
pub use crate::outcomes::{Mode, Outcome, TestResult};
pub use crate::process::{
    run_one, run_one_in_fifo_order, trace_failing, trace_seed, OneRun, SweepConfig, TestCase,
};
use crate::process::{seeds_value, silence_budget, test_command};
use crate::properties::Seen;
use crate::seeds::Indices;
use branch::{branch_settings, forkable, requeue_unrun, FORK_BATCH_MAX};
use records::{finish_job, read_records, record_outcome, trace_dir};
use sim_runtime::property::branch::Plan;
use sim_runtime::property::Kind;
use sim_runtime::sweep::{self, FailureClass};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobKind {
    Probe,
    Share,
    Single,
    Check,
    /// Branch runs (`crate::explore`) of one seed from one point, in a
    /// process of their own, with `SIM_BRANCH` (and `SIM_BRANCH_FORK`
    /// for the others of a batch: the process forks at the point).
    Branch,
}

struct Job {
    test: usize,
    kind: JobKind,
    /// The seed indexes this process runs, in order.
    seeds: Indices,
    /// Position in `seeds` of the seed running now (from `begin`).
    position: Option<usize>,
    child: Child,
    out: PathBuf,
    log: PathBuf,
    offset: u64,
    partial: String,
    run_hashes: Vec<String>,
    /// Runs started (`start` records): a plain test that started one is a
    /// simulation test, even if it died before the run ended.
    runs_started: u64,
    saw_sweep: bool,
    last_panic: Option<(FailureClass, String)>,
    hang: Option<String>,
    /// What the running seed's runs said of the properties.
    seen: Seen,
    /// The plan of the branch run whose records come now.
    plan: Plan,
    /// A branch job's plans: one point, a salt each at its last cut.
    batch: Vec<Plan>,
    /// The salts of its runs that started (`branched` records).
    branched: Vec<u64>,
    /// A branch job's stop file (`SIM_BRANCH_STOP`), and whether it was made.
    stop_file: Option<PathBuf>,
    stop_asked: bool,
    /// The running branch run's outcome was recorded.
    settled: bool,
    started: Instant,
    /// When its records last grew: a process with none for longer than a
    /// run's hang budget is stuck outside any simulation run (the test
    /// process's own watchdog watches runs only).
    progress_at: Instant,
}

struct TestState {
    /// This test's place in the sweep (names its trace directories).
    index: usize,
    result: TestResult,
    /// Shares of the seeds for in-process runs (index lists).
    shares: Vec<Indices>,
    next_share: usize,
    next_single: usize,
    /// Pinned saved seeds started (`TestCase::pinned`, one process each).
    next_pinned: usize,
    probing: bool,
    /// The probe started (pinned seeds may have outcomes before it).
    probed: bool,
    first_failure: Option<usize>,
    /// Processes running for this test; `running_sweep` of them sweep (the
    /// others check determinism, which waits for the sweep to end).
    running: usize,
    running_sweep: usize,
    /// Seed indexes waiting for a determinism check.
    checks: Vec<usize>,
    next_check: usize,
    /// Hashes of each seed's sweep run, for the check.
    swept_hashes: BTreeMap<usize, Vec<String>>,
    /// Branch jobs' plans, between `next_job` and `spawn`.
    pending_plans: Vec<Vec<Plan>>,
    /// What plain runs of a test libtest runs once per process showed of
    /// its verdicts, which a forked branch run judges by panics alone
    /// (`sim_runtime::property::fork`): one passed with no panic, and
    /// one failed without a panic (a test that returns `Err`).
    passed_without_panic: bool,
    failed_without_panic: bool,
    /// The first plain seed index no share holds yet, and the seeds a share
    /// of the next chunk holds (in-process tests that explore).
    plain_next: usize,
    chunk: usize,
}

impl TestState {
    /// Whether seed `index` comes after the test's first failure (a
    /// failed branch run comes before every plain seed not yet run: the
    /// test stops at it).
    fn stopped_before(&self, index: usize, keep_going: bool) -> bool {
        !keep_going
            && (self.first_failure.is_some_and(|f| index > f)
                || !self.result.explorer.failures.is_empty())
    }

    /// The end of the seed indexes that run plain now (`crate::explore`).
    fn plain_end(&self) -> usize {
        self.result.explorer.plain_end(self.result.case.seeds.len())
    }

    /// Whether plain seeds are left to start, in shares or not yet.
    fn plain_left(&self) -> bool {
        if self.next_pinned < self.result.case.pinned.len() {
            return true;
        }
        match self.result.mode {
            Mode::InProcess => {
                self.next_share < self.shares.len() || self.plain_next < self.plain_end()
            }
            _ => self.next_single < self.plain_end(),
        }
    }

    /// Whether a run ended and its binary has no `sometimes` or
    /// `reachable`: nothing to dig for (a process declares its binary's
    /// properties before its first run).
    fn nothing_to_dig(&self) -> bool {
        let ran = self.result.properties.runs > 0 || !self.result.outcomes.is_empty();
        ran && !self
            .result
            .properties
            .declared
            .iter()
            .any(|s| matches!(s.kind, Kind::Sometimes | Kind::Reachable))
    }

    /// Adds the next plain shares: a chunk twice the last while there may
    /// be something to dig for, else the rest at once. Whether it added.
    fn more_shares(&mut self, jobs: usize) -> bool {
        let end = self.plain_end();
        if self.plain_next >= end {
            return false;
        }
        let to = match self.nothing_to_dig() {
            true => end,
            false => end.min(self.plain_next + self.chunk * jobs.max(1)),
        };
        self.shares.extend(shares(self.plain_next, to, jobs));
        self.plain_next = to;
        self.chunk *= 2;
        true
    }
}

/// A sweep's counts, as the progress line shows them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Seeds with an outcome, of `total` planned (less those a test's
    /// first failure leaves unrun).
    pub seeds: u64,
    pub total: u64,
    /// Branch runs (`crate::explore`), beyond the planned seeds.
    pub branch_runs: u64,
    /// Seeds the determinism check ran again.
    pub checked: u64,
    /// Seeds and branch runs that failed.
    pub failing: u64,
}

/// Progress, as the sweep goes.
pub trait Progress {
    /// The counts now.
    fn update(&mut self, counts: &Counts);
    /// A test finished.
    fn test_finished(&mut self, result: &TestResult);
}

/// The runner was stopped by a signal.
pub struct Interrupted(pub i32);

/// Runs the sweep of `cases`; returns one result per case, in order.
pub fn run(
    config: &SweepConfig,
    binaries: &[TestBinary],
    cases: Vec<TestCase>,
    progress: &mut dyn Progress,
) -> Result<Vec<TestResult>, Interrupted> {
    let mut sweep = Sweep::new(config, binaries, cases);
    let mut last_progress = Instant::now();
    loop {
        // A soak run's end, or Ctrl-C: stop, and report what ran.
        let soak_over = config.deadline.is_some_and(|d| Instant::now() >= d)
            || crate::signals::received() == Some(libc::SIGINT);
        if soak_over {
            sweep.stop_and_read();
            progress.update(&sweep.counts());
            return Ok(sweep.results());
        }
        if let Some(signal) = crate::signals::received() {
            for job in &mut sweep.running {
                let _ = job.child.kill();
                let _ = job.child.wait();
            }
            return Err(Interrupted(signal));
        }
        sweep.start_jobs();
        sweep.reap();
        sweep.finish_tests(progress);
        if last_progress.elapsed() > Duration::from_millis(100) {
            progress.update(&sweep.counts());
            last_progress = Instant::now();
        }
        if sweep.running.is_empty() && sweep.finished.iter().all(|f| *f) {
            break;
        }
        std::thread::sleep(Duration::from_millis(3));
    }
    progress.update(&sweep.counts());
    Ok(sweep.results())
}

/// A sweep in progress: each test's state, the processes running, and the
/// counts the progress line shows.
struct Sweep<'a> {
    config: &'a SweepConfig,
    binaries: &'a [TestBinary],
    states: Vec<TestState>,
    running: Vec<Job>,
    finished: Vec<bool>,
    job_counter: u64,
    /// Wall time a process may stay silent outside any run.
    silence: Duration,
}

impl<'a> Sweep<'a> {
    fn new(config: &'a SweepConfig, binaries: &'a [TestBinary], cases: Vec<TestCase>) -> Sweep<'a> {
        let states: Vec<TestState> = cases
            .into_iter()
            .enumerate()
            .map(|(index, case)| TestState::new(index, case, config))
            .collect();
        Sweep {
            config,
            binaries,
            finished: vec![false; states.len()],
            states,
            running: Vec::new(),
            job_counter: 0,
            silence: silence_budget(),
        }
    }

    /// What the progress line shows, counted from the tests' outcomes
    /// (so a count is never more than what it counts).
    fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for (state, finished) in self.states.iter().zip(&self.finished) {
            let result = &state.result;
            let ran = result.outcomes.len() as u64;
            counts.seeds = counts.seeds.saturating_add(ran);
            // A soak run's seeds are open-ended: the sum saturates. A
            // finished test's seeds never run (past its first failure)
            // leave the total.
            let planned = match finished {
                true => ran,
                false => result.case.seeds.len() as u64,
            };
            counts.total = counts.total.saturating_add(planned);
            counts.branch_runs += result.explorer.runs;
            counts.checked += result.checked;
            counts.failing +=
                (result.outcomes.failures().count() + result.explorer.failures.len()) as u64;
        }
        counts
    }

    fn results(self) -> Vec<TestResult> {
        self.states.into_iter().map(|s| s.result).collect()
    }

    /// The summary of what ran: seeds in progress count as not run.
    fn stop_and_read(&mut self) {
        for job in &mut self.running {
            let _ = job.child.kill();
            let _ = job.child.wait();
            let state = &mut self.states[job.test];
            read_records(job, state, self.config);
        }
    }

    /// Starts what there is room for, tests in order.
    fn start_jobs(&mut self) {
        while self.running.len() < self.config.jobs.max(1) {
            let Some((test, kind, seeds)) = next_job(&mut self.states, self.config) else {
                break;
            };
            self.job_counter += 1;
            let first = seeds.get(0).expect("a job has a seed");
            let plans = match kind {
                JobKind::Branch => self.states[test].pending_plans.pop().unwrap_or_default(),
                _ => Vec::new(),
            };
            let state = &self.states[test];
            let what = Launch {
                test,
                kind,
                seeds,
                plans,
                counter: self.job_counter,
            };
            match spawn(self.config, self.binaries, state, what) {
                Ok(job) => {
                    let state = &mut self.states[test];
                    state.running += 1;
                    if kind != JobKind::Check {
                        state.running_sweep += 1;
                    }
                    self.running.push(job);
                }
                Err(message) => {
                    // A binary that cannot start fails every seed it had.
                    let state = &mut self.states[test];
                    let outcome = Outcome::Fail {
                        class: FailureClass::Crash,
                        message,
                        output: String::new(),
                    };
                    record_outcome(state, first, (outcome, Seen::default()), self.config);
                    state.probing = false;
                    state.result.mode = Mode::NotSimulated;
                }
            }
        }
    }

    /// Reads what every process wrote, and reaps those that ended (or
    /// that ran past a test's first failure, or went silent).
    fn reap(&mut self) {
        let mut index = 0;
        while index < self.running.len() {
            let exited = self.poll_job(index);
            let job = &self.running[index];
            let state = &self.states[job.test];
            let stop = job
                .position
                .and_then(|p| job.seeds.get(p))
                .is_some_and(|i| {
                    job.kind == JobKind::Share && state.stopped_before(i, self.config.keep_going)
                });
            if exited.is_none() && !stop {
                index += 1;
                continue;
            }
            let mut job = self.running.swap_remove(index);
            let state = &mut self.states[job.test];
            let config = self.config;
            if let Some(status) = exited {
                read_records(&mut job, state, config);
                finish_job(&mut job, state, status, config);
                requeue_unrun(&job, state);
            } else {
                // Past the first failure: nothing it finds can come first.
                let _ = job.child.kill();
                let _ = job.child.wait();
                read_records(&mut job, state, config);
            }
            state.running -= 1;
            if job.kind != JobKind::Check {
                state.running_sweep -= 1;
            }
            state.result.elapsed += job.started.elapsed();
        }
    }

    /// Reads job `index`'s records; its exit status if it ended (a process
    /// silent too long outside any run is ended as a hang).
    fn poll_job(&mut self, index: usize) -> Option<std::process::ExitStatus> {
        let job = &mut self.running[index];
        let state = &mut self.states[job.test];
        read_records(job, state, self.config);
        let exited = job.child.try_wait().ok().flatten();
        if exited.is_some() || job.hang.is_some() || job.progress_at.elapsed() <= self.silence {
            return exited;
        }
        // Stuck outside any run: a thread that spins, a blocking call that
        // never returns.
        job.hang = Some(format!(
            "sim: hang: the test process wrote nothing for {} s of wall time, outside \
             any simulation run (a run's own watchdog would have named the run): \
             something outside the runtime (a std thread, a blocking call) never \
             finished. Its last output lines are below.",
            self.silence.as_secs()
        ));
        let _ = job.child.kill();
        job.child.wait().ok()
    }

    /// A test with nothing running and nothing left is finished.
    fn finish_tests(&mut self, progress: &mut dyn Progress) {
        for (t, state) in self.states.iter_mut().enumerate() {
            if self.finished[t]
                || state.running > 0
                || state.probing
                || has_work(state, self.config)
            {
                continue;
            }
            self.finished[t] = true;
            progress.test_finished(&state.result);
        }
    }
}

impl TestState {
    /// A test not yet run: its seeds in `jobs` shares.
    fn new(index: usize, case: TestCase, config: &SweepConfig) -> TestState {
        let count = case.seeds.len();
        let explorer = Explorer::new(
            count,
            config.explore && !case.whole_binary,
            &case.saved_branches,
        );
        // With exploration, short shares first, so branch runs can start
        // soon after the first rare state (a share's process runs it
        // whole); the rest come as they are needed (`more_shares`).
        let plain_next = match explorer.reserve {
            0 => explorer.plain_end(count),
            _ => explorer
                .plain_end(count)
                .min(FIRST_CHUNK * config.jobs.max(1)),
        };
        // The pinned saved seeds (the first indexes) run apart.
        let first = case.pinned.len();
        let shares = shares(first, plain_next, config.jobs);
        // A test known to carry state between seeds skips the probe: each
        // seed in a process of its own.
        let mode = if case.fresh_process_per_seed {
            Mode::PerProcess
        } else {
            Mode::Unknown
        };
        TestState {
            index,
            result: TestResult {
                case,
                mode,
                outcomes: Default::default(),
                elapsed: Duration::ZERO,
                failing_hashes: BTreeMap::new(),
                properties: Default::default(),
                explorer,
                checked: 0,
            },
            shares,
            next_share: 0,
            next_single: first,
            next_pinned: 0,
            probing: false,
            probed: false,
            first_failure: None,
            running: 0,
            running_sweep: 0,
            checks: Vec::new(),
            next_check: 0,
            swept_hashes: BTreeMap::new(),
            pending_plans: Vec::new(),
            passed_without_panic: false,
            failed_without_panic: false,
            plain_next,
            chunk: FIRST_CHUNK * 2,
        }
    }
}

/// The seed indexes `from..end` in one share per job (every `jobs`-th).
fn shares(from: usize, end: usize, jobs: usize) -> Vec<Indices> {
    let count = end.saturating_sub(from);
    let share_count = jobs.max(1).min(count).max(1);
    (0..share_count)
        .map(|k| Indices {
            first: from + k,
            step: share_count,
            end,
        })
        .collect()
}

/// Seeds a share of the first chunk runs (`TestState::more_shares` doubles it).
const FIRST_CHUNK: usize = 16;

fn has_work(state: &TestState, config: &SweepConfig) -> bool {
    has_sweep_work(state, config) || state.next_check < state.checks.len()
}

fn next_job(states: &mut [TestState], config: &SweepConfig) -> Option<(usize, JobKind, Indices)> {
    for (t, state) in states.iter_mut().enumerate() {
        // A branch run first: the budget kept for them digs where the
        // rare states are as soon as one is found.
        if let Some(job) = next_exploration(t, state, config) {
            return Some(job);
        }
        if state.result.mode == Mode::InProcess && state.next_share >= state.shares.len() {
            state.more_shares(config.jobs);
        }
        if let Some(job) = next_pinned(t, state, config) {
            return Some(job);
        }
        match state.result.mode {
            Mode::Unknown if !state.probing && !state.probed => {
                state.probing = true;
                state.probed = true;
                state.next_share = 1;
                return Some((t, JobKind::Probe, state.shares[0]));
            }
            Mode::InProcess if state.next_share < state.shares.len() => {
                let share = state.shares[state.next_share];
                state.next_share += 1;
                let Some(first) = share.get(0) else { continue };
                if state.stopped_before(first, config.keep_going) {
                    continue;
                }
                return Some((t, JobKind::Share, share));
            }
            Mode::PerProcess
                if state.next_single < state.plain_end()
                    && !state.stopped_before(state.next_single, config.keep_going) =>
            {
                let index = state.next_single;
                state.next_single += 1;
                return Some((t, JobKind::Single, Indices::one(index)));
            }
            _ => {}
        }
        // Checks start once the sweep of that test is over.
        if state.running_sweep == 0
            && !state.probing
            && !matches!(state.result.mode, Mode::Unknown)
            && state.next_check < state.checks.len()
            && !has_sweep_work(state, config)
        {
            let index = state.checks[state.next_check];
            state.next_check += 1;
            return Some((t, JobKind::Check, Indices::one(index)));
        }
    }
    None
}

/// The test's next pinned saved seed (`TestCase::pinned`): first of all,
/// each in a process of its own.
fn next_pinned(
    t: usize,
    state: &mut TestState,
    config: &SweepConfig,
) -> Option<(usize, JobKind, Indices)> {
    let (index, _) = state.result.case.pinned.get(state.next_pinned)?;
    let index = *index;
    state.next_pinned += 1;
    (!state.stopped_before(index, config.keep_going)).then_some((
        t,
        JobKind::Single,
        Indices::one(index),
    ))
}

/// The test's next branch run; or, when none can start and nothing
/// running could make a point, its kept seeds given back (the plain
/// dispatch then starts them).
fn next_exploration(
    t: usize,
    state: &mut TestState,
    config: &SweepConfig,
) -> Option<(usize, JobKind, Indices)> {
    if !exploring(state, config) {
        return None;
    }
    let count = state.result.case.seeds.len();
    let batch = match state.result.explorer.next_saved() {
        Some(saved) => vec![saved],
        None => {
            let max = if forkable(state, config) {
                FORK_BATCH_MAX
            } else {
                1
            };
            state.result.explorer.next_batch(max, config.jobs)
        }
    };
    if let Some(index) = batch.first().map(|b| b.index) {
        state
            .pending_plans
            .push(batch.into_iter().map(|b| b.plan).collect());
        return Some((t, JobKind::Branch, Indices::one(index)));
    }
    // A binary with no `sometimes` or `reachable` gives its kept seeds
    // back at once.
    let busy = state.plain_left() || state.running_sweep > 0 || state.result.explorer.can_branch();
    if (busy && !state.nothing_to_dig()) || state.result.explorer.reserve == 0 {
        return None;
    }
    let kept_from = count - state.result.explorer.reserve;
    let from = state.result.explorer.release(count);
    if state.result.mode == Mode::InProcess {
        // `more_shares` starts them: the plain seeds not yet in shares,
        // then the kept ones from the first a branch run left.
        if state.plain_next >= kept_from {
            state.plain_next = state.plain_next.max(from);
        }
    } else {
        // The kept seeds that branch runs took are skipped.
        if state.next_single >= kept_from {
            state.next_single = state.next_single.max(from);
        }
    }
    None
}

/// Whether the test still has seeds to start (its determinism checks
/// aside).
fn has_sweep_work(state: &TestState, config: &SweepConfig) -> bool {
    let pinned = state.next_pinned < state.result.case.pinned.len();
    let plain = pinned
        || match state.result.mode {
            Mode::Unknown => !state.probing && !state.probed,
            Mode::InProcess => state.plain_left(),
            Mode::PerProcess => {
                state.next_single < state.plain_end()
                    && !state.stopped_before(state.next_single, config.keep_going)
            }
            Mode::NotSimulated => false,
        };
    plain || exploring(state, config)
}

/// Whether the test's exploration still has runs to start: branch runs,
/// or the kept seeds, once no branch run can start, to give back.
fn exploring(state: &TestState, config: &SweepConfig) -> bool {
    let explorer = &state.result.explorer;
    let simulated = matches!(state.result.mode, Mode::InProcess | Mode::PerProcess);
    let stopped =
        !config.keep_going && (state.first_failure.is_some() || !explorer.failures.is_empty());
    let budget = explorer.reserve > 0 && explorer.released_from.is_none();
    simulated && !stopped && (budget || explorer.has_saved())
}

/// What a job runs: a test, its kind, its seeds, a branch job's plans.
struct Launch {
    test: usize,
    kind: JobKind,
    seeds: Indices,
    plans: Vec<Plan>,
    counter: u64,
}

fn spawn(
    config: &SweepConfig,
    binaries: &[TestBinary],
    state: &TestState,
    launch: Launch,
) -> Result<Job, String> {
    let binary = &binaries[state.result.case.binary];
    let out = config
        .work_dir
        .join(format!("job-{}.records", launch.counter));
    let log = config.work_dir.join(format!("job-{}.log", launch.counter));
    let _ = std::fs::remove_file(&out);
    let (mut command, stop_file) = job_command(config, binary, state, &launch, (&out, &log))?;
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.path.display()))?;
    let Launch {
        test,
        kind,
        seeds,
        plans,
        ..
    } = launch;
    Ok(Job {
        test,
        kind,
        seeds,
        position: None,
        child,
        out,
        log,
        offset: 0,
        partial: String::new(),
        run_hashes: Vec::new(),
        seen: Seen::default(),
        plan: plans.first().cloned().unwrap_or_default(),
        batch: plans,
        branched: Vec::new(),
        stop_file,
        stop_asked: false,
        settled: false,
        runs_started: 0,
        saw_sweep: false,
        last_panic: None,
        hang: None,
        started: Instant::now(),
        progress_at: Instant::now(),
    })
}

/// The command of a job's process: the test binary, run for one test
/// (or whole), with the sweep's settings in its environment, its records
/// going to `out` and its output to `log`; and a branch job's stop file.
fn job_command(
    config: &SweepConfig,
    binary: &TestBinary,
    state: &TestState,
    launch: &Launch,
    (out, log): (&Path, &Path),
) -> Result<(Command, Option<PathBuf>), String> {
    let case = &state.result.case;
    let log_file =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let first_seed = case
        .seeds
        .get(launch.seeds.get(0).expect("a job has a seed"));
    let seeds = seeds_value(config, launch.counter, &case.seeds.items(launch.seeds))?;
    let mut command = test_command(binary, case, out, &seeds, first_seed);
    command
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file);
    trace_settings(&mut command, config, state, launch)?;
    if config.keep_going {
        command.env(sweep::KEEP_GOING_VAR, "1");
    }
    case.pin_settings(&mut command, first_seed);
    let stop_file = branch_settings(&mut command, &launch.plans, config, launch.counter);
    if state.first_failure.is_some() || !state.result.explorer.failures.is_empty() {
        // The report shows one failure's output (a seed's, or a branch
        // run's), found already: symbolizing a backtrace (RUST_BACKTRACE)
        // for each later failing run made failing runs several times slower
        // than passing ones (a branch job is a process of its own, so each
        // failing branch run was its process's first failure: 1-3 s each).
        command.env("RUST_BACKTRACE", "0");
    }
    if config.verbose {
        command.env(sweep::VERBOSE_VAR, "1");
    }
    Ok((command, stop_file))
}

/// Where a job's process writes its traces: the file `SIM_TRACE` names
/// for a test of one seed, the directory of `--trace`, or the directory
/// `--check-determinism` compares.
fn trace_settings(
    command: &mut Command,
    config: &SweepConfig,
    state: &TestState,
    launch: &Launch,
) -> Result<(), String> {
    match (&config.sim_trace, &config.traces) {
        // One seed for the test: SIM_TRACE means what it means in a plain
        // run (the README's file names).
        (Some(path), None) if state.result.case.seeds.len() == 1 => {
            command.env("SIM_TRACE", path);
        }
        (_, Some(dir)) => {
            command
                .env(sweep::TRACE_DIR_VAR, dir)
                .env(sweep::TRACE_NAMED_VAR, "1");
        }
        _ => {}
    }
    if config.check_determinism {
        let dir = trace_dir(config, launch.test, launch.kind == JobKind::Check);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        command.env(sweep::TRACE_DIR_VAR, &dir);
    }
    Ok(())
}
