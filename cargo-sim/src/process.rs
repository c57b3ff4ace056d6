//! Test processes, one at a time: the sweep's configuration and test
//! cases, one seed run again alone in a fresh process (`run_one`, what the
//! shrinker, the timeline and the trace of a failing seed ask for), the
//! seeds a process is given, and the end of a process's log. The sweep
//! over many processes is `runner/`.

use crate::compile::TestBinary;
use sim_runtime::sweep::{self, FailureClass, Record};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the runner was asked to do.
#[derive(Clone, Debug)]
pub struct SweepConfig {
    /// Parallel test processes.
    pub jobs: usize,
    /// Count every seed instead of stopping at a test's first failure.
    pub keep_going: bool,
    /// A soak run's end: no process starts after it, and the running ones
    /// stop at it (their seeds in progress count as not run). Ctrl-C ends
    /// a soak run the same way, with its summary.
    pub deadline: Option<Instant>,
    /// Run each seed again in a fresh process and compare traces.
    pub check_determinism: bool,
    /// Print every run's lines.
    pub verbose: bool,
    /// Where the runner keeps its files (records, logs, traces).
    pub work_dir: PathBuf,
    /// `--trace DIR`: every seed's trace goes there, named by test and
    /// seed.
    pub traces: Option<PathBuf>,
    /// `SIM_TRACE` (absolute): a test that runs one seed writes it, as a
    /// plain run would.
    pub sim_trace: Option<PathBuf>,
    /// Guided exploration (`crate::explore`): part of each test's seeds
    /// go to branch runs.
    pub explore: bool,
}

/// One test to sweep.
#[derive(Clone, Debug)]
pub struct TestCase {
    /// Index into the binaries.
    pub binary: usize,
    /// The test's full name.
    pub name: String,
    /// Its seeds, in order: saved regressions first.
    pub seeds: crate::seeds::SeedList,
    /// The command prefix of its replay line (up to `--`), after the
    /// `SIM_*` settings.
    pub replay_prefix: String,
    /// The same command without the settings (a replay line puts them,
    /// once, before the seed).
    pub replay_command: String,
    /// The binary is not libtest's (`harness = false`): it runs whole, once
    /// per seed, with `SIM_SEED`.
    pub whole_binary: bool,
    /// The test is `#[ignore]`d and was asked for: its runs and its
    /// replay line ask for it too.
    pub ignored: bool,
    /// Each seed runs in a process of its own: the test carries state from
    /// one seed to the next, so seeds sharing a process are not their own.
    pub fresh_process_per_seed: bool,
    /// Saved branch runs (`crate::explore`) to run first: the index of
    /// each one's root seed among the seeds, and its plan.
    pub saved_branches: Vec<(usize, sim_runtime::property::branch::Plan)>,
    /// Saved seeds this sweep would run otherwise than they were saved
    /// (another policy, another swarm): each one's index (the first seed
    /// indexes) and the settings its saved line records
    /// (the regressions file). Each runs in a process of its own with them.
    pub pinned: Vec<(usize, Vec<String>)>,
}

impl TestCase {
    /// The settings seed `seed` runs with, when they are not the sweep's.
    pub fn pinned_settings(&self, seed: u64) -> Option<&[String]> {
        self.pinned
            .iter()
            .find(|(index, _)| self.seeds.get(*index) == seed)
            .map(|(_, settings)| settings.as_slice())
    }

    /// Gives `command` the settings `seed` runs with when they are not the
    /// sweep's: the sweep's own run-changing settings and its portfolio
    /// off, the saved ones on.
    pub fn pin_settings(&self, command: &mut Command, seed: u64) {
        let Some(settings) = self.pinned_settings(seed) else {
            return;
        };
        for setting in crate::identity::sim_settings() {
            let name = setting.split('=').next().unwrap_or(&setting);
            command.env_remove(name);
        }
        command.env_remove(sim_runtime::settings::SWEEP_PORTFOLIO.name);
        for setting in settings {
            if let Some((name, value)) = setting.split_once('=') {
                command.env(name, value);
            }
        }
    }
}

/// How long a test process may go without a record before the runner
/// calls it a hang: a run's hang budget (`SIM_HANG_RUN_S`), and a margin
/// so that a hang inside a run is the process's own watchdog's to report.
pub(crate) fn silence_budget() -> Duration {
    let run_s = sim_runtime::settings::HANG_RUN_S
        .value()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(sweep::DEFAULT_HANG_RUN_S);
    // A margin for the process's own start and listing: a tenth of a run's
    // budget, 2 to 10 s (a test of a hang sets a budget of 1 s).
    Duration::from_secs(run_s + (run_s / 10).clamp(2, 10))
}

