//! The command line: `cargo sim`'s subcommands, each with its own help,
//! `cargo sim test`'s options, and how `cargo sim test`'s arguments split
//! between it, cargo and the test binaries.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const ABOUT: &str =
    "Run a cargo command on the deterministic simulator, and sweep tests over seeds.";

const AFTER_HELP: &str = "\
Any other cargo command (build, check, clippy, bench, doc, nextest run, ...)
runs as a simulation build, its arguments passed on to cargo.

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

`cargo sim help COMMAND` or `cargo sim COMMAND --help` prints a command's
help; `cargo sim test --help` lists its options and every SIM_* setting.

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
    arg_required_else_help = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// `cargo sim`'s subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Build the tests as a simulation build and run every selected test
    /// once per seed.
    Test(TestOptions),
    /// `cargo run` as a simulation build: every argument goes to cargo
    /// (`cargo sim run --help` is cargo's help of `run`).
    #[command(disable_help_flag = true)]
    Run {
        /// cargo run's arguments.
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "CARGO RUN ARGS"
        )]
        args: Vec<String>,
    },
    /// Print the first event where two trace files differ, and how the two
    /// runs differ (exit 0 when they are identical, 1 when not).
    Diff(DiffArgs),
    /// One report from a sweep's shards (`cargo sim test --partition K/N`).
    Merge(MergeArgs),
    /// Draw a trace file as a self-contained HTML page.
    Timeline(TimelineArgs),
    /// Print a run's history of client operations (`tokio::sim::history`),
    /// read out of its trace or a history file, or check it.
    History(HistoryArgs),
    /// Any other cargo command, as a simulation build.
    #[command(external_subcommand)]
    Cargo(Vec<String>),
}

/// `cargo sim diff`'s arguments.
#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// The first trace file (`SIM_TRACE`, `cargo sim test --trace`).
    #[arg(value_name = "TRACE A")]
    pub(crate) a: PathBuf,
    /// The second trace file.
    #[arg(value_name = "TRACE B")]
    pub(crate) b: PathBuf,
}

/// `cargo sim merge`'s arguments.
#[derive(Args, Debug)]
#[command(after_help = "\
Seeds and failures by class are summed per test over the shards, the merged
JUnit file is written (--junit), and the shards' saved seeds are added to
this workspace's sim-regressions/ files, so the next `cargo sim test` runs
them first. Exit code: 0 when no test failed in any shard, 101 otherwise.")]
pub(crate) struct MergeArgs {
    /// Write the merged JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Each a shard's JUnit file (`--junit`), or a directory of one shard's
    /// artifacts: its JUnit files and its `sim-regressions/*.txt`.
    #[arg(required = true, value_name = "SHARD")]
    pub(crate) shards: Vec<PathBuf>,
}

/// `cargo sim timeline`'s arguments.
#[derive(Args, Debug)]
#[command(after_help = "\
The page has a lane per host (and per task group, when a host runs several),
arrows from sends to deliveries, stubs for messages lost or still in flight,
and bands for partitions and crashes. It draws itself from the events
embedded in it: no network, no other file.")]
pub(crate) struct TimelineArgs {
    /// The trace file (`SIM_TRACE`, `cargo sim test --trace`).
    #[arg(value_name = "TRACE")]
    pub(crate) trace: PathBuf,
    /// The page to write (default: TRACE.html).
    #[arg(short = 'o', long = "output", value_name = "PAGE.html")]
    pub(crate) output: Option<PathBuf>,
    /// How many of the trace's last events to draw (the same default as a
    /// failure's timeline, `--timeline`).
    #[arg(long, value_name = "EVENTS", default_value_t = crate::timeline::EVENTS_DEFAULT, value_parser = event_count)]
    pub(crate) last: usize,
    /// The x axis: virtual time, event order, or `auto` (event order when
    /// time stands still for half the events or more).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) axis: crate::timeline::Axis,
}

/// `cargo sim history`'s arguments.
#[derive(Args, Debug)]
#[command(after_help = "\
A trace holds every history the run recorded, as notes (`history ops invoke #3
\"c1\" write \"x\" 1`). Printed as JSON lines (one event an object) or as
Jepsen's EDN. With --check, the history is checked instead, as Sim::check_history
checks it: exit 0 when it passes, 1 when it does not (or could not be decided
within the budget), with the smallest window of operations at fault, or each
anomaly's cycle.")]
pub(crate) struct HistoryArgs {
    /// A trace file (`SIM_TRACE`, `cargo sim test --trace`), or a history
    /// file: JSON lines (`.jsonl`) or EDN (`.edn`, Jepsen's `history.edn`).
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// Which history (default: the only one, or `ops`).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Print Jepsen's EDN instead of JSON lines.
    #[arg(long)]
    pub(crate) edn: bool,
    /// Check the history against this model instead of printing it.
    #[arg(long, value_enum, value_name = "MODEL")]
    pub(crate) check: Option<CheckModel>,
    /// With --check list-append or rw-register: the isolation level the
    /// store promises.
    #[arg(long, value_enum, default_value = "serializable")]
    pub(crate) isolation: IsolationArg,
    /// With --check and a linearizability model: the most model steps.
    #[arg(long, value_name = "STEPS", default_value_t = 10_000_000)]
    pub(crate) budget_steps: u64,
}

