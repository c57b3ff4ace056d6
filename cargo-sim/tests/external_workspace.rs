//! `cargo sim test` on a crate that knows nothing of the simulator: its
//! tokio tests run on the facade with no code change, and its `Cargo.lock`
//! is byte for byte what it was. (Plain build only: this test runs cargo.)
#![cfg(not(simulation))]

use std::path::{Path, PathBuf};
use std::process::Command;

const MANIFEST: &str = r#"[package]
name = "plain-tokio-user"
version = "0.1.0"
edition = "2021"

[dependencies]
tokio = { version = "1", features = ["full", "test-util"] }

[workspace]
"#;

const LIB: &str = r#"
pub async fn double_later(x: u64) -> u64 {
    tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    x * 2
}

#[cfg(test)]
mod tests {
    // On real tokio, the hour passes on a paused clock.
    #[tokio::test(start_paused = true)]
    async fn spawns_and_sleeps() {
        let h = tokio::spawn(super::double_later(21));
        assert_eq!(h.await.unwrap(), 42);
    }

    #[cfg(simulation)]
    #[tokio::test]
    async fn is_a_simulation_build() {
        assert!(cfg!(simulation), "cargo sim builds with --cfg simulation");
    }
}

// The harness comes with the facade: nothing in Cargo.toml but tokio.
#[cfg(all(test, simulation))]
mod harness {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn two_hosts_talk_across_the_simulated_network() {
        let mut sim = tokio::sim::Sim::new();
        sim.host("server", || async {
            let listener = tokio::net::TcpListener::bind("0.0.0.0:80").await.unwrap();
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut word = [0u8; 5];
            stream.read_exact(&mut word).await.unwrap();
            stream.write_all(&word).await.unwrap();
        });
        sim.client("client", async {
            let mut stream = tokio::net::TcpStream::connect("server:80").await.unwrap();
            stream.write_all(b"hello").await.unwrap();
            let mut echo = [0u8; 5];
            stream.read_exact(&mut echo).await.unwrap();
            assert_eq!(&echo, b"hello");
            assert!(tokio::sim::now() > std::time::Duration::ZERO, "the link has latency");
        });
        let report = sim.run();
        assert!(report.events > 10, "{report:?}");
    }
}
"#;

/// Held by each test while it runs `cargo sim` in the shared target
/// directory: the lock test counts the simulation locks written there
/// since its start, which another test's run would add to.
static SHARED_TARGET: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A fresh crate or workspace named `name` in the tests' directory, of
/// `files` (path, text), with a lock that pins the real tokio, as any
/// existing project has.
fn user_project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        write(&dir.join(path), text);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .arg("generate-lockfile")
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