/// What one more run of one seed did.
#[derive(Debug)]
pub struct OneRun {
    /// Its failure (class and message), if it failed.
    pub failure: Option<(FailureClass, String)>,
    /// Trace events of its last run.
    pub events: u64,
    /// Virtual time at the end of its last run, in ns.
    pub end_ns: u64,
}

/// Runs `seed` of `case` once more with `env` added, and reads how it went.
pub fn run_one(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    env: &[(String, String)],
) -> Result<OneRun, String> {
    run_one_with(config, binaries, case, seed, env, &[])
}

/// As [`run_one`], with the tasks run in the order they became ready, as
/// tokio's `current_thread` runtime runs them (`SIM_POLICY=fifo`; the
/// seed's PCT settings, if any, dropped): the same seed's latencies,
/// faults and randomness in tokio's order.
pub fn run_one_in_fifo_order(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
) -> Result<OneRun, String> {
    use sim_runtime::settings::{PCT_DEPTH, PCT_HORIZON, POLICY};
    let env = [(POLICY.name.to_string(), "fifo".to_string())];
    run_one_with(
        config,
        binaries,
        case,
        seed,
        &env,
        &[PCT_DEPTH.name, PCT_HORIZON.name],
    )
}

/// A process of the test binary for `case` (its one test, or the whole
/// binary), as the runner starts one: its records to `records`, its seeds
/// `seeds` (as `SIM_SWEEP_SEEDS` takes them), `SIM_SEED` the first of
/// them and no input. The caller adds its other settings and says where
/// its output goes.
pub(crate) fn test_command(
    binary: &TestBinary,
    case: &TestCase,
    records: &Path,
    seeds: &str,
    first_seed: u64,
) -> Command {
    let mut command = Command::new(&binary.path);
    die_with_runner(&mut command);
    if !case.whole_binary {
        // The name is exact, and an ignored test the sweep was asked for
        // runs here too (without the flag libtest would skip it and pass).
        command.args([
            case.name.as_str(),
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "--include-ignored",
        ]);
    }
    command
        .envs(binary.cargo_env())
        .current_dir(&binary.manifest_dir)
        .env(sweep::OUT_VAR, records)
        .env(sweep::SEEDS_VAR, seeds)
        .env(sweep::REPLAY_VAR, &case.replay_prefix)
        .env(sweep::PARENT_VAR, std::process::id().to_string())
        .env("SIM_SEED", format!("{first_seed:#x}"))
        .env_remove("SIM_TRACE")
        .stdin(Stdio::null());
    command
}

/// [`run_one`] with `env` set and the variables of `unset` removed, after
/// the seed's pinned settings.
fn run_one_with(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    env: &[(String, String)],
    unset: &[&str],
) -> Result<OneRun, String> {
    let binary = &binaries[case.binary];
    let records = config.work_dir.join(format!("one-{seed:016x}.records"));
    let _ = std::fs::remove_file(&records);
    let mut command = test_command(binary, case, &records, &format!("{seed:#x}"), seed);
    command
        // Its output goes nowhere: with RUST_BACKTRACE set, a failing run
        // symbolized a backtrace no one reads, 1-3 s a run (a shrink's
        // every try fails, so the runs that keep the failure paid it).
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    case.pin_settings(&mut command, seed);
    for name in unset {
        command.env_remove(name);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let status = command
        .status()
        .map_err(|e| format!("cannot start {}: {e}", binary.path.display()))?;
    let text = std::fs::read_to_string(&records).unwrap_or_default();
    let mut failure = None;
    let mut panic = None;
    let mut passed = false;
    let mut events = 0;
    let mut end_ns = 0;
    for record in text.lines().filter_map(Record::parse) {
        match record {
            Record::Fail { class, message, .. } => failure = Some((class, message)),
            Record::Pass { .. } => passed = true,
            // A refused escape is the cause of what fails after it.
            Record::Panic { class, message, .. }
                if panic
                    .as_ref()
                    .is_none_or(|(kept, _): &(FailureClass, String)| {
                        *kept != FailureClass::Escape
                    }) =>
            {
                panic = Some((class, message))
            }
            Record::Run {
                events: e,
                end_ns: t,
                ..
            } => {
                events = e;
                end_ns = t;
            }
            _ => {}
        }
    }
    if failure.is_none() && !passed && !status.success() {
        failure = Some(panic.unwrap_or((
            FailureClass::Crash,
            format!("the test process ended with {status}"),
        )));
    }
    Ok(OneRun {
        failure,
        events,
        end_ns,
    })
}

/// Runs `seed` of `case` once more, writing its trace, and returns the
/// trace file (the last run's, when the test ran several).
pub fn trace_seed(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
) -> Result<PathBuf, String> {
    let dir = config.work_dir.join(format!("timeline-{seed:016x}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let env = [(sweep::TRACE_DIR_VAR.to_string(), dir.display().to_string())];
    run_one(config, binaries, case, seed, &env)?;
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| e.to_string())?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "trace"))
        .collect();
    traces.sort();
    traces
        .pop()
        .ok_or_else(|| "the seed's run wrote no trace".to_string())
}

