//! Simulated programs (`tokio::sim::process`) behind `tokio::process`:
//! what only a simulation has. tokio's own semantics are checked in both
//! builds by `compat-tests/tests/process.rs`. Simulation build only.
#![cfg(simulation)]

use std::cell::Cell;
use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::signal::unix::SignalKind;
use tokio::sim::process::{register, register_on};
use tokio::sim::{Fault, Sim};

/// Set when dropped: tells a test that a program's future is gone.
struct DropFlag(Rc<Cell<bool>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(true);
    }
}

/// Registers `daemon`: runs until killed, and sets `dropped` when it ends.
fn register_daemon(dropped: &Rc<Cell<bool>>) {
    let dropped = dropped.clone();
    register("daemon", move |_| {
        let flag = DropFlag(dropped.clone());
        async move {
            let _flag = flag;
            std::future::pending::<()>().await;
            0
        }
    });
}

#[tokio::test]
async fn the_readme_process_example() -> std::io::Result<()> {
    // readme:process-example:start
    tokio::sim::process::register("git", |mut inv| async move {
        inv.stdout.write_all(b"On branch main\n").await.unwrap();
        0
    });
    let out = tokio::process::Command::new("git")
        .arg("status")
        .output()
        .await?;
    assert_eq!(out.stdout, b"On branch main\n");
    // readme:process-example:end
    Ok(())
}

#[test]
fn the_readme_shows_the_process_example() {
    let lines = |text: &str, start: &str, end: &str, indent: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.contains(start))
            .skip(1)
            .take_while(|l| !l.contains(end))
            .filter(|l| !l.starts_with("```"))
            .map(|l| l.strip_prefix(indent).unwrap_or(l).to_string())
            .collect()
    };
    let docs = sim_test_support::docs();
    let readme = docs.as_str();
    let source = include_str!("processes.rs");
    let shown = lines(
        readme,
        "<!-- process-example:start",
        "<!-- process-example:end",
        "",
    );
    let tested = lines(
        source,
        "// readme:process-example:start",
        "// readme:process-example:end",
        "    ",
    );
    assert!(!shown.is_empty());
    assert_eq!(
        shown, tested,
        "the README's process example is not this test's"
    );
}

#[tokio::test]
async fn an_unregistered_program_names_itself_and_how_to_register_it() {
    let error = Command::new("git").arg("status").spawn().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    let message = error.to_string();
    assert!(message.contains("no program \"git\" is registered on host \"main\""));
    assert!(message.contains("tokio::sim::process::register(\"git\""));
}

/// A built-in refuses, at spawn, what it would not run as the real
/// program does, and names it; a registered program of its name wins.
#[tokio::test]
async fn a_builtin_names_what_it_does_not_run_and_gives_way_to_a_registered_one() {
    let error = Command::new("sh")
        .args(["-c", "ls | wc -l"])
        .spawn()
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    let message = error.to_string();
    assert!(
        message.contains("the built-in one does not run these arguments"),
        "{message}"
    );
    assert!(message.contains("a pipe |"), "{message}");
    assert!(
        message.contains("tokio::sim::process::register(\"sh\""),
        "{message}"
    );
    let error = Command::new("sleep").arg("forever").spawn().unwrap_err();
    assert!(error.to_string().contains("sleep's duration \"forever\""));

    register("echo", |mut inv| async move {
        inv.stdout.write_all(b"mine\n").await.unwrap();
        0
    });
    let output = Command::new("echo").arg("theirs").output().await.unwrap();
    assert_eq!(output.stdout, b"mine\n");
}

/// `sleep` sleeps in virtual time.
#[tokio::test]
async fn the_builtin_sleep_takes_virtual_time() {
    let start = tokio::time::Instant::now();
    let status = Command::new("sh")
        .args(["-c", "sleep 1.5; sleep 2m"])
        .status()
        .await
        .unwrap();
    assert!(status.success());
    // tokio's timers round up to the next millisecond, and polls take time.
    let elapsed = start.elapsed();
    assert!(
        (Duration::from_millis(121_500)..Duration::from_millis(121_510)).contains(&elapsed),
        "{elapsed:?}"
    );
}

/// A child whose simulation ended before its status was collected (its
/// runtime dropped; another runtime, another simulation, waits) ended with
/// it, killed, as its programs do on a host crash.
#[test]
fn a_child_of_an_ended_simulation_was_killed_with_it() {
    let mut child = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async { Command::new("sleep").arg("1").spawn().unwrap() });
    let status = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(child.wait())
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
}

#[tokio::test]
async fn a_path_finds_the_program_registered_by_its_file_name() {
    register("git", |mut inv| async move {
        inv.stdout.write_all(b"git here").await.unwrap();
        0
    });
    let output = Command::new("/usr/bin/git").output().await.unwrap();
    assert_eq!(output.stdout, b"git here");
}

