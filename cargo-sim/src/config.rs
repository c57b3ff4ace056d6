//! The simulation build's cargo configuration: the patch that swaps the
//! facade in for tokio, `--cfg simulation` for rustc and rustdoc, and a
//! target directory of its own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    "readv",
    "socket",
    "socketpair",
    "pipe",
    "pipe2",
    "bind",
    "listen",
    "accept",
    "accept4",
    "connect",
    "getsockname",
    "getpeername",
    "setsockopt",
    "getsockopt",
    "shutdown",
    "recv",
    "recvfrom",
    "send",
    "sendto",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "ioctl",
    "poll",
];

/// The cargo to run: the one that ran us, if any.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// The toolchain's directory of the host's libraries (where the standard
/// library's shared object is), as `rustc --print target-libdir` names it:
/// `RUSTC`'s if set, else the `rustc` the current directory's toolchain
/// picks. Asked once; `None` if rustc cannot say.
pub fn rustc_target_libdir() -> Option<PathBuf> {
    static LIBDIR: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    LIBDIR
        .get_or_init(|| {
            let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
            let output = Command::new(rustc)
                .args(["--print", "target-libdir"])
                .output()
                .ok()
                .filter(|output| output.status.success())?;
            let dir = String::from_utf8(output.stdout).ok()?;
            Some(PathBuf::from(dir.trim())).filter(|dir| dir.is_dir())
        })
        .clone()
}

/// A workspace prepared for simulation builds.
pub struct SimBuild {
    /// The workspace root.
    pub root: PathBuf,
    /// The facade's directory.
    pub facade: PathBuf,
    /// The simulation build's target directory.
    pub target: PathBuf,
    /// The config file passed with `--config`.
    pub config: PathBuf,
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
    let path = match sim_runtime::settings::TOKIO_PATH.value_os() {
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

/// The config table that builds the release profile with line tables, or
/// nothing when the user chose its debug info (in the workspace's
/// manifest, `manifest`, or in `CARGO_PROFILE_RELEASE_DEBUG`, whether
/// `env_set`): then it stays theirs. Reports name the user's lines from
/// backtraces (where a task waits for a lock): a release build without
/// line tables names none. Line tables cost little, and the simulation
/// build has a target directory of its own.
fn release_profile(manifest: &str, env_set: bool) -> &'static str {
    if env_set || release_debug_is_set(manifest) {
        return "";
    }
    "\n[profile.release]\ndebug = \"line-tables-only\"\n"
}

/// Whether `manifest` sets the release profile's debug info.
fn release_debug_is_set(manifest: &str) -> bool {
    let mut in_release = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_release = line == "[profile.release]";
        } else if in_release && line.split('=').next().is_some_and(|k| k.trim() == "debug") {
            return true;
        }
    }
    false
}

/// The simulator's crates: the facade and what it is built on. A test
/// build (the dev profile) optimizes them (see [`simulator_profiles`]).
const SIMULATOR_PACKAGES: [&str; 7] = [
    "tokio",
    "sim-runtime",
    "sim-os",
    "sim-net",
    "sim-fs",
    "sim-harness",
    "sim-history",
];

/// The simulator crates' `opt-level` in the dev profile. A sweep spends
/// its time in them: at level 1 a harness test's seeds ran 2x as fast as
/// unoptimized (BENCHMARKS.md), for about half a minute more of a first
/// build; level 2 gained a tenth more.
const SIMULATOR_OPT_LEVEL: u8 = 1;

/// The packages whose dev or test profile `manifest` sets
/// (`[profile.dev.package.<name>]`, quoted or not): the user's choice
/// stands for them.
fn packages_profiled(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .filter_map(|line| {
            let header = line.trim().strip_prefix('[')?.strip_suffix(']')?;
            let header: String = header.chars().filter(|c| !matches!(c, '"' | ' ')).collect();
            let name = header
                .strip_prefix("profile.dev.package.")
                .or_else(|| header.strip_prefix("profile.test.package."))?;
            Some(name.to_string())
        })
        .collect()
}

