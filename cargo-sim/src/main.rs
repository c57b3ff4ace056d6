//! `cargo sim`: runs a cargo command as a simulation build.
//!
//! It writes a cargo config file that swaps the `tokio` facade in for the
//! real tokio across the whole dependency graph (`[patch.crates-io]`), adds
//! `--cfg simulation` (which also turns on the libc interposition of
//! `sim-runtime`), and builds into a target directory of its own so the
//! plain build's artifacts are never invalidated. Then it runs
//! `cargo --config <that file> <your command>`.
//!
//! The patch needs a lock file that names the facade instead of the real
//! tokio. The user's `Cargo.lock` is saved before the run and put back,
//! byte for byte, after it (also when the command fails or is interrupted);
//! the simulation build's lock is kept under the simulation target
//! directory (one per workspace) for the next run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const HELP: &str = "\
cargo sim: run a cargo command on the deterministic simulator

USAGE:
    cargo sim <cargo command> [args...]

EXAMPLES:
    cargo sim test                      run every test as a simulation build
    cargo sim test -p my-service        one package
    SIM_SEED=0x2a cargo sim test        replay with a fixed seed
    cargo sim run --example echo        run a binary on the simulator

WHAT IT DOES:
    Swaps the `tokio` facade in for tokio across the whole dependency graph
    ([patch.crates-io]), builds with --cfg simulation into target/sim, and
    passes SIM_SEED, SIM_TRACE and the other SIM_* variables through. Your
    Cargo.lock is left exactly as it was.

ENVIRONMENT:
    SIM_SEED          the seed of every run (decimal or 0x hex); unset: fresh
    SIM_TRACE         write each run's trace to this path (see the README)
    SIM_TOKIO_PATH    where the facade is (default: the one this cargo-sim
                      was built with)
";

fn main() -> ExitCode {
    let mut args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // As `cargo sim ...`, cargo passes "sim" first; as `cargo run -p
    // cargo-sim -- ...` (the workspace alias), it does not.
    if args.first().is_some_and(|a| a == "sim") {
        args.remove(0);
    }
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") && args.len() == 1 {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("cargo sim: {message}");
            ExitCode::from(2)
        }
    }
}

fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

fn workspace_root() -> Result<PathBuf, String> {
    let out = Command::new(cargo())
        .args(["locate-project", "--workspace", "--message-format", "plain"])
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "not in a cargo workspace: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let manifest = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Ok(manifest
        .parent()
        .ok_or("cargo locate-project gave no directory")?
        .to_path_buf())
}

fn facade_path() -> Result<PathBuf, String> {
    let path = match std::env::var_os("SIM_TOKIO_PATH") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim-tokio"),
    };
    let path = path.canonicalize().map_err(|e| {
        format!(
            "the tokio facade is not at {} ({e}). Set SIM_TOKIO_PATH to the sim-tokio \
             directory of a checkout of this project.",
            path.display()
        )
    })?;
    if !path.join("Cargo.toml").is_file() {
        return Err(format!(
            "{} has no Cargo.toml; SIM_TOKIO_PATH must name the sim-tokio directory",
            path.display()
        ));
    }
    Ok(path)
}

/// The symbols `sim-runtime` defines in place of libc's: exported from every
/// executable, so that libraries which look them up with `dlsym` (the
/// `getrandom` crate) find the simulated ones too.
const INTERPOSED: &[&str] = &[
    "clock_gettime",
    "gettimeofday",
    "time",
    "getrandom",
    "getentropy",
    "getaddrinfo",
    "freeaddrinfo",
    "syscall",
    "statx",
    "open",
    "open64",
    "openat",
    "openat64",
    "close",
    "dup",
    "fcntl",
    "read",
    "pread64",
    "write",
    "pwrite64",
    "writev",
    "lseek64",
    "fsync",
    "fdatasync",
    "ftruncate64",
    "fchmod",
    "copy_file_range",
    "sendfile64",
    "splice",
    "fstat64",
    "stat64",
    "lstat64",
    "fstatat64",
    "chmod",
    "mkdir",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "linkat",
    "symlink",
    "readlink",
    "realpath",
    "opendir",
    "fdopendir",
    "readdir64",
    "closedir",
    "dirfd",
];

