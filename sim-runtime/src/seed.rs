//! What a run says on stderr: its seed and replay command before it starts,
//! and its trace hash when it ends. Both go straight to file descriptor 2,
//! past the test harness's output capture, so they survive a panic or a kill.

use crate::summary::RunSummary;
use std::io::Write;
use std::time::Duration;

/// The command prefix a replay line starts with (set by the runner, such as
/// `cargo sim test -p app --test api`).
pub const REPLAY_VAR: &str = crate::settings::REPLAY_PREFIX.name;

/// Set by `cargo sim` for the processes it runs: the arguments it was given,
/// so a run can print the exact command that replays it.
pub const CARGO_ARGS_VAR: &str = crate::settings::CARGO_ARGS.name;

fn write_stderr(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// The command that replays a run with `seed`.
pub fn replay_command(seed: u64, test_name: Option<&str>) -> String {
    let mut command = format!("SIM_SEED={seed:#x} ");
    // Under `cargo sim test`, the runner says how to select this test's
    // target; the filter is added here, once.
    if let (Some(prefix), Some(name)) = (crate::settings::REPLAY_PREFIX.value(), test_name) {
        command.push_str(&prefix);
        command.push_str(" -- ");
        command.push_str(name);
        command.push_str(" --exact");
        return command;
    }
    match crate::settings::CARGO_ARGS.value() {
        Some(args) if !args.is_empty() => {
            command.push_str("cargo sim ");
            command.push_str(&args);
            if let Some(name) = test_name {
                if !args.split(' ').any(|a| a == "--") {
                    command.push_str(" --");
                }
                command.push(' ');
                command.push_str(name);
                command.push_str(" --exact");
            }
        }
        _ => {
            let mut args = std::env::args();
            command.push_str(&args.next().unwrap_or_default());
            match test_name {
                Some(name) => {
                    command.push(' ');
                    command.push_str(name);
                    command.push_str(" --exact");
                }
                None => {
                    for arg in args {
                        command.push(' ');
                        command.push_str(&arg);
                    }
                }
            }
        }
    }
    command
}

/// Prints the seed and the replay command of a run about to start.
pub fn announce(seed: u64, test_name: Option<&str>) {
    let name = test_name.unwrap_or("main");
    write_stderr(&format!(
        "sim: {name}: seed {seed:#x}; replay: {}\n",
        replay_command(seed, test_name)
    ));
}

/// Prints how a run ended: its events, virtual time and trace hash.
pub fn report(
    name: &str,
    summary: &RunSummary,
    path: Option<&std::path::Path>,
    policy: crate::config::Policy,
) {
    let file = match path {
        Some(path) => format!(", trace file {}", path.display()),
        None => String::new(),
    };
    let policy = match policy {
        crate::config::Policy::Random => String::new(),
        pct => format!(", policy {pct}"),
    };
    write_stderr(&format!(
        "sim: {name}: seed {:#x}: {} events, virtual time {:?}, trace sha256 {}{policy}{file}\n",
        summary.seed,
        summary.events,
        Duration::from_nanos(summary.end_ns),
        summary.trace_hash,
    ));
}