fn event_count(text: &str) -> Result<usize, String> {
    text.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{text:?}: expected a count of events, above 0"))
}

/// What `cargo sim test --help` prints after its options.
fn test_after_help() -> String {
    format!(
        "\
Every other argument goes to `cargo test` (-p, --test, --features, --release, ...);
after `--`, test filters, --exact, --skip and --ignored select the tests.

Each failing seed is reported with its class (panic, deadlock, time-limit,
step-limit, livelock, hang, escape, crash, nondeterminism) and a replay command,
and saved to sim-regressions/<target>.txt in the package, which every later
`cargo sim test` runs first. Exit code: 0 when every seed passed, 101 otherwise.

ENVIRONMENT:
{}",
        sim_runtime::settings::help_table()
    )
}

/// `cargo sim test`'s own options. Every other argument goes to `cargo
/// test` (before `--`) or to the test binaries (after it).
#[derive(Args, Debug, Default)]
#[command(
    override_usage = "cargo sim test [OPTIONS] [CARGO TEST ARGS] [-- TEST ARGS]",
    after_help = test_after_help()
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
    /// Write what the sweep says of the properties (`tokio::sim::assert_*`),
    /// test by test, and the ones never satisfied, as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
    /// Run only share K of N of the seeds (for a CI matrix).
    #[arg(long, value_name = "K/N")]
    pub(crate) partition: Option<String>,
    /// Do not run doc tests.
    #[arg(long)]
    pub(crate) no_doc: bool,
    /// Run every seed plain: no branch runs from the runs that reached a
    /// rare `assert_sometimes!` or `assert_reachable!` (guided exploration,
    /// on in sweeps of 10 seeds or more, takes up to half of them).
    #[arg(long)]
    pub(crate) no_explore: bool,
    /// Pass a sweep in which an `assert_always!`, `assert_sometimes!` or
    /// `assert_reachable!` was never satisfied (they are still listed).
    #[arg(long)]
    pub(crate) allow_unreached: bool,
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

/// `TestOptions`' spellings (`--seeds`, `-j`), each with whether it takes
/// a value, read from its clap definition.
fn test_option_names() -> Vec<(String, bool)> {
    let command = <TestOptions as clap::Args>::augment_args(clap::Command::new("test"));
    let mut names = Vec::new();
    for arg in command.get_arguments() {
        let takes_value = arg.get_action().takes_values();
        if let Some(long) = arg.get_long() {
            names.push((format!("--{long}"), takes_value));
        }
        if let Some(short) = arg.get_short() {
            names.push((format!("-{short}"), takes_value));
        }
    }
    names
}

/// cargo's options that take a value given apart (`-p app`): the word
/// after one is its value, not a test name.
const CARGO_VALUE: &[&str] = &[
    "-p",
    "--package",
    "--exclude",
    "--bin",
    "--test",
    "--example",
    "--bench",
    "-F",
    "--features",
    "--target",
    "--target-dir",
    "--manifest-path",
    "--profile",
    "--config",
    "-Z",
    "--color",
    "--message-format",
    "--lockfile-path",
];

/// The options of `cargo test` that take no value (those that take one
/// are [`CARGO_VALUE`]): an option neither ours nor cargo's is refused
/// before anything builds, in our words, not cargo's twice.
const CARGO_FLAG: &[&str] = &[
    "--no-run",
    "--no-fail-fast",
    "--future-incompat-report",
    "-q",
    "--quiet",
    "--workspace",
    "--all",
    "--lib",
    "--bins",
    "--examples",
    "--tests",
    "--benches",
    "--all-targets",
    "--doc",
    "--all-features",
    "--no-default-features",
    "-r",
    "--release",
    "--unit-graph",
    "--timings",
    "--ignore-rust-version",
    "--locked",
    "--offline",
    "--frozen",
];

/// Whether `arg` is an option of `cargo test`'s (`-vv` is cargo's
/// verbosity; `-Zflag` an unstable flag with its value joined).
fn is_cargo_option(arg: &str) -> bool {
    let name = arg.split('=').next().unwrap_or(arg);
    CARGO_FLAG.contains(&name)
        || CARGO_VALUE.contains(&name)
        || arg.starts_with("-Z")
        || (arg.len() > 1 && arg[1..].bytes().all(|b| b == b'v'))
}

