//! A sweep's identity: a seed reproduces a run only with the same code,
//! compiler, target, facade and settings. Printed once per sweep and
//! written into the JUnit report.

use std::path::Path;
use std::process::Command;

/// What a seed is valid with.
#[derive(Clone, Debug)]
pub struct Identity {
    /// `abc1234`, with ` (dirty)` when the tree has changes; `none` outside
    /// a git checkout.
    pub commit: String,
    /// `rustc 1.95.0 (...)`.
    pub rustc: String,
    /// The host target triple.
    pub target: String,
    /// The facade's version.
    pub facade: String,
    /// The `SIM_*` variables set, sorted, as `NAME=value`.
    pub settings: Vec<String>,
}

fn output(command: &mut Command) -> Option<String> {
    let out = command.output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The `SIM_*` settings that change a run (not the seed, which the replay
/// line carries, nor the runner's own).
pub fn sim_settings() -> Vec<String> {
    let mut settings: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("SIM_"))
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "SIM_SEED"
                    | "SIM_TRACE"
                    | "SIM_RECORD"
                    | "SIM_VERBOSE"
                    | "SIM_TOKIO_PATH"
                    | "SIM_CARGO_ARGS"
            ) && !k.starts_with("SIM_SWEEP")
                && k != "SIM_REPLAY_PREFIX"
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    settings.sort();
    settings
}

impl Identity {
    /// Reads the identity of the workspace at `root` with the facade at
    /// `facade`.
    pub fn read(root: &Path, facade: &Path) -> Identity {
        let git = |args: &[&str]| output(Command::new("git").args(args).current_dir(root));
        let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
            Some(commit) => {
                let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|s| !s.is_empty());
                if dirty {
                    format!("{commit} (dirty)")
                } else {
                    commit
                }
            }
            None => "none (not a git checkout)".to_string(),
        };
        let rustc_bin = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let verbose = output(Command::new(&rustc_bin).arg("-vV")).unwrap_or_default();
        let rustc = verbose.lines().next().unwrap_or("rustc ?").to_string();
        let target = verbose
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap_or("?")
            .to_string();
        let facade = std::fs::read_to_string(facade.join("Cargo.toml"))
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    let v = l.strip_prefix("version")?.trim_start().strip_prefix('=')?;
                    Some(v.trim().trim_matches('"').to_string())
                })
            })
            .unwrap_or_else(|| "?".into());
        Identity {
            commit,
            rustc,
            target,
            facade,
            settings: sim_settings(),
        }
    }

    /// One line.
    pub fn line(&self) -> String {
        format!(
            "commit {}, {}, target {}, tokio facade {}, settings: {}",
            self.commit,
            self.rustc,
            self.target,
            self.facade,
            if self.settings.is_empty() {
                "defaults".to_string()
            } else {
                self.settings.join(" ")
            }
        )
    }
}
