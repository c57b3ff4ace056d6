//! `cargo sim`: runs a cargo command as a simulation build, and runs tests
//! over many seeds.
//!
//! - `cargo sim test`: builds the tests as a simulation build, then runs
//!   every selected test once per seed (`--seeds`) over `--jobs` processes,
//!   and reports each failing seed with its class and replay command
//!   (`runner/`, `report.rs`). Failing seeds are kept in the package's
//!   `sim-regressions/` and run first next time (`regressions.rs`).
//! - `cargo sim diff A B`: the first event where two traces differ.
//! - `cargo sim merge SHARD...`: one report from a sweep's shards
//!   (`merge.rs`).
//! - `cargo sim timeline TRACE`: a trace as an HTML timeline.
//! - `cargo sim history FILE`: a run's history of client operations, out
//!   of its trace, printed or checked (`history.rs`).
//! - `cargo sim <any other cargo command>`: that command, as a simulation
//!   build (`cargo sim run`, `cargo sim clippy`, `cargo sim nextest run`).
//!
//! The command line, each subcommand's help and options are `cli.rs`;
//! `cargo sim test`'s phases are `test/`.
//!
//! A simulation build swaps the `tokio` facade in for tokio across the
//! whole dependency graph (`[patch.crates-io]`), adds `--cfg simulation`
//! for rustc and rustdoc, and builds into a target directory of its own
//! (`config.rs`). The patch needs a lock that names the facade; the user's
//! `Cargo.lock` is journaled before it is swapped and put back after the
//! build, on any signal, and by the next run after a `kill -9` (`lock.rs`,
//! `signals.rs`).

mod cli;
mod compile;
mod config;
mod diff;
mod explore;
mod history;
mod identity;
mod lock;
mod merge;
mod outcomes;
mod process;
mod properties;
mod regressions;
mod report;
mod runner;
mod seeds;
mod shrink;
mod signals;
mod stale;
mod test;
mod timeline;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // As `cargo sim ...`, cargo passes "sim" first; as `cargo run -p
    // cargo-sim -- ...`, it may not.
    if args.first().is_some_and(|a| a == "sim") {
        args.remove(0);
    }
    // `cargo sim test`'s arguments are ours, cargo's and the tests': only
    // ours go to clap, the rest are carried beside.
    let mut argv = vec!["cargo sim".to_string()];
    let mut test_args = None;
    if args.first().is_some_and(|a| a == "test") {
        let (ours, cargo, tests) = match cli::split_test_args(&args[1..]) {
            Ok(split) => split,
            Err(message) => {
                eprintln!("sim: error: {message}");
                return ExitCode::from(2);
            }
        };
        argv.push("test".to_string());
        argv.extend(ours);
        test_args = Some(test::TestArgs {
            raw: args[1..].to_vec(),
            cargo,
            tests,
        });
    } else if args.is_empty() {
        // `cargo sim` alone: the help, as `cargo` alone prints its own.
        argv.push("--help".to_string());
    } else {
        argv.extend(args);
    }
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    sim_runtime::settings::warn_unknown();
    stale::warn_if_older_than_its_checkout();
    signals::install();
    if matches!(
        cli.command,
        Command::Diff(_) | Command::Timeline(_) | Command::History(_)
    ) {
        signals::die_quietly_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Test(options) => test::command(options, test_args.expect("split above")),
        Command::Run { args } => {
            let mut argv = vec!["run".to_string()];
            argv.extend(args);
            passthrough(&argv)
        }
        Command::Diff(args) => diff::command(&args.a, &args.b),
        Command::Merge(args) => merge::command(args),
        Command::Timeline(args) => {
            timeline::command(&args.trace, args.output, (args.last, args.axis))
        }
        Command::History(args) => history::command(&args),
        Command::Cargo(args) => passthrough(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("sim: error: {message}");
            ExitCode::from(2)
        }
    }
}

pub(crate) fn exit_for_signal(signal: i32) -> ExitCode {
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}

/// Any cargo command other than `test`, as a simulation build.
pub(crate) fn passthrough(args: &[String]) -> Result<ExitCode, String> {
    let sim = config::SimBuild::prepare()?;
    let files = lock::LockFiles::new(&sim.root, &sim.target);
    let mut held = files.acquire()?;
    held.swap_in()?;
    sim.point_lock_at_facade()?;
    // cargo does not pass a `--config` given before a third-party
    // subcommand (clippy, nextest) on to it, so it goes after the
    // subcommand, where built-in ones take it too (nextest: after its own
    // subcommand, `nextest run`).
    let split = if args[0] == "nextest" && args.len() > 1 {
        2
    } else {
        1
    };
    let mut command = sim.cargo_without_config();
    command
        .args(&args[..split])
        .arg("--config")
        .arg(&sim.config);
    command.args(&args[split..]);
    let words: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
    command.env(sim_runtime::settings::CARGO_ARGS.name, words.join(" "));
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let status = signals::wait(&mut child);
    held.swap_out()?;
    match status {
        Ok(status) => Ok(match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(code.clamp(1, 255) as u8),
            None => ExitCode::FAILURE,
        }),
        Err(signals::Interrupted(signal)) => Ok(exit_for_signal(signal)),
    }
}

fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command that replays one of `binary`'s tests (up to `--`), and the
/// same after the `SIM_*` settings that change a run: the prefix a test
/// process's own seed line starts with.
pub(crate) fn replay_command(binary: &compile::TestBinary, kept: &[String]) -> (String, String) {
    let mut words: Vec<String> = ["cargo", "sim", "test", "-p"].map(String::from).to_vec();
    words.push(binary.package.clone());
    words.extend(kept.iter().cloned());
    words.extend(binary.target_args());
    let join = |words: &[String]| {
        words
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let command = join(&words);
    let mut prefixed = identity::sim_settings();
    prefixed.extend(words);
    (command, join(&prefixed))
}

/// `3 tests`, `1 test`, `2 binaries`, `2 tests ran`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    let (word, rest) = noun.split_once(' ').unwrap_or((noun, ""));
    let word = match word.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{word}s"),
    };
    if rest.is_empty() {
        format!("{n} {word}")
    } else {
        format!("{n} {word} {rest}")
    }
}
