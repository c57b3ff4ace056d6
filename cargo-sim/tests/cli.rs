//! `cargo sim --help` names every command, each subcommand has its own
//! help, `cargo sim test --help` names every option and every `SIM_*`
//! setting; `--version` works; a bad argument is an error that names it; a
//! misspelt setting gets a warning. Plain build only.
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

#[test]
fn help_names_every_command_option_and_setting() {
    let (ok, help, _) = cargo_sim(&["--help"]);
    assert!(ok);
    for word in ["test", "run", "diff", "merge", "timeline", "nextest"] {
        assert!(help.contains(word), "--help lacks {word}:\n{help}");
    }
    let (ok, test_help, _) = cargo_sim(&["test", "--help"]);
    assert!(ok);
    for word in [
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
        assert!(
            test_help.contains(word),
            "test --help lacks {word}:\n{test_help}"
        );
    }
    // Every setting, from the registry the simulator reads them through.
    for setting in sim_runtime::settings::ALL {
        assert!(
            test_help.contains(&format!("{}=<", setting.name)),
            "test --help lacks {}:\n{test_help}",
            setting.name
        );
    }
    let (ok, version, _) = cargo_sim(&["--version"]);
    assert!(ok);
    assert!(version.starts_with("cargo sim 0."), "{version}");
}

/// `cargo sim X --help` and `cargo sim help X` print X's own help, for
/// every subcommand of ours.
#[test]
fn every_subcommand_has_its_own_help() {
    for command in ["test", "diff", "merge", "timeline"] {
        let usage = format!("Usage: cargo sim {command}");
        for args in [vec![command, "--help"], vec!["help", command]] {
            let (ok, help, stderr) = cargo_sim(&args);
            assert!(ok, "{args:?}: {stderr}");
            assert!(help.contains(&usage), "{args:?} printed:\n{help}");
        }
    }
    // `run` is cargo's: its own help says so, and `--help` after it is cargo's.
    let (ok, help, _) = cargo_sim(&["help", "run"]);
    assert!(ok);
    assert!(help.contains("cargo sim run --help"), "{help}");
}

/// The guide's table of settings is the registry's.
#[test]
fn the_guide_lists_the_settings_as_the_registry_does() {
    let chapter =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/settings.md"))
            .unwrap();
    let table = sim_runtime::settings::markdown_table();
    assert!(
        chapter.contains(&table),
        "docs/settings.md's table differs from sim_runtime::settings::markdown_table(); \
         put this in its place:\n{table}"
    );
}

/// A misspelt `SIM_*` variable is named, with the setting it is nearest.
#[test]
fn a_misspelt_setting_gets_a_warning_with_the_nearest_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "diff", "/nonexistent-a", "/nonexistent-b"])
        .env("SIM_SEEDS", "100")
        .env("SIM_TRACE_BYTE", "8")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("sim: warning: SIM_SEEDS is not a setting; did you mean SIM_SEED?"),
        "{stderr}"
    );
    assert!(
        stderr.contains("SIM_TRACE_BYTE is not a setting; did you mean SIM_TRACE_BYTES?"),
        "{stderr}"
    );
}

#[test]
fn bad_arguments_name_the_input_and_the_fix() {
    let dir = env!("CARGO_MANIFEST_DIR");
    for (args, expected) in [
        (vec!["test", "--seeds", "banana"], "--seeds \"banana\""),
        (vec!["test", "--seeds", "9..3"], "empty range"),
        (vec!["test", "--partition", "3/2"], "--partition \"3/2\""),
        (vec!["test", "--jobs", "0"], "--jobs 0"),
        (vec!["diff", "only-one"], "Usage: cargo sim diff"),
        (
            vec!["timeline", "t", "--last", "0"],
            "expected a count of events, above 0",
        ),
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

/// Every cargo command cargo sim passes on is a simulation build, the
/// third-party ones too: cargo does not hand a `--config` given before
/// `clippy` to it, so `cargo sim clippy` once checked the plain build.
#[test]
fn passed_on_commands_build_the_simulation() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sim-cfg-probe");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"sim-cfg-probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "#[cfg(simulation)]\ncompile_error!(\"this is the simulation build\");\n",
    )
    .unwrap();
    for command in ["check", "clippy"] {
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
            .args(["sim", command])
            .current_dir(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("this is the simulation build"),
            "cargo sim {command} did not build with --cfg simulation:\n{stderr}"
        );
    }
}

/// The checkout this test was built from.
fn checkout() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `cargo sim` installed (on `PATH`) and run in this checkout, as the
/// README's first command leaves it: cargo says nothing of its own. A
/// workspace alias named `sim` beside the installed binary made cargo warn
/// on every command ("user-defined alias `sim` is shadowing an external
/// subcommand"), a warning cargo means to make an error.
#[test]
fn an_installed_cargo_sim_in_the_checkout_draws_no_cargo_warning() {
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .parent()
        .unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["sim", "--version"])
        .current_dir(checkout())
        .env("PATH", path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("cargo sim 0."),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "cargo warned:\n{stderr}");
}

/// A copy of the runner older than the sources of the checkout it was
/// built from (an install from before a pull) says so when it runs in the
/// checkout, and says nothing elsewhere or when it is current.
#[test]
fn an_installed_cargo_sim_older_than_its_checkout_says_so() {
    let dir = std::env::temp_dir().join(format!("sim-stale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let installed = dir.join("cargo-sim");
    std::fs::copy(env!("CARGO_BIN_EXE_cargo-sim"), &installed).unwrap();
    let run = |cwd: &std::path::Path| {
        let out = output_once_not_busy(
            Command::new(&installed)
                .args(["sim", "diff", "/nonexistent-a", "/nonexistent-b"])
                .current_dir(cwd),
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // Current: the copy is newer than every source file.
    let current = run(&checkout());
    assert!(!current.contains("was built before"), "{current}");
    // A year old.
    let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(365 * 86_400);
    std::fs::File::options()
        .write(true)
        .open(&installed)
        .unwrap()
        .set_modified(year_ago)
        .unwrap();
    let stale = run(&checkout());
    assert!(
        stale.contains("was built before the last change to its sources")
            && stale.contains("cargo install --locked --path cargo-sim"),
        "{stale}"
    );
    let elsewhere = run(&dir);
    assert!(!elsewhere.contains("was built before"), "{elsewhere}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `command` once its program is no longer busy. A file this test has
/// just written can be refused to `exec` (ETXTBSY) for a moment: another
/// test's process, forked meanwhile, holds a copy of the descriptor it was
/// written through until it starts its own program.
fn output_once_not_busy(command: &mut Command) -> std::process::Output {
    const TRIES_MAX: u32 = 500;
    for _ in 0..TRIES_MAX {
        match command.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            result => return result.unwrap(),
        }
    }
    panic!("{command:?} stayed busy for {TRIES_MAX} tries");
}