fn toml_string(path: &Path) -> String {
    let s = path.display().to_string();
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn write_config(target: &Path, facade: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(target)
        .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
    let mut flags = vec!["\"--cfg\"".to_string(), "\"simulation\"".to_string()];
    for symbol in INTERPOSED {
        flags.push("\"-C\"".to_string());
        flags.push(format!("\"link-arg=-Wl,--export-dynamic-symbol={symbol}\""));
    }
    let config = format!(
        "# Written by cargo sim; rewritten on every run.\n\
         [patch.crates-io]\n\
         tokio = {{ path = {} }}\n\n\
         [build]\n\
         rustflags = [{}]\n\
         target-dir = {}\n",
        toml_string(facade),
        flags.join(", "),
        toml_string(target),
    );
    let path = target.join("sim-config.toml");
    std::fs::write(&path, config).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Puts the user's lock file back when dropped, whatever happened.
struct LockGuard {
    lock: PathBuf,
    original: Option<Vec<u8>>,
    sim_lock: PathBuf,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Ok(bytes) = std::fs::read(&self.lock) {
            let _ = std::fs::write(&self.sim_lock, bytes);
        }
        let restored = match &self.original {
            Some(bytes) => std::fs::write(&self.lock, bytes),
            None => match std::fs::remove_file(&self.lock) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        };
        if let Err(e) = restored {
            eprintln!(
                "cargo sim: could not restore {}: {e}. The simulation build's lock file is in \
                 its place; restore yours from version control.",
                self.lock.display()
            );
        }
    }
}

/// FNV-1a: a stable name for a workspace's cached lock.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The package ids of the registry `tokio` entries of a lock file.
fn registry_tokio_specs(lock: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(lock) else {
        return Vec::new();
    };
    let mut specs = Vec::new();
    // Entries are `[[package]]` blocks of `key = "value"` lines.
    for block in text.split("[[package]]") {
        let field = |key: &str| {
            block.lines().find_map(|line| {
                let rest = line.strip_prefix(key)?.trim_start().strip_prefix('=')?;
                Some(rest.trim().trim_matches('"').to_string())
            })
        };
        if field("name").as_deref() != Some("tokio") {
            continue;
        }
        if let (Some(version), Some(source)) = (field("version"), field("source")) {
            if source.starts_with("registry+") {
                specs.push(format!("{source}#tokio@{version}"));
            }
        }
    }
    specs
}

fn run(args: &[OsString]) -> Result<ExitCode, String> {
    let root = workspace_root()?;
    let facade = facade_path()?;
    let target_base = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = target_base.join("sim");
    let config = write_config(&target, &facade)?;

    let lock = root.join("Cargo.lock");
    // One cached lock per workspace: a shared CARGO_TARGET_DIR may serve
    // several.
    let sim_lock = target.join(format!(
        "Cargo.sim.{:016x}.lock",
        fnv1a(root.as_os_str().as_encoded_bytes())
    ));
    let original = std::fs::read(&lock).ok();
    let guard = LockGuard {
        lock: lock.clone(),
        original,
        sim_lock: sim_lock.clone(),
    };
    if let Ok(bytes) = std::fs::read(&sim_lock) {
        std::fs::write(&lock, bytes)
            .map_err(|e| format!("cannot write {}: {e}", lock.display()))?;
    }
    // Point the lock at the facade: a lock that pins the real tokio leaves
    // the patch unused. Each registry tokio in it is updated by its exact
    // package id (a bare `tokio` can be ambiguous when the facade itself is
    // a workspace member).
    for spec in registry_tokio_specs(&lock) {
        let status = Command::new(cargo())
            .arg("--config")
            .arg(&config)
            .args(["update", "--quiet", "-p", &spec])
            .status()
            .map_err(|e| format!("cannot run cargo update: {e}"))?;
        if !status.success() {
            return Err(format!(
                "cargo update -p {spec} failed, so the simulation build would still use the \
                 real tokio (see the error above)"
            ));
        }
    }

    let cargo_args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut command = Command::new(cargo());
    command.arg("--config").arg(&config).args(args);
    command.env("SIM_CARGO_ARGS", cargo_args.join(" "));

    // Ctrl-C reaches cargo and us alike; we outlive it to restore the lock.
    // Safety: setting a signal disposition to "ignore" is async-signal-safe.
    let previous = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = command.status();
    unsafe { libc::signal(libc::SIGINT, previous) };
    drop(guard);
    let status = status.map_err(|e| format!("cannot run cargo: {e}"))?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(code.clamp(1, 255) as u8),
        None => ExitCode::FAILURE,
    })
}
