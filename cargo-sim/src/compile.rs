//! Building the test binaries of a simulation build and listing their tests.

use crate::config::SimBuild;
use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Which target of a package a test binary is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TargetKind {
    /// The library's unit tests (`--lib`).
    Lib,
    /// A binary's unit tests (`--bin NAME`).
    Bin,
    /// An integration test (`--test NAME`).
    Test,
    /// An example's tests (`--example NAME`).
    Example,
    /// A bench target's tests (`--bench NAME`).
    Bench,
}

/// One test binary of the build.
#[derive(Clone, Debug)]
pub struct TestBinary {
    /// The package's name.
    pub package: String,
    /// The package's version.
    pub version: String,
    /// The directory of the package's manifest.
    pub manifest_dir: PathBuf,
    /// The target's kind.
    pub kind: TargetKind,
    /// The target's name.
    pub name: String,
    /// The executable.
    pub path: PathBuf,
}

impl TestBinary {
    /// The target as cargo's arguments name it: `--test kv`, `--lib`.
    pub fn target_label(&self) -> String {
        self.target_args().join(" ")
    }

    /// The cargo arguments that select this target alone.
    pub fn target_args(&self) -> Vec<String> {
        let flag = match self.kind {
            TargetKind::Lib => return vec!["--lib".to_string()],
            TargetKind::Bin => "--bin",
            TargetKind::Test => "--test",
            TargetKind::Example => "--example",
            TargetKind::Bench => "--bench",
        };
        vec![flag.to_string(), self.name.clone()]
    }

    /// The variables cargo sets for a test it runs (tests read
    /// `CARGO_MANIFEST_DIR` and the like at run time too), and the library
    /// path it extends for dynamic libraries of the build.
    pub fn cargo_env(&self) -> Vec<(String, std::ffi::OsString)> {
        let mut env: Vec<(String, std::ffi::OsString)> = vec![
            (
                "CARGO_MANIFEST_DIR".into(),
                self.manifest_dir.clone().into(),
            ),
            ("CARGO_PKG_NAME".into(), self.package.clone().into()),
            ("CARGO_PKG_VERSION".into(), self.version.clone().into()),
            (
                "CARGO_CRATE_NAME".into(),
                self.name.replace('-', "_").into(),
            ),
            ("CARGO".into(), crate::config::cargo()),
        ];
        let mut parts = self.version.splitn(3, '.');
        for key in ["MAJOR", "MINOR", "PATCH"] {
            let part = parts.next().unwrap_or("0");
            let part = part.split(['-', '+']).next().unwrap_or(part);
            env.push((format!("CARGO_PKG_VERSION_{key}"), part.to_string().into()));
        }
        if let Some(deps) = self.path.parent() {
            let mut paths = vec![deps.to_path_buf()];
            if let Some(profile) = deps.parent() {
                paths.push(profile.to_path_buf());
            }
            // A proc-macro crate's test binary links the standard library
            // dynamically, from the toolchain: cargo's own test runs find
            // it there, and so must ours (a `cargo sim` run from a shell
            // inherits no path to it).
            paths.extend(crate::config::rustc_target_libdir());
            paths.extend(std::env::split_paths(
                &std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default(),
            ));
            if let Ok(joined) = std::env::join_paths(paths) {
                env.push(("LD_LIBRARY_PATH".into(), joined));
            }
        }
        env
    }

    /// A file name for this target: `lib`, `test-api`.
    pub fn file_stem(&self) -> String {
        let kind = match self.kind {
            TargetKind::Lib => return "lib".to_string(),
            TargetKind::Bin => "bin",
            TargetKind::Test => "test",
            TargetKind::Example => "example",
            TargetKind::Bench => "bench",
        };
        let clean: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{kind}-{clean}")
    }
}