#[test]
fn runs_an_unmodified_crate_and_keeps_its_lock() {
    let _shared = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = user_project(
        "plain-tokio-user",
        &[("Cargo.toml", MANIFEST), ("src/lib.rs", LIB)],
    );
    let lock_before = std::fs::read(dir.join("Cargo.lock")).unwrap();
    assert!(String::from_utf8_lossy(&lock_before).contains("name = \"tokio\""));

    // The simulation build shares the fixture tests' target directory
    // (tests/sweep.rs): the facade's crates compile once for all of them.
    let sim_test = || {
        Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
            .args(["sim", "test"])
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", target.join("sweep-target"))
            .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
            .env("SIM_SEED", "0x2a")
            .output()
            .unwrap()
    };
    let first_build = std::time::SystemTime::now();
    let output = sim_test();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cargo sim test failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("sim: 3 passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("3 tests in 1 binary × 1 seed"), "{stderr}");
    // Quiet: a passing test prints none of the simulator's lines.
    assert!(!stderr.contains("trace sha256"), "{stderr}");
    // The same manifest builds and passes on the real tokio.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let plain = Command::new(&cargo)
        .args(["test", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target.join("external-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .output()
        .unwrap();
    let plain_out = String::from_utf8_lossy(&plain.stdout);
    assert!(
        plain.status.success(),
        "plain cargo test failed:\n{plain_out}\n{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    assert!(plain_out.contains("1 passed"), "{plain_out}");
    let lock_after = std::fs::read(dir.join("Cargo.lock")).unwrap();
    assert!(
        lock_before == lock_after,
        "cargo sim changed the user's Cargo.lock"
    );

    // The simulation build's lock is kept between runs only while the
    // user's is the one it was made from: after the user's changes (a
    // `cargo update`, here a comment), it is made afresh from the user's.
    // (This crate's: the directory is shared with the fixture tests'.)
    let kept = locks_written_since(&target.join("sweep-target/sim"), first_build);
    assert!(
        !kept.is_empty(),
        "a kept simulation lock in sweep-target/sim"
    );
    for lock in &kept {
        let mut text = std::fs::read_to_string(lock).unwrap();
        text.push_str("# stale\n");
        std::fs::write(lock, text).unwrap();
    }
    let mut changed = lock_after.clone();
    changed.extend_from_slice(b"# changed by the user\n");
    std::fs::write(dir.join("Cargo.lock"), &changed).unwrap();
    let output = sim_test();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for lock in &kept {
        let text = std::fs::read_to_string(lock).unwrap();
        assert!(
            !text.contains("# stale"),
            "the kept lock of another user lock was used: {}",
            lock.display()
        );
    }
    assert_eq!(
        std::fs::read(dir.join("Cargo.lock")).unwrap(),
        changed,
        "the user's lock is as the user left it"
    );
}

/// The simulation locks cargo sim kept in `sim_dir` that were written since
/// `since`.
fn locks_written_since(sim_dir: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    std::fs::read_dir(sim_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            let written = std::fs::metadata(p).and_then(|m| m.modified());
            name.starts_with("Cargo.sim.")
                && name.ends_with(".lock")
                && written.is_ok_and(|t| t >= since)
        })
        .collect()
}

/// A workspace with a proc-macro crate, whose test binary links the
/// standard library dynamically from the toolchain.
const MACRO_WORKSPACE: &str = r#"[workspace]
members = ["answer", "app"]
resolver = "2"
"#;

const MACRO_MANIFEST: &str = r#"[package]
name = "answer"
version = "0.1.0"
edition = "2021"

[lib]
proc-macro = true
"#;

const MACRO_LIB: &str = r#"
use proc_macro::TokenStream;

fn digits() -> &'static str {
    "42"
}

/// `answer!()` is `42`.
#[proc_macro]
pub fn answer(_: TokenStream) -> TokenStream {
    digits().parse().unwrap()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_answer_is_two_digits() {
        assert_eq!(super::digits().len(), 2);
    }
}
"#;

const APP_MANIFEST: &str = r#"[package]
name = "app"
version = "0.1.0"
edition = "2021"

[dependencies]
answer = { path = "../answer" }
tokio = { version = "1", features = ["full"] }

# The features every fixture crate asks: one facade build for them all.
[dev-dependencies]
tokio = { version = "1", features = ["full", "test-util"] }
"#;

const APP_LIB: &str = r#"
#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_macro_answers() {
        tokio::task::yield_now().await;
        assert_eq!(answer::answer!(), 42);
    }
}
"#;

/// `cargo sim test` as a user runs it from a shell (no library path of
/// the toolchain in its environment, which `cargo test` would set) on a
/// workspace with a proc-macro crate: its test binary finds the standard
/// library, as under `cargo test`.
#[test]
fn a_proc_macro_crates_tests_run_from_a_plain_shell() {
    let _shared = SHARED_TARGET.lock().unwrap_or_else(|e| e.into_inner());
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = user_project(
        "proc-macro-user",
        &[
            ("Cargo.toml", MACRO_WORKSPACE),
            ("answer/Cargo.toml", MACRO_MANIFEST),
            ("answer/src/lib.rs", MACRO_LIB),
            ("app/Cargo.toml", APP_MANIFEST),
            ("app/src/lib.rs", APP_LIB),
        ],
    );
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "test", "--workspace"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", target.join("sweep-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("SIM_SEED")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cargo sim test failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("sim: 2 passed, 0 failed"),
        "{stdout}\n{stderr}"
    );
}
