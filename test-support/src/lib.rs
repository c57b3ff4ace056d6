//! Helpers the workspace's own tests share: each crate's tests live beside
//! it (`sim-net/tests/`, `sim-fs/tests/`, ...), and these are what they
//! have in common. A dev-dependency only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the test `name` of the current test binary in a child process with
/// `SIM_SEED=seed` and `SIM_TRACE`, and returns the trace it wrote. The
/// files go to `dir` (a test's `env!("CARGO_TARGET_TMPDIR")`); `label`
/// keeps the files of several calls apart.
///
/// # Panics
/// If the child fails or writes no trace.
pub fn child_trace(dir: &str, name: &str, seed: &str, label: &str) -> Vec<u8> {
    let dir = PathBuf::from(dir);
    let base = dir.join(label);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--test-threads", "1"])
        .env("SIM_SEED", seed)
        .env("SIM_TRACE", &base)
        .env_remove("SIM_TRACE_BYTES")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{name} failed in a child process");
    let file = dir.join(format!("{label}.{name}"));
    std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The text of a panic's payload (its message).
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The README and the guide's chapters (`docs/*.md`) as one text: what the
/// docs show, wherever a block of it lives.
///
/// # Panics
/// If the README or the guide cannot be read.
pub fn docs() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut text = std::fs::read_to_string(root.join("README.md")).expect("the README");
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("the guide, docs/")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    for chapter in chapters {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(chapter).unwrap());
    }
    text
}

/// Debian's Chromium, installed through the package manager when missing.
///
/// # Panics
/// If it is missing and cannot be installed.
pub fn ensure_chromium() -> PathBuf {
    let path = PathBuf::from("/usr/bin/chromium");
    if !path.exists() {
        let install = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        if !install(&["install", "-y", "-q", "chromium"]) {
            assert!(install(&["update", "-q"]), "apt-get update failed");
            assert!(
                install(&["install", "-y", "-q", "chromium"]),
                "apt-get install chromium failed: the timeline test needs Debian's chromium"
            );
        }
    }
    path
}

/// The `<body>` attributes of `page` after its scripts ran, in headless
/// Chromium (its profile in `profile`, made afresh).
///
/// # Panics
/// If Chromium cannot be installed or prints no `<body>`.
pub fn rendered_body(page: &Path, profile: &Path) -> BTreeMap<String, String> {
    let chromium = ensure_chromium();
    let _ = std::fs::remove_dir_all(profile);
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&output.stdout).into_owned();
    let start = dom
        .find("<body")
        .unwrap_or_else(|| panic!("no body in the DOM: {dom}"));
    let tag = &dom[start..start + dom[start..].find('>').unwrap()];
    tag.split_whitespace()
        .filter_map(|attr| attr.split_once("=\""))
        .map(|(k, v)| (k.to_string(), v.trim_end_matches('"').to_string()))
        .collect()
}