#[tokio::test]
async fn pids_are_simulated_and_count_up() {
    register("true", |inv| async move {
        assert!(inv.pid >= 5_000_000);
        0
    });
    let first = Command::new("true").spawn().unwrap();
    let second = Command::new("true").spawn().unwrap();
    let (a, b) = (first.id().unwrap(), second.id().unwrap());
    assert!(a >= 5_000_000, "above any real pid: {a}");
    assert_eq!(b, a + 1);
}

#[tokio::test]
async fn kill_on_drop_kills_and_a_plain_drop_leaves_it_running() {
    let dropped = Rc::new(Cell::new(false));
    register_daemon(&dropped);

    let child = Command::new("daemon").spawn().unwrap();
    drop(child);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!dropped.get(), "a dropped child runs on");

    let child = Command::new("daemon").kill_on_drop(true).spawn().unwrap();
    let pid = child.id().unwrap() as libc_pid;
    drop(child);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(dropped.get(), "kill_on_drop killed the program");
    // Its pid is a zombie until reaped: signal 0 finds it.
    // SAFETY: a signal to a simulated pid.
    assert_eq!(unsafe { kill(pid, 0) }, 0);
}

#[tokio::test]
async fn a_program_that_takes_signals_over_handles_sigterm() {
    register("server", |mut inv| async move {
        let mut signals = inv.signals();
        let signal = signals.recv().await.unwrap();
        assert_eq!(signal, SignalKind::terminate());
        inv.stdout.write_all(b"shutting down").await.unwrap();
        0
    });
    let mut child = Command::new("server")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    // SAFETY: a signal to a simulated pid.
    assert_eq!(unsafe { kill(child.id().unwrap() as libc_pid, 15) }, 0);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    assert_eq!(out, "shutting down");
    assert_eq!(child.wait().await.unwrap().code(), Some(0));
    // SIGKILL cannot be taken over.
    let mut child = Command::new("server")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id().unwrap() as libc_pid;
    child.kill().await.unwrap();
    assert_eq!(child.wait().await.unwrap().signal(), Some(9));
    // A reaped pid is gone, as is one never given out.
    // SAFETY: signals to simulated pids.
    assert_eq!(unsafe { kill(pid, 0) }, -1);
    assert_eq!(std::io::Error::last_os_error().raw_os_error(), Some(3));
    // SAFETY: as above.
    assert_eq!(unsafe { kill(pid + 1000, 0) }, -1);
}

#[tokio::test]
async fn a_panicking_program_exits_with_code_101() {
    register("crashy", |_| async { panic!("the program's bug") });
    let status = Command::new("crashy").status().await.unwrap();
    assert_eq!(status.code(), Some(101));
}

#[tokio::test]
async fn a_programs_stdout_can_go_to_a_simulated_file() {
    register("report", |mut inv| async move {
        inv.stdout.write_all(b"line 1\n").await.unwrap();
        0
    });
    let path = std::env::temp_dir().join("sim-process-report.txt");
    let file = std::fs::File::create(&path).unwrap();
    let status = Command::new("report").stdout(file).status().await.unwrap();
    assert!(status.success());
    assert_eq!(tokio::fs::read(&path).await.unwrap(), b"line 1\n");
}

#[tokio::test]
async fn a_real_process_is_refused_during_a_run() {
    let result = std::process::Command::new("true").status();
    assert!(result.is_err(), "a real process escaped: {result:?}");
}

#[test]
fn programs_per_host_and_a_crash_kills_the_hosts_programs() {
    let dropped = Rc::new(Cell::new(false));
    let seen = dropped.clone();
    let mut sim = Sim::new();
    sim.host("worker", move || {
        let dropped = dropped.clone();
        async move {
            register_daemon(&dropped);
            register_on("worker", "whoami", |_| async { 1 });
            let mut child = Command::new("whoami").spawn().unwrap();
            assert_eq!(child.wait().await.unwrap().code(), Some(1));
            let _daemon = Command::new("daemon").spawn().unwrap();
            std::future::pending::<()>().await;
        }
    });
    sim.at(Duration::from_secs(5), Fault::Crash("worker".into()));
    sim.client("client", async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        register("whoami", |_| async { 2 });
        let status = Command::new("whoami").status().await.unwrap();
        assert_eq!(
            status.code(),
            Some(2),
            "the host-only program stays on its host"
        );
        assert!(!seen.get(), "the daemon runs until its host crashes");
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(seen.get(), "the crash killed the daemon");
    });
    sim.run();
}

#[allow(non_camel_case_types)]
type libc_pid = i32;

extern "C" {
    fn kill(pid: libc_pid, sig: i32) -> i32;
}