/// Splits `cargo sim test`'s arguments into ours, cargo's and the test
/// binaries'. A bare word of cargo's (`cargo test NAME`) is a test name
/// filter: it goes to the test binaries, as cargo passes it on. An option
/// neither ours nor cargo's is an error.
pub(crate) fn split_test_args(args: &[String]) -> Result<SplitArgs, String> {
    let options = test_option_names();
    let mut ours = Vec::new();
    let mut cargo = Vec::new();
    let mut tests = Vec::new();
    let mut filters = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            tests.extend(iter.by_ref().cloned());
            break;
        }
        if !arg.starts_with('-')
            && !cargo
                .last()
                .is_some_and(|a: &String| CARGO_VALUE.contains(&a.as_str()))
        {
            filters.push(arg.clone());
            continue;
        }
        if !arg.starts_with('-') {
            // The value of cargo's option before it.
            cargo.push(arg.clone());
            continue;
        }
        let name = arg.split('=').next().unwrap_or(arg);
        let option = options.iter().find(|(spelling, _)| spelling == name);
        if arg == "--help" || arg == "-h" || option.is_some_and(|(_, value)| !value) {
            ours.push(arg.clone());
        } else if option.is_some() {
            ours.push(arg.clone());
            if !arg.contains('=') {
                if let Some(value) = iter.next() {
                    ours.push(value.clone());
                }
            }
        } else if is_cargo_option(arg) {
            cargo.push(arg.clone());
        } else {
            return Err(format!(
                "`{arg}` is not an option of cargo sim test nor of cargo test: `cargo sim test --help` lists the first, `cargo test --help` the second; a test binary's own options go after `--`"
            ));
        }
    }
    filters.extend(tests);
    Ok((ours, cargo, filters))
}

/// `cargo sim test`'s arguments split: ours, cargo's and the test
/// binaries'.
pub(crate) type SplitArgs = (Vec<String>, Vec<String>, Vec<String>);

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

/// The models `--check` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CheckModel {
    /// One register: read, write, cas.
    Register,
    /// A register per key.
    Kv,
    /// A set per key: add, read.
    Set,
    /// A FIFO queue per key: enqueue, dequeue.
    Queue,
    /// A counter per key: add, read.
    Counter,
    /// Transactions appending to lists (Elle).
    ListAppend,
    /// Transactions writing registers (Elle).
    RwRegister,
}

/// `--isolation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum IsolationArg {
    /// No G0, G1a, G1b, G1c.
    ReadCommitted,
    /// Also no G-single, no lost update.
    SnapshotIsolation,
    /// No cycle.
    Serializable,
    /// No cycle with real-time order either.
    StrictSerializable,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// Our options (flags, values given apart or with `=`, short forms) go
    /// to clap, the rest to cargo, and what follows `--` to the tests.
    #[test]
    fn test_arguments_split_between_ours_cargo_and_the_tests() {
        let args = strings(&[
            "--seeds",
            "3",
            "-p",
            "app",
            "--keep-going",
            "--jobs=2",
            "-j",
            "4",
            "--release",
            "-v",
            "--",
            "name",
            "--exact",
        ]);
        let (ours, cargo, tests) = split_test_args(&args).unwrap();
        assert_eq!(
            ours,
            strings(&["--seeds", "3", "--keep-going", "--jobs=2", "-j", "4", "-v"])
        );
        assert_eq!(cargo, strings(&["-p", "app", "--release"]));
        assert_eq!(tests, strings(&["name", "--exact"]));
    }

    /// `cargo sim test NAME` filters as `cargo test NAME` does: the bare
    /// word goes to the test binaries, a value of cargo's stays with it.
    #[test]
    fn a_bare_word_is_a_test_name_filter() {
        let args = strings(&["--test", "kv", "elects", "--features", "x", "--", "--exact"]);
        let (_, cargo, tests) = split_test_args(&args).unwrap();
        assert_eq!(cargo, strings(&["--test", "kv", "--features", "x"]));
        assert_eq!(tests, strings(&["elects", "--exact"]));
    }

    /// An option neither ours nor cargo's is refused, naming it.
    #[test]
    fn an_unknown_option_is_refused() {
        let error = split_test_args(&strings(&["--seeds", "3", "--bogus"])).unwrap_err();
        assert!(error.starts_with("`--bogus` is not an option"), "{error}");
        let known = [
            "-vv",
            "--release",
            "--features=x",
            "-Zbuild-std",
            "--locked",
        ];
        assert!(split_test_args(&strings(&known)).is_ok());
    }

    /// Every option clap knows is one the split knows, with its arity.
    #[test]
    fn the_split_knows_every_option_of_test_options() {
        let names = test_option_names();
        for (spelling, value) in [
            ("--seeds", true),
            ("--for", true),
            ("-j", true),
            ("--swarm", false),
            ("--trace-failing", false),
        ] {
            assert!(
                names.contains(&(spelling.to_string(), value)),
                "{spelling}: {names:?}"
            );
        }
    }
}
