//! The command line: `cargo sim`'s help, `cargo sim test`'s own options,
//! and how `cargo sim test`'s arguments split between it, cargo and the
//! test binaries.

use clap::Parser;
use std::path::PathBuf;

pub(crate) const ABOUT: &str =
    "Run a cargo command on the deterministic simulator, and sweep tests over seeds.";

pub(crate) const AFTER_HELP: &str = "\
COMMANDS:
    test [OPTIONS] [CARGO TEST ARGS] [-- TEST ARGS]
                     build the tests as a simulation build and run every selected
                     test once per seed (see `cargo sim test --help`)
    diff A B         print the first event where two trace files differ
    merge [--junit FILE] SHARD...
                     one report from a sweep's shards (--partition K/N): each
                     SHARD a JUnit file or a directory of one shard's artifacts
                     (its JUnit files and sim-regressions/*.txt); seeds and
                     failures by class summed per test, the merged JUnit file
                     written, the shards' saved seeds added to this workspace's
                     sim-regressions files
    timeline TRACE [-o PAGE.html] [--last N]
                     draw a trace file as a self-contained HTML page: a lane per
                     host, arrows from sends to deliveries, stubs for losses,
                     bands for partitions and crashes (the last N events,
                     default 2000)
    <cargo command>  any other cargo command as a simulation build: run, build,
                     check, clippy, bench, doc, nextest run, ...

TEST OPTIONS (cargo sim test; every other argument goes to cargo test):
    --seeds SPEC             N (seeds 0..N, decimal), A..B, A..=B, or a list
                             0x2a,7 (default: SIM_SEED, or one fresh seed)
    --seed S                 run one seed (hex or decimal), as a replay does
    --for DURATION           a soak run: fresh seeds for 30s, 45m, 8h, 2d, or until
                             Ctrl-C, every failing seed kept, then the summary
                             (--seeds .. : until Ctrl-C)
    --trace DIR              write each seed's trace as DIR/<test>-<seed>.trace
    --trace-failing          with --trace: the failing seeds' traces only
    -j, --jobs N             test processes at once (default: the cores)
    --keep-going             run every seed, not only up to the first failure
                             (cargo test has no --keep-going; a target that does
                             not compile never stops the others; cargo build's
                             own: cargo sim build --keep-going)
    --check-determinism      run each seed again in a fresh process, compare traces
    --junit FILE             write a JUnit XML report
    --partition K/N          run share K of N of the seeds (a CI matrix); auto/N
                             takes K from a Kubernetes Indexed Job's
                             JOB_COMPLETION_INDEX
    --no-doc                 skip doc tests
    --no-save                do not save failing seeds to sim-regressions/
    --swarm                  a one-host swarm per seed for plain tests: loopback
                             latency, segment cuts, disk faults, poll cost
                             (SIM_SWARM=1)
    --timeline DIR           write each failing seed's timeline (HTML) into DIR
    --shrink DIR             shrink each failing seed (FIFO schedule, fewer faults,
                             fast links) and write what remains, as a scenario
                             and as a decision file, to DIR
    -v, --verbose            print every run's lines and every test's output

EXAMPLES:
    cargo sim test                          every test, one fresh seed
    cargo sim test --seeds 1000             every test, seeds 0..1000
    cargo sim test --seeds 0x2a,7 -p app    two seeds, one package
    SIM_SEED=0x2a cargo sim test -p app --test api -- lost_update --exact
                                            replay one test at one seed
    SIM_REPLAY=shrunk/lost_update-0x2a.decisions cargo sim test -p app --test api
                                            replay a decision file
    cargo sim test --seeds 1000 --check-determinism
    cargo sim test --seeds 10000 --partition 2/4 --junit sim.xml
    cargo sim run -p app --bin server       a binary on the simulator
    cargo sim diff a.trace b.trace

ENVIRONMENT:
    SIM_SEED                 the seed of every run (decimal or 0x hex); unset: fresh
    SIM_TRACE                write each run's trace to this path (see the README)
    SIM_TIME_LIMIT_S         fail a run whose virtual clock passes this (default none)
    SIM_STEP_LIMIT           fail a run after this many polls (default 200000000)
    SIM_INSTANT_STEP_LIMIT   livelock: fail after this many polls at one virtual
                             instant (default 2000000)
    SIM_POLL_COST_MAX_NS     each poll takes up to this much virtual time (default 0)
    SIM_EPOCH_UNIX_S         what SystemTime::now() reads at the start (default
                             1735689600, 2025-01-01)
    SIM_POLICY               random (default) or pct: how the next ready task is picked
    SIM_PCT_DEPTH            pct: ordering constraints aimed at (default 3)
    SIM_PCT_HORIZON          pct: decisions the change points spread over (measured
                             for #[tokio::test]s; default 10000)
    SIM_TRACE_BYTES          payload bytes a trace line shows (default 32)
    SIM_TRACE_LOGS           error|warn|info|debug|trace: the service's tracing
                             events at this level go into the trace file
    SIM_RECORD               write each run's decision file to this path
    SIM_REPLAY               replay the run a decision file records (its seed,
                             settings and choices)
    SIM_SHRINK_SKIP          harness fault units left out (a shrunk run's replay line)
    SIM_SHRINK_FAST_LINKS    1: every harness link at 0 ms (a shrunk run's replay line)
    SIM_SHRINK_LATER         unit:ns,...: harness fault units applied later (shrinking)
    SIM_SHRINK_OUT           where a run lists its faults (set by --shrink)
    SIM_SHRINK_DRAWS_OUT     where a run lists what each link draw was for (set by
                             --shrink)
    SIM_SWARM                1: each run of a plain test draws a one-host swarm
                             (what --swarm sets; replay lines carry it)
    SIM_ALLOW_THREADS        1: let runs start real threads (gives up determinism)
    SIM_ALLOW_PROCESSES      1: let runs start real processes (gives up determinism)
    SIM_HANG_POLL_S          hang: wall seconds one poll may take (default 5)
    SIM_HANG_RUN_S           hang: wall seconds one run may take (default 300)
    SIM_VERBOSE              1: print every run's seed and hash lines (as -v)
    SIM_TOKIO_PATH           where the facade is (default: the checkout cargo-sim was
                             built from)

Your Cargo.lock is never left changed: it is journaled before the build and
put back after it, on Ctrl-C, SIGTERM and SIGHUP, and by the next cargo sim
after a kill -9.";

/// `cargo sim`.
#[derive(Parser, Debug)]
#[command(
    name = "cargo sim",
    bin_name = "cargo sim",
    version,
    about = ABOUT,
    after_help = AFTER_HELP,
    disable_help_subcommand = true
)]
pub(crate) struct Cli {
    /// The cargo command and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub(crate) command: Vec<String>,
}

/// `cargo sim test`'s own options. Every other argument goes to `cargo
/// test` (before `--`) or to the test binaries (after it).
#[derive(Parser, Debug, Default)]
#[command(
    name = "cargo sim test",
    bin_name = "cargo sim test",
    about = "Build the tests as a simulation build and run every selected test once per seed.",
    after_help = "\
Every other argument goes to `cargo test` (-p, --test, --features, --release, ...);
after `--`, test filters, --exact, --skip and --ignored select the tests.

Each failing seed is reported with its class (panic, deadlock, time-limit,
step-limit, livelock, hang, escape, crash, nondeterminism) and a replay command,
and saved to sim-regressions/<target>.txt in the package, which every later
`cargo sim test` runs first. Exit code: 0 when every seed passed, 101 otherwise."
)]
pub(crate) struct TestOptions {
    /// The seeds: a count N (seeds 0..N, decimal), a range A..B or A..=B,
    /// or a list 0x2a,7. Default: SIM_SEED, or one fresh seed.
    #[arg(long, value_name = "SPEC")]
    pub(crate) seeds: Option<String>,
    /// A soak run: fresh seeds for this long (`30s`, `45m`, `8h`, `2d`),
    /// or until Ctrl-C, every failing seed kept; then the summary.
    #[arg(long = "for", value_name = "DURATION", conflicts_with_all = ["seeds", "seed"])]
    pub(crate) soak: Option<String>,
    /// Run one seed (hex or decimal), as a replay does: the saved seeds
    /// are not run first.
    #[arg(long, value_name = "SEED", conflicts_with = "seeds")]
    pub(crate) seed: Option<String>,
    /// Write each seed's trace into DIR as `<test>-<seed>.trace` (with
    /// `--trace-failing`, only the failing seeds', run once more).
    #[arg(long, value_name = "DIR")]
    pub(crate) trace: Option<PathBuf>,
    /// With `--trace`: only the failing seeds' traces.
    #[arg(long, requires = "trace")]
    pub(crate) trace_failing: bool,
    /// Test processes at once (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// Run every seed, not only up to a test's first failing seed.
    #[arg(long)]
    pub(crate) keep_going: bool,
    /// Run each seed a second time in a fresh process and compare the
    /// traces: a difference fails with class nondeterminism.
    #[arg(long)]
    pub(crate) check_determinism: bool,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Run only share K of N of the seeds (for a CI matrix).
    #[arg(long, value_name = "K/N")]
    pub(crate) partition: Option<String>,
    /// Do not run doc tests.
    #[arg(long)]
    pub(crate) no_doc: bool,
    /// Do not save failing seeds to sim-regressions/.
    #[arg(long)]
    pub(crate) no_save: bool,
    /// Draw a one-host swarm for each seed of a plain test (`SIM_SWARM=1`).
    #[arg(long)]
    pub(crate) swarm: bool,
    /// Print every run's lines and every test's output.
    #[arg(long, short = 'v')]
    pub(crate) verbose: bool,
    /// Write the timeline (an HTML page, as `cargo sim timeline` draws it)
    /// of each failing test's first failing seed into this directory; the
    /// seed runs once more to write its trace.
    #[arg(long, value_name = "DIR")]
    pub(crate) timeline: Option<PathBuf>,
    /// Shrink each failing harness test's first failing seed: leave out
    /// the faults it does not need, make links fast if it still fails,
    /// and write what remains (and the settings that replay it) to DIR.
    #[arg(long, value_name = "DIR")]
    pub(crate) shrink: Option<PathBuf>,
}

/// The options of `TestOptions` that take a value.
const VALUE_OPTIONS: &[&str] = &[
    "--seeds",
    "--for",
    "--seed",
    "--trace",
    "--jobs",
    "-j",
    "--junit",
    "--partition",
    "--timeline",
    "--shrink",
];
/// The options of `TestOptions` that are flags.
const FLAG_OPTIONS: &[&str] = &[
    "--keep-going",
    "--trace-failing",
    "--check-determinism",
    "--no-doc",
    "--no-save",
    "--swarm",
    "--verbose",
    "-v",
];

/// Splits `cargo sim test`'s arguments into ours, cargo's and the test
/// binaries'.
pub(crate) fn split_test_args(args: &[String]) -> (Vec<String>, Vec<String>, Vec<String>) {
    let mut ours = Vec::new();
    let mut cargo = Vec::new();
    let mut tests = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            tests.extend(iter.by_ref().cloned());
            break;
        }
        let name = arg.split('=').next().unwrap_or(arg);
        if FLAG_OPTIONS.contains(&arg.as_str()) || arg == "--help" || arg == "-h" {
            ours.push(arg.clone());
        } else if VALUE_OPTIONS.contains(&name) {
            ours.push(arg.clone());
            if !arg.contains('=') {
                if let Some(value) = iter.next() {
                    ours.push(value.clone());
                }
            }
        } else {
            cargo.push(arg.clone());
        }
    }
    (ours, cargo, tests)
}

/// Cargo arguments that select packages or targets: the runner chooses its
/// own for replay lines and doc tests.
const SELECTION_VALUE: &[&str] = &[
    "-p",
    "--package",
    "--exclude",
    "--bin",
    "--test",
    "--example",
    "--bench",
];
const SELECTION_FLAG: &[&str] = &[
    "--workspace",
    "--all",
    "--lib",
    "--bins",
    "--tests",
    "--examples",
    "--benches",
    "--all-targets",
    "--doc",
];

/// The user's cargo arguments without package and target selection (the
/// features, profile and target they build with), and whether they chose
/// targets themselves.
pub(crate) fn build_args(cargo_args: &[String]) -> (Vec<String>, bool) {
    let mut kept = Vec::new();
    let mut targets_chosen = false;
    let mut iter = cargo_args.iter();
    while let Some(arg) = iter.next() {
        let name = arg.split('=').next().unwrap_or(arg);
        if SELECTION_VALUE.contains(&name) {
            if !matches!(name, "-p" | "--package" | "--exclude") {
                targets_chosen = true;
            }
            // `--test=NAME` carries its value; `--test NAME` does not.
            if !arg.contains('=') {
                iter.next();
            }
        } else if SELECTION_FLAG.contains(&arg.as_str()) {
            if !matches!(arg.as_str(), "--workspace" | "--all") {
                targets_chosen = true;
            }
        } else if name.starts_with("-p") && name.len() > 2 {
            // -pNAME
        } else if matches!(
            arg.as_str(),
            "-q" | "--quiet" | "-v" | "-vv" | "--no-fail-fast"
        ) {
            // Output of the build only.
        } else {
            kept.push(arg.clone());
        }
    }
    (kept, targets_chosen)
}
