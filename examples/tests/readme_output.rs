//! The README's first block is what `SIM_SEED=0x2a cargo sim run -q -p
//! sim-examples --bin jobs` prints, line for line (its `...` stands for
//! lines left out), trace hash included. Simulation build only: on real
//! tokio nothing is seeded.
#![cfg(simulation)]

use std::process::Command;

/// Whether `actual` fits `expected`, where a line `...` stands for any
/// number of lines.
fn fits(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((line, more)) if line.trim() == "..." => {
            (0..=actual.len()).any(|skip| fits(more, &actual[skip..]))
        }
        Some((line, more)) => actual.first() == Some(line) && fits(more, &actual[1..]),
    }
}

#[test]
fn the_readme_shows_what_the_jobs_example_prints() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let start = readme.find("<!-- jobs-output:start").expect("the block");
    let end = readme.find("<!-- jobs-output:end").expect("its end");
    let mut lines = readme[start..end]
        .lines()
        .skip_while(|l| !l.starts_with("$ "))
        .take_while(|l| !l.starts_with("```"));
    let command = lines.next().unwrap();
    assert_eq!(
        command,
        "$ SIM_SEED=0x2a cargo sim run -q -p sim-examples --bin jobs"
    );
    let expected: Vec<&str> = lines.collect();
    // What `cargo sim run` does: run the simulation build of the binary,
    // with the arguments it was given (they make the replay line).
    let output = Command::new(env!("CARGO_BIN_EXE_jobs"))
        .env("SIM_SEED", "0x2a")
        .env("SIM_CARGO_ARGS", "run -q -p sim-examples --bin jobs")
        .env_remove("SIM_TRACE")
        .env_remove("SIM_VERBOSE")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // On a terminal the seed line comes first and the hash line last.
    let err: Vec<&str> = stderr.lines().collect();
    let (first, last) = (err[0], err[err.len() - 1]);
    let mut actual = vec![first];
    actual.extend(stdout.lines());
    actual.push(last);
    assert_eq!(err.len(), 2, "{stderr}");
    assert!(
        fits(&expected, &actual),
        "the README shows:\n{}\n\nbut jobs printed:\n{}",
        expected.join("\n"),
        actual.join("\n")
    );
}
