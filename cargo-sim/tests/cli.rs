//! `cargo sim --help` names every command, every option of `cargo sim
//! test` and every `SIM_*` variable a user can set; `--version` works; a
//! bad argument is an error that names it. Plain build only.
#![cfg(not(simulation))]

use std::process::Command;

fn cargo_sim(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .arg("sim")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `SIM_*` variables the runtime and the runner read, from their
/// sources, less the runner's protocol with its test processes.
fn user_variables() -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut names = Vec::new();
    for file in [
        "sim-runtime/src/config.rs",
        "sim-runtime/src/sweep/vars.rs",
        "sim-runtime/src/seed.rs",
        "cargo-sim/src/config.rs",
    ] {
        let text = std::fs::read_to_string(format!("{root}/{file}")).unwrap();
        for piece in text.split('"').skip(1).step_by(2) {
            let internal = piece.starts_with("SIM_SWEEP")
                || piece == "SIM_REPLAY_PREFIX"
                || piece == "SIM_CARGO_ARGS";
            let is_name = piece.len() > 4
                && piece.starts_with("SIM_")
                && piece.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if is_name && !internal && !names.contains(&piece.to_string()) {
                names.push(piece.to_string());
            }
        }
    }
    assert!(names.len() >= 8, "{names:?}");
    names
}

#[test]
fn help_names_every_command_option_and_variable() {
    let (ok, help, _) = cargo_sim(&["--help"]);
    assert!(ok);
    for word in [
        "test",
        "diff",
        "nextest",
        "--seeds",
        "--jobs",
        "--keep-going",
        "--check-determinism",
        "--junit",
        "--partition",
        "--no-doc",
        "--no-save",
        "--swarm",
        "--verbose",
    ] {
        assert!(help.contains(word), "--help lacks {word}:\n{help}");
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    for name in user_variables() {
        assert!(help.contains(&name), "--help lacks {name}:\n{help}");
        assert!(readme.contains(&name), "the README lacks {name}");
    }
    let (ok, test_help, _) = cargo_sim(&["test", "--help"]);
    assert!(ok);
    assert!(test_help.contains("--check-determinism"), "{test_help}");
    let (ok, version, _) = cargo_sim(&["--version"]);
    assert!(ok);
    assert!(version.starts_with("cargo sim 0."), "{version}");
}

#[test]
fn bad_arguments_name_the_input_and_the_fix() {
    let dir = env!("CARGO_MANIFEST_DIR");
    for (args, expected) in [
        (vec!["test", "--seeds", "banana"], "--seeds \"banana\""),
        (vec!["test", "--seeds", "9..3"], "empty range"),
        (vec!["test", "--partition", "3/2"], "--partition \"3/2\""),
        (vec!["test", "--jobs", "0"], "--jobs 0"),
        (vec!["diff", "only-one"], "usage: cargo sim diff"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
            .arg("sim")
            .args(&args)
            .current_dir(dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}