/// The package version in a cargo package id (see [`package_name`]).
pub fn package_version(id: &str) -> String {
    if let Some((_, fragment)) = id.rsplit_once('#') {
        return fragment
            .rsplit_once('@')
            .map_or(fragment, |(_, version)| version)
            .to_string();
    }
    id.split(' ').nth(1).unwrap_or("").to_string()
}

/// The package name in a cargo package id, in either of its formats:
/// `path+file:///w/app#0.1.0`, `registry+...#name@1.0`, `name 0.1.0 (...)`.
pub fn package_name(id: &str) -> String {
    if let Some((source, fragment)) = id.rsplit_once('#') {
        if let Some((name, _version)) = fragment.split_once('@') {
            return name.to_string();
        }
        return source
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(source)
            .to_string();
    }
    id.split(' ').next().unwrap_or(id).to_string()
}

/// Builds the tests (`cargo test --no-run` with the user's cargo arguments)
/// and returns their binaries, in the order cargo reported them.
pub fn build_tests(sim: &SimBuild, cargo_args: &[String]) -> Result<Vec<TestBinary>, String> {
    let mut command = sim.cargo();
    command
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(cargo_args);
    let (binaries, _, success) = run_build(command)?;
    if !success {
        return Err("the simulation build failed (see cargo's errors above)".to_string());
    }
    Ok(binaries)
}

/// A test target that does not compile, with cargo's first error for it.
#[derive(Clone, Debug)]
pub struct BrokenTarget {
    /// The package's name.
    pub package: String,
    /// `lib`, `bin NAME`, `test NAME`, ...
    pub target: String,
    /// The first error, as rustc renders it.
    pub error: String,
}

/// Builds what `cargo test` would, going on past targets that do not
/// compile (`cargo build --tests --keep-going`): the binaries that built,
/// and the targets that did not. For a workspace of the user's where one
/// test target is broken, the others still run.
pub fn build_tests_keep_going(
    sim: &SimBuild,
    cargo_args: &[String],
) -> Result<(Vec<TestBinary>, Vec<BrokenTarget>), String> {
    let mut command = sim.cargo();
    command
        .args(["build", "--tests", "--keep-going", "--message-format=json"])
        .args(cargo_args);
    let (binaries, broken, _) = run_build(command)?;
    Ok((binaries, broken))
}

/// Runs a cargo build that prints JSON messages; returns the test
/// binaries built, the targets with errors, and whether cargo succeeded.
fn run_build(mut command: Command) -> Result<(Vec<TestBinary>, Vec<BrokenTarget>, bool), String> {
    command.stdout(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    // Read on a thread, so that the wait below can watch for signals.
    let reader = std::thread::spawn(move || {
        let mut binaries = Vec::new();
        let mut broken: Vec<BrokenTarget> = Vec::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            if let Some(binary) = artifact(&message) {
                binaries.push(binary);
            } else if let Some(error) = build_error(&message) {
                if !broken
                    .iter()
                    .any(|b| b.package == error.package && b.target == error.target)
                {
                    broken.push(error);
                }
            }
        }
        (binaries, broken)
    });
    let status = crate::signals::wait(&mut child)
        .map_err(|crate::signals::Interrupted(s)| format!("interrupted by signal {s}"))?;
    let (binaries, broken) = reader.join().unwrap_or_default();
    Ok((binaries, broken, status.success()))
}

/// A compiler error message's target and text.
fn build_error(message: &serde_json::Value) -> Option<BrokenTarget> {
    if message.get("reason")?.as_str()? != "compiler-message" {
        return None;
    }
    let diagnostic = message.get("message")?;
    if diagnostic.get("level")?.as_str()? != "error" {
        return None;
    }
    let target = message.get("target")?;
    let kind = target.get("kind")?.as_array()?.first()?.as_str()?;
    let name = target.get("name")?.as_str()?;
    let target = match kind {
        "lib" | "rlib" | "proc-macro" => "lib".to_string(),
        kind => format!("{kind} {name}"),
    };
    let error = diagnostic
        .get("rendered")
        .and_then(|r| r.as_str())
        .or_else(|| diagnostic.get("message")?.as_str())?
        .trim_end()
        .to_string();
    Some(BrokenTarget {
        package: package_name(message.get("package_id")?.as_str()?),
        target,
        error,
    })
}