/// The config tables that build the simulator's crates optimized in the
/// dev profile (the one `cargo sim test` builds with): the user's own
/// code stays as their profile says, and the manifest's settings for any
/// of these packages stand.
fn simulator_profiles(manifest: &str) -> String {
    let theirs = packages_profiled(manifest);
    let mut text = String::new();
    for package in SIMULATOR_PACKAGES {
        if !theirs.iter().any(|name| name == package) {
            text.push_str(&format!(
                "\n[profile.dev.package.{package}]\nopt-level = {SIMULATOR_OPT_LEVEL}\n"
            ));
        }
    }
    text
}

/// Where `cargo update` reads the registry's index from.
#[derive(Clone, Copy, PartialEq)]
enum Index {
    /// Only what cargo holds already (`--offline`).
    Cached,
    /// The registry itself.
    Registry,
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The flags rustc and rustdoc get in a simulation build.
fn sim_flags() -> Vec<String> {
    // `simulation` is a cfg the compiler expects here: code testing it
    // draws no `unexpected_cfgs` warning in a simulation build.
    let mut flags = vec![
        "--cfg".to_string(),
        "simulation".to_string(),
        "--check-cfg".to_string(),
        "cfg(simulation)".to_string(),
    ];
    for symbol in INTERPOSED {
        flags.push("-C".to_string());
        flags.push(format!("link-arg=-Wl,--export-dynamic-symbol={symbol}"));
    }
    flags
}

impl SimBuild {
    /// Finds the workspace and the facade and writes the config file.
    pub fn prepare() -> Result<SimBuild, String> {
        let root = workspace_root()?;
        let facade = facade_path()?;
        // Apart from the plain build's artifacts, also under a
        // CARGO_TARGET_DIR the user set.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"))
            .join("sim");
        std::fs::create_dir_all(&target)
            .map_err(|e| format!("cannot create {}: {e}", target.display()))?;
        let flags: Vec<String> = sim_flags().iter().map(|f| toml_string(f)).collect();
        let flags = flags.join(", ");
        let mut text = format!(
            "# Written by cargo sim; rewritten on every run.\n\
             [patch.crates-io]\n\
             tokio = {{ path = {} }}\n\n\
             [build]\n\
             rustflags = [{flags}]\n\
             rustdocflags = [{flags}]\n\
             target-dir = {}\n",
            toml_string(&facade.display().to_string()),
            toml_string(&target.display().to_string()),
        );
        // The workspace's manifest: the profiles the user set stay theirs.
        let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
        let env_set = std::env::var_os("CARGO_PROFILE_RELEASE_DEBUG").is_some();
        text.push_str(release_profile(&manifest, env_set));
        text.push_str(&simulator_profiles(&manifest));
        // Written whole, then renamed into place: cargo sims sharing a
        // target directory (a CARGO_TARGET_DIR several workspaces use) may
        // be reading it this moment, and a half-written file would build
        // without the patch (real tokio) or fail.
        let config = target.join("sim-config.toml");
        let partial = target.join(format!("sim-config.toml.{}.partial", std::process::id()));
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, &config))
            .map_err(|e| format!("cannot write {}: {e}", config.display()))?;
        Ok(SimBuild {
            root,
            facade,
            target,
            config,
        })
    }

    /// `cargo --config <ours>`, with the environment a simulation build
    /// needs: its own target directory, and our flags added to any
    /// `RUSTFLAGS`/`RUSTDOCFLAGS` (which would otherwise replace them).
    pub fn cargo(&self) -> Command {
        let mut command = self.cargo_without_config();
        command.arg("--config").arg(&self.config);
        command
    }

    /// As [`SimBuild::cargo`], for a subcommand that takes `--config`
    /// itself (cargo does not pass it to third-party subcommands).
    pub fn cargo_without_config(&self) -> Command {
        let mut command = Command::new(cargo());
        command.env("CARGO_TARGET_DIR", &self.target);
        for (plain, encoded) in [
            ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS"),
            ("RUSTDOCFLAGS", "CARGO_ENCODED_RUSTDOCFLAGS"),
        ] {
            let user: Option<Vec<String>> = match std::env::var(encoded) {
                // cargo's, not a SIM_ variable
                Ok(flags) => Some(
                    flags
                        .split('\x1f')
                        .filter(|f| !f.is_empty())
                        .map(str::to_string)
                        .collect(),
                ),
                Err(_) => std::env::var(plain) // cargo's, not a SIM_ variable
                    .ok()
                    .map(|flags| flags.split_whitespace().map(str::to_string).collect()),
            };
            if let Some(mut flags) = user {
                flags.extend(sim_flags());
                command.env_remove(plain);
                command.env(encoded, flags.join("\x1f"));
            }
        }
        command
    }

    /// The registry `tokio` packages of the root's lock file, by exact id.
    fn registry_tokio_specs(&self) -> Vec<String> {
        let Ok(text) = std::fs::read_to_string(self.root.join("Cargo.lock")) else {
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

    /// Points the (swapped-in) lock at the facade: a lock that pins the real
    /// tokio leaves the patch unused. Each registry tokio is updated by its
    /// exact package id (a bare `tokio` can be ambiguous when the facade is
    /// itself a workspace member).
    pub fn point_lock_at_facade(&self) -> Result<(), String> {
        for spec in self.registry_tokio_specs() {
            // From the registry index cargo already holds when it can: the
            // plain build that came before read what this needs, and asking
            // the registry again took 1.6 to 3 s here, each time a lock is made.
            if self.update_lock(&spec, Index::Cached)? {
                continue;
            }
            if !self.update_lock(&spec, Index::Registry)? {
                return Err(format!(
                    "cargo update -p {spec} failed, so the simulation build would still use the \
                     real tokio (see the error above)"
                ));
            }
        }
        Ok(())
    }

    /// `cargo update -p spec` from `index`: whether it succeeded. Only the
    /// registry's attempt shows its errors (the cached index may lack what
    /// the update needs, and then the registry is asked).
    fn update_lock(&self, spec: &str, index: Index) -> Result<bool, String> {
        let mut command = self.cargo();
        command.args(["update", "--quiet", "-p", spec]);
        if index == Index::Cached {
            command.arg("--offline").stderr(std::process::Stdio::null());
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run cargo update: {e}"))?;
        let status = crate::signals::wait(&mut child)
            .map_err(|crate::signals::Interrupted(s)| format!("interrupted by signal {s}"))?;
        Ok(status.success())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulator_builds_optimized_unless_the_manifest_says_otherwise() {
        let ours = simulator_profiles("[package]\nname = \"app\"\n");
        for package in SIMULATOR_PACKAGES {
            assert!(
                ours.contains(&format!("[profile.dev.package.{package}]\nopt-level = 1\n")),
                "{ours}"
            );
        }
        let manifest = "[profile.dev.package.\"tokio\"]\nopt-level = 3\n\n\
                        [profile.test.package.sim-net]\nopt-level = 0\n";
        let with_theirs = simulator_profiles(manifest);
        assert!(!with_theirs.contains("package.tokio]"), "{with_theirs}");
        assert!(!with_theirs.contains("package.sim-net]"), "{with_theirs}");
        assert!(with_theirs.contains("[profile.dev.package.sim-runtime]"));
    }

    /// `cargo sim test --release` names the user's lines (a lock cycle's
    /// report reads them from backtraces): the release profile gets line
    /// tables unless the user set its debug info. The debug build's
    /// reports are checked end to end in the workspace (sim-examples'
    /// `deadlock_reports`); a release build of the simulator for this one
    /// table cost the README's test command a minute.
    #[test]
    fn the_release_profile_gets_line_tables_unless_the_user_set_its_debug_info() {
        let table = "\n[profile.release]\ndebug = \"line-tables-only\"\n";
        assert_eq!(release_profile("[package]\nname = \"app\"\n", false), table);
        let other_profile = "[profile.release]\nlto = true\n[profile.dev]\ndebug = 0\n";
        assert_eq!(release_profile(other_profile, false), table);
        assert_eq!(release_profile("[profile.release]\ndebug = 2\n", false), "");
        assert_eq!(
            release_profile("[profile.release]\n debug=false\n", false),
            ""
        );
        assert_eq!(release_profile("[package]\nname = \"app\"\n", true), "");
    }
}