/// Runs `seed` of `case` once more, writing its trace into `dir` as a
/// `--trace` sweep names it; returns the trace's path.
pub fn trace_failing(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    dir: &Path,
) -> Result<PathBuf, String> {
    let env = [
        (sweep::TRACE_DIR_VAR.to_string(), dir.display().to_string()),
        (sweep::TRACE_NAMED_VAR.to_string(), "1".to_string()),
    ];
    run_one(config, binaries, case, seed, &env)?;
    let name = sweep::trace_file_name((!case.whole_binary).then_some(case.name.as_str()), seed, 1);
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the seed's run wrote no trace at {}",
            path.display()
        ))
    }
}

/// The seeds of a process, as `SIM_SWEEP_SEEDS` takes them: compact
/// (`start..end/step` for the runs of a share), and through a file when
/// they are still long (a long list of the user's), since an environment
/// variable has a size limit.
pub(crate) fn seeds_value(
    config: &SweepConfig,
    counter: u64,
    items: &[sweep::SeedItem],
) -> Result<String, String> {
    let text = sweep::encode_items(items);
    if text.len() <= SEEDS_INLINE_BYTES_MAX {
        return Ok(text);
    }
    let path = config.work_dir.join(format!("job-{counter}.seeds"));
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!("@{}", path.display()))
}

/// The longest `SIM_SWEEP_SEEDS` kept in the environment (Linux refuses a
/// single variable of 128 KiB or more).
const SEEDS_INLINE_BYTES_MAX: usize = 16 * 1024;

/// The most of a log's end a failure's output is taken from.
const TAIL_BYTES_MAX: u64 = 64 * 1024;

/// The last `lines` lines a test printed, without libtest's own, and
/// without the failure's own panic report when the message carries it.
pub(crate) fn tail(path: &Path, lines: usize) -> String {
    tail_of(path, lines, true)
}

pub(crate) fn tail_of(path: &Path, lines: usize, cut_panic: bool) -> String {
    // The end of the log only: a process that runs thousands of failing
    // seeds grows its log, and reading it whole at each failure would make
    // the sweep quadratic.
    let mut text = Vec::new();
    if let Ok(mut file) = std::fs::File::open(path) {
        let len = file.metadata().map_or(0, |m| m.len());
        let from = len.saturating_sub(TAIL_BYTES_MAX);
        if file.seek(SeekFrom::Start(from)).is_ok() {
            let _ = file.read_to_end(&mut text);
        }
        if from > 0 {
            // A line cut in two at the start: drop it.
            match text.iter().position(|&b| b == b'\n') {
                Some(cut) => {
                    text.drain(..=cut);
                }
                None => text.clear(),
            }
        }
    }
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text
        .lines()
        .filter(|l| {
            !(l.trim().is_empty()
                || l.starts_with("running ")
                || (l.starts_with("test ") && l.trim_end().ends_with(" ...")))
        })
        .collect();
    // The failure's own panic report (and backtrace) ends the output; the
    // message already carries it.
    let end = all
        .iter()
        .rposition(|l| {
            l.starts_with("thread '") && (l.contains(" panicked at ") || l.contains("' failed ("))
        })
        .filter(|_| cut_panic)
        .unwrap_or(all.len());
    let start = end.saturating_sub(lines);
    all[start..end].join("\n")
}

/// The name of a signal that ended a test process.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "a signal",
    }
}

/// Makes the test process `command` starts die with this runner: a SIGKILL
/// the moment the runner's thread that started it ends, however it ended
/// (a CI timeout's `kill -9`, the OOM killer), and an exit before the test
/// runs if the runner is gone already. No worker outlives its runner.
pub(crate) fn die_with_runner(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let runner = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec the closure calls only prctl, getppid
    // and _exit, which are async-signal-safe, and allocates nothing (an
    // OS error is a number).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != runner {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}
