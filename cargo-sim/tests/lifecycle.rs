//! The runner's test processes never outlive it: `kill -9` of `cargo sim
//! test` during a sweep far too large to finish (what a CI timeout or the
//! OOM killer does) leaves no worker running. Plain build only: this test
//! runs cargo.
#![cfg(not(simulation))]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const MANIFEST: &str = r#"[package]
name = "lifecycle-fixture"
version = "0.1.0"
edition = "2021"

[dependencies]
tokio = { version = "1", features = ["full"] }

# The features every fixture crate asks: one facade build for them all.
[dev-dependencies]
tokio = { version = "1", features = ["full", "test-util"] }

[workspace]
"#;

const TEST: &str = r#"
#[tokio::test]
async fn busy() {
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
}
"#;

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The processes whose parent is `parent`, and are not zombies.
fn live_children(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the name may hold spaces.
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let (state, ppid) = (fields.next(), fields.next());
        if ppid == Some(parent.to_string().as_str()) && state != Some("Z") {
            out.push(pid);
        }
    }
    out
}

/// Whether process `pid` still runs (gone, or a zombie, is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

#[test]
fn workers_die_with_a_runner_killed_by_sigkill() {
    let dir = tmp().join("lifecycle-fixture");
    let _ = std::fs::remove_dir_all(&dir);
    write(&dir.join("Cargo.toml"), MANIFEST);
    write(&dir.join("src/lib.rs"), "");
    write(&dir.join("tests/busy.rs"), TEST);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["generate-lockfile", "--quiet"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let mut runner = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "test", "--seeds", "100000000", "--no-save"])
        .current_dir(&dir)
        // Dependencies compiled once with the sweep tests'.
        .env("CARGO_TARGET_DIR", tmp().join("sweep-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("SIM_SEED")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) until the sweep's workers run: children of the runner
    // that are the test binary, not cargo building it.
    let started = Instant::now();
    let workers = loop {
        let workers: Vec<u32> = live_children(runner.id())
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.contains("busy") && !c.contains("cargo"))
            })
            .collect();
        if !workers.is_empty() {
            break workers;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no worker started within 5 minutes"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    // SAFETY: a signal to the runner, our own child.
    unsafe { libc::kill(runner.id() as libc::pid_t, libc::SIGKILL) };
    let _ = runner.wait();
    let killed = Instant::now();
    while workers.iter().any(|&pid| running(pid)) && killed.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<u32> = workers.into_iter().filter(|&pid| running(pid)).collect();
    assert!(left.is_empty(), "workers outlived the runner: {left:?}");
}