fn artifact(message: &serde_json::Value) -> Option<TestBinary> {
    if message.get("reason")?.as_str()? != "compiler-artifact" {
        return None;
    }
    if !message.get("profile")?.get("test")?.as_bool()? {
        return None;
    }
    let path = PathBuf::from(message.get("executable")?.as_str()?);
    let target = message.get("target")?;
    let kinds: Vec<&str> = target
        .get("kind")?
        .as_array()?
        .iter()
        .filter_map(|k| k.as_str())
        .collect();
    let kind = match kinds.first().copied()? {
        "bin" => TargetKind::Bin,
        "test" => TargetKind::Test,
        "example" => TargetKind::Example,
        "bench" => TargetKind::Bench,
        _ => TargetKind::Lib,
    };
    let manifest = PathBuf::from(message.get("manifest_path")?.as_str()?);
    Some(TestBinary {
        package: package_name(message.get("package_id")?.as_str()?),
        version: package_version(message.get("package_id")?.as_str()?),
        manifest_dir: manifest.parent().unwrap_or(Path::new(".")).to_path_buf(),
        kind,
        name: target.get("name")?.as_str()?.to_string(),
        path,
    })
}

/// libtest's options on how a test process runs and prints, without a
/// value (the runner sets those itself, so they change nothing in a
/// sweep); those with one are matched in `selection_args`.
const LIBTEST_RUNNER_FLAGS: &[&str] = &[
    "--nocapture",
    "--no-capture",
    "--show-output",
    "-q",
    "--quiet",
    "--test",
    "--fail-fast",
    "--report-time",
    "--ensure-time",
    "--shuffle",
    "--force-run-in-process",
    "--test-threads",
    "--color",
    "--format",
    "--logfile",
    "--shuffle-seed",
];

/// The test-binary arguments that select tests: filters, `--exact`,
/// `--skip NAME`, `--ignored`, `--include-ignored`. Others that only shape
/// libtest's output are dropped: the runner owns the output.
/// Any other option is an error: it would be ignored.
pub fn selection_args(test_args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut args = test_args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--exact" | "--ignored" | "--include-ignored" => out.push(arg.clone()),
            "--skip" => {
                out.push(arg.clone());
                out.push(
                    args.next()
                        .ok_or("--skip needs a test name after it")?
                        .clone(),
                );
            }
            "--test-threads" | "--color" | "--format" | "-Z" | "--logfile" | "--shuffle-seed" => {
                args.next();
            }
            a if a.starts_with("--skip=") => out.push(a.to_string()),
            // How a test process runs and prints is the runner's.
            a if LIBTEST_RUNNER_FLAGS.contains(&a.split('=').next().unwrap_or(a)) => {}
            a if a.starts_with('-') => {
                return Err(format!(
                    "`{a}` after `--` is not an option of a test binary's (libtest's) that cargo sim test knows: name tests to run, or use --exact, --skip NAME, --ignored, --include-ignored"
                ))
            }
            filter => out.push(filter.to_string()),
        }
    }
    Ok(out)
}

/// A test a binary lists.
pub struct Listed {
    /// Its full name (`module::name`).
    pub name: String,
    /// It is `#[ignore]`d: libtest runs it only when asked for
    /// (`--ignored`, `--include-ignored`), so its replay line and the
    /// runner's one-more runs ask for it.
    pub ignored: bool,
}

/// Whether `arg` asks libtest for ignored tests (`--ignored`: only them;
/// `--include-ignored`: them too).
pub fn asks_for_ignored(arg: &str) -> bool {
    matches!(arg, "--ignored" | "--include-ignored")
}

