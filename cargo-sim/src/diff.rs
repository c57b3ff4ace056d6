//! `cargo sim diff A B`: where two traces part, and how the runs differ
//! (`sim_runtime::trace::compare`).

use std::path::Path;

/// Runs `cargo sim diff`: exit 0 when identical, 1 when they differ.
pub fn command(a: &Path, b: &Path) -> Result<std::process::ExitCode, String> {
    match sim_runtime::trace::compare::report(a, b)? {
        None => {
            let events = sim_runtime::trace::compare::summarize(a)?.events;
            println!("identical: {events} events");
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(report) => {
            println!("A: {}\nB: {}", a.display(), b.display());
            println!("{report}");
            Ok(std::process::ExitCode::FAILURE)
        }
    }
}