/// Lists the tests of `binary` that `selection` picks, leaving out ignored
/// ones unless they were asked for.
pub fn list_tests(binary: &TestBinary, selection: &[String]) -> Result<Vec<Listed>, String> {
    let run = |extra: &[&str], selection: &[String]| -> Result<Vec<String>, String> {
        let out = Command::new(&binary.path)
            .args(["--list", "--format", "terse"])
            .args(extra)
            .args(selection)
            .envs(binary.cargo_env())
            .current_dir(&binary.manifest_dir)
            .env_remove(sim_runtime::sweep::OUT_VAR)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", binary.path.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} --list failed: {}",
                binary.path.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .map(str::to_string)
            .collect())
    };
    let all = run(&[], selection)?;
    // libtest lists ignored tests too; they run only when asked for. Which
    // ones they are is asked without the selection's own ignored flags
    // (libtest refuses a flag given twice).
    let unflagged: Vec<String> = selection
        .iter()
        .filter(|a| !asks_for_ignored(a))
        .cloned()
        .collect();
    let asked_for_ignored = unflagged.len() < selection.len();
    let ignored: BTreeSet<String> = run(&["--ignored"], &unflagged)?.into_iter().collect();
    Ok(all
        .into_iter()
        .map(|name| Listed {
            ignored: ignored.contains(&name),
            name,
        })
        .filter(|test| asked_for_ignored || !test.ignored)
        .collect())
}

/// Of `packages`, those whose library has doc tests on (`doctest = false`
/// turns them off; `cargo test --doc -p NAME` would run them regardless),
/// as `NAME@VERSION` specs.
pub fn with_doc_tests(sim: &SimBuild, packages: &[&str]) -> Result<Vec<String>, String> {
    let out = sim
        .cargo()
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err("cargo metadata failed (see above)".to_string());
    }
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let mut names = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let Some(name) = package["name"].as_str() else {
            continue;
        };
        if !packages.contains(&name) {
            continue;
        }
        let documented = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                let lib = t["kind"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| matches!(k.as_str(), Some("lib" | "rlib" | "proc-macro")));
                lib && t["doctest"].as_bool().unwrap_or(true)
            });
        if documented {
            // With its version: the simulation build's lock may hold a
            // package of the same name from crates.io too (a workspace
            // member that benchmarks real tokio against the facade), and a
            // bare name would be ambiguous to cargo.
            match package["version"].as_str() {
                Some(version) => names.push(format!("{name}@{version}")),
                None => names.push(name.to_string()),
            }
        }
    }
    Ok(names)
}

/// Whether the binary's target says `harness = false` in its manifest:
/// then it is not libtest's, takes no `--list`, and runs whole.
pub fn without_harness(binary: &TestBinary) -> bool {
    let Ok(manifest) = std::fs::read_to_string(binary.manifest_dir.join("Cargo.toml")) else {
        return false;
    };
    let table = match binary.kind {
        TargetKind::Test => "[[test]]",
        TargetKind::Bench => "[[bench]]",
        TargetKind::Bin => "[[bin]]",
        TargetKind::Example => "[[example]]",
        TargetKind::Lib => "[lib]",
    };
    // Each target is a table of `key = value` lines up to the next header.
    manifest.split(table).skip(1).any(|block| {
        let block = block.split("\n[").next().unwrap_or("");
        let value = |key: &str| {
            block.lines().find_map(|line| {
                let rest = line
                    .trim()
                    .strip_prefix(key)?
                    .trim_start()
                    .strip_prefix('=')?;
                Some(rest.trim().trim_matches('"').to_string())
            })
        };
        let named = binary.kind == TargetKind::Lib
            || value("name").is_some_and(|n| n.replace('-', "_") == binary.name.replace('-', "_"));
        named && value("harness").as_deref() == Some("false")
    })
}
