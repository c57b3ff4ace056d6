//! Properties (`tokio::sim::assert_*`, through the workspace's
//! `sim-assert`) on a crate outside this workspace: a sweep lists every
//! property of a binary with its counts, the ones no run reached too; a
//! `sometimes` never satisfied fails a sweep of many seeds and is named
//! (not a one-seed run, not with `--allow-unreached`); a broken `always`
//! fails its run with class `assertion`, its message, details and call
//! site, and its replay line reproduces it; and the same crate builds and
//! passes on the real tokio, where the assertions are nothing. Plain build
//! only: these tests run cargo.
#![cfg(not(simulation))]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

const MANIFEST: &str = r#"[package]
name = "props-fixture"
version = "VERSION"
edition = "2021"

[dependencies]
tokio = { version = "1", features = ["full"] }
sim-assert = { path = "SIM-ASSERT-PATH" }

[dev-dependencies]
tokio = { version = "1", features = ["full", "test-util"] }

[workspace]
"#;

const LIB: &str = r#"
//! A queue whose workload is too weak to back it up.

/// Takes a job.
pub fn take(queue: &mut Vec<u32>) -> Option<u32> {
    sim_assert::assert_sometimes!(queue.len() > 100, "the queue backed up", queue.len());
    sim_assert::assert_always!(queue.len() < 1_000, "the queue is bounded");
    queue.pop()
}

/// No test calls this: its property is declared all the same.
pub fn never_called() {
    sim_assert::assert_reachable!("a path no test takes");
}
"#;

const WEAK: &str = r#"
#[tokio::test]
async fn a_weak_workload() {
    let jobs = 1 + std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 1u8) % 9;
    let mut queue: Vec<u32> = (0..jobs as u32).collect();
    while props_fixture::take(&mut queue).is_some() {
        tokio::task::yield_now().await;
        sim_assert::assert_reachable!("a job was taken");
    }
}

#[tokio::test]
async fn another_test() {}
"#;

const BROKEN: &str = r#"
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn retries_stay_bounded() {
    let mut retries = 0;
    // A coin per attempt: std's random keys are the seed's in a simulation.
    let coin = || std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), 0u8) % 2 == 0;
    while coin() {
        retries += 1;
        sim_assert::assert_always!(retries < 3, "at most two retries", retries);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
"#;

const DEEP: &str = r#"
use std::sync::{Arc, Mutex};

/// Six racers, five races: the bug needs the last racer to win each, one
/// run in 7,776.
#[tokio::test]
async fn the_last_racer_never_wins_five_in_a_row() {
    for race in 0..5 {
        let winner = Arc::new(Mutex::new(None));
        let racers: Vec<_> = (0..6)
            .map(|racer| {
                let winner = winner.clone();
                tokio::spawn(async move {
                    winner.lock().unwrap().get_or_insert(racer);
                })
            })
            .collect();
        for racer in racers {
            racer.await.unwrap();
        }
        if *winner.lock().unwrap() != Some(5) {
            return;
        }
        match race {
            0 => sim_assert::assert_reachable!("the last racer won race 1"),
            1 => sim_assert::assert_reachable!("the last racer won race 2"),
            2 => sim_assert::assert_reachable!("the last racer won race 3"),
            3 => sim_assert::assert_reachable!("the last racer won race 4"),
            _ => sim_assert::assert_reachable!("the last racer won race 5"),
        }
    }
    panic!("the last racer won five races in a row");
}
"#;

/// Two late grants in a row (BENCHMARKS.md: rates with and without
/// exploration).
const RETRY: &str = r#"
//! A planted bug behind two late grants in a row: the client asks for a
//! lease, gives up after 33 ms and asks once more; if the retry is late
//! too, it gives up for good (the bug: it should keep trying).
use std::time::Duration;
use tokio::sim::{LinkConfig, Sim};

#[test]
fn a_lease_is_granted() {
    let mut sim = Sim::new();
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(20),
        ..LinkConfig::default()
    });
    sim.host("server", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.client("client", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        let mut buf = [0u8; 16];
        for attempt in 0..2u8 {
            socket.send_to(&[attempt], "server:9").await.unwrap();
            // The grant for this attempt (a late one for the last is stale).
            let grant = async {
                loop {
                    socket.recv(&mut buf).await.unwrap();
                    if buf[0] == attempt {
                        break;
                    }
                }
            };
            let reply = tokio::time::timeout(Duration::from_millis(33), grant).await;
            if reply.is_ok() {
                return;
            }
            sim_assert::assert_sometimes!(true, "a grant was late and the client asked again");
        }
        panic!("two late grants in a row: the client gave up");
    });
    sim.run();
}
"#;

/// A retry's grant beating a late one (BENCHMARKS.md).
/// A property only a test marked `#[ignore]` reaches.
const IGNORED: &str = r#"
#[tokio::test]
async fn runs_by_default() {
    tokio::task::yield_now().await;
}

#[tokio::test]
#[ignore]
async fn slow_and_asked_for() {
    tokio::task::yield_now().await;
    sim_assert::assert_reachable!("the slow path");
}
"#;

const LEASE: &str = r#"
//! A planted bug behind a late lease grant: a client asks for a lease,
//! gives up after 25 ms and asks again; if the first grant arrives after
//! the second, the client holds two leases at once.
use std::time::Duration;
use tokio::sim::{LinkConfig, Sim};

#[test]
fn one_lease_at_a_time() {
    let mut sim = Sim::new();
    sim.default_link(LinkConfig {
        latency_min: Duration::from_millis(1),
        latency_max: Duration::from_millis(20),
        ..LinkConfig::default()
    });
    sim.host("server", || async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
        let mut buf = [0u8; 16];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await.unwrap();
            socket.send_to(&buf[..n], from).await.unwrap();
        }
    });
    sim.client("client", async {
        let socket = tokio::net::UdpSocket::bind("0.0.0.0:0").await.unwrap();
        let mut buf = [0u8; 16];
        for request in 0..1u8 {
            socket.send_to(&[request, 0], "server:9").await.unwrap();
            let first = tokio::time::timeout(Duration::from_millis(33), socket.recv(&mut buf)).await;
            if first.is_ok() {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            sim_assert::assert_sometimes!(true, "a grant was late and the client asked again");
            socket.send_to(&[request, 1], "server:9").await.unwrap();
            socket.recv(&mut buf).await.unwrap();
            let late_first = buf[1] == 1;
            if late_first {
                // The retry's grant came first: the late one is still on its way.
                panic!("the client holds two leases at once (request {request})");
            }
            socket.recv(&mut buf).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    sim.run();
}
"#;

/// A point late in a run, then races (the fork server's test).
const FORKED: &str = r#"
use std::sync::{Arc, Mutex};

/// Forty rounds of four racers; the point comes before the last four, so
/// what a branch run draws afresh is their order.
#[tokio::test]
async fn a_late_point_then_races() {
    let order = Arc::new(Mutex::new(Vec::new()));
    for round in 0..40u32 {
        if round == 36 {
            sim_assert::assert_reachable!("most of the run is behind");
        }
        let racers: Vec<_> = (0..4u32)
            .map(|racer| {
                let order = order.clone();
                tokio::spawn(async move {
                    tokio::task::yield_now().await;
                    order.lock().unwrap().push(racer + 4 * round);
                })
            })
            .collect();
        for racer in racers {
            racer.await.unwrap();
        }
    }
}
"#;

/// The same in a harness test: libtest runs it once per process.
const FORKED_HARNESS: &str = r#"
#[test]
fn a_late_point_in_a_harness_run() {
    let mut sim = tokio::sim::Sim::new();
    sim.client("client", async {
        for round in 0..40u32 {
            if round == 36 {
                sim_assert::assert_reachable!("most of the harness run is behind");
            }
            let racers: Vec<_> = (0..4u32)
                .map(|_| tokio::spawn(async { tokio::task::yield_now().await }))
                .collect();
            for racer in racers {
                racer.await.unwrap();
            }
        }
    });
    sim.run();
}
"#;

/// A thread alive at the point: a child would lack it.
const FORKED_THREAD: &str = r#"
#[tokio::test]
async fn a_point_with_a_thread_alive() {
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let waiter = std::thread::spawn(move || rx.recv().unwrap());
    for round in 0..20u32 {
        if round == 15 {
            sim_assert::assert_reachable!("a thread is alive here");
        }
        let racers: Vec<_> = (0..3u32)
            .map(|_| tokio::spawn(async { tokio::task::yield_now().await }))
            .collect();
        for racer in racers {
            racer.await.unwrap();
        }
    }
    tx.send(1).unwrap();
    tokio::task::spawn_blocking(move || waiter.join().unwrap())
        .await
        .unwrap();
}
"#;

const PLAIN: &str = r#"
/// A harness test (one process per seed) with no property: a sweep runs
/// all its seeds plain.
#[test]
fn a_harness_test_without_properties() {
    let mut sim = tokio::sim::Sim::new();
    sim.client("c", async { tokio::time::sleep(std::time::Duration::from_millis(1)).await });
    sim.run();
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// A fresh crate `props-{name}` (one per test: they run at once) named
/// `package`, version 0.1.0, with `files` (path, text), depending on
/// `sim-assert`, and a lock that pins the real tokio.
fn new_crate(name: &str, package: &str, files: &[(&str, &str)]) -> PathBuf {
    new_crate_version(name, (package, "0.1.0"), files)
}

fn new_crate_version(name: &str, package: (&str, &str), files: &[(&str, &str)]) -> PathBuf {
    let dir = tmp().join(format!("props-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let sim_assert = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim-assert");
    let manifest = MANIFEST
        .replace("props-fixture", package.0)
        .replace("VERSION", package.1)
        .replace("SIM-ASSERT-PATH", &sim_assert.display().to_string());
    write(&dir.join("Cargo.toml"), &manifest);
    for (path, text) in files {
        write(&dir.join(path), text);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["generate-lockfile", "--quiet"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// The fixture crate's files: (path, text).
const FILES: [(&str, &str); 8] = [
    ("src/lib.rs", LIB),
    ("tests/weak.rs", WEAK),
    ("tests/ignored.rs", IGNORED),
    ("tests/broken.rs", BROKEN),
    ("tests/deep.rs", DEEP),
    ("tests/plain.rs", PLAIN),
    ("tests/retry.rs", RETRY),
    ("tests/lease.rs", LEASE),
];

/// A fresh copy of the fixture crate. Every copy is the same package (its
/// version made of its sources), with the same sources and times, so its
/// targets build once for all of them.
fn fixture(name: &str) -> PathBuf {
    let version = format!("0.2.{}", common::content_hash(&FILES));
    let dir = new_crate_version(name, ("props-fixture", &version), &FILES);
    common::settle_times(&dir);
    dir
}

/// Runs the first replay line of `stderr` in `dir`, its settings (quoted
/// or not) as the environment: its output.
fn run_replay(dir: &Path, stderr: &str) -> (String, Output) {
    let replay = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: "))
        .unwrap_or_else(|| panic!("no replay line in:\n{stderr}"))
        .to_string();
    let (settings, command) = replay.split_once(" cargo sim ").unwrap();
    let mut replayed = Command::new(env!("CARGO_BIN_EXE_cargo-sim"));
    replayed
        .arg("sim")
        .args(command.split_whitespace())
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", tmp().join("sweep-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only");
    for setting in settings.split_whitespace() {
        let (name, value) = setting.split_once('=').unwrap();
        replayed.env(name, value.trim_matches('\''));
    }
    (replay, replayed.output().unwrap())
}

/// `cargo sim` with `words` in `dir`, its dependencies compiled once for
/// every fixture of this package (the sweep tests' target directory).
fn sim(dir: &Path, words: &str) -> (Output, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .arg("sim")
        .args(words.split_whitespace())
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", tmp().join("sweep-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .env_remove("SIM_SEED")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output, stdout, stderr)
}

/// The lines of `text` from the one that starts with `first`, `count` of
/// them.
fn lines_from(text: &str, first: &str, count: usize) -> Vec<String> {
    let start = text
        .lines()
        .position(|l| l.starts_with(first))
        .unwrap_or_else(|| panic!("no line starts with {first:?} in:\n{text}"));
    text.lines()
        .skip(start)
        .take(count)
        .map(str::to_string)
        .collect()
}

#[test]
fn a_sweep_lists_every_property_and_fails_on_the_ones_no_run_satisfied() {
    let dir = fixture("sweep");
    let (junit, report) = (dir.join("sim.xml"), dir.join("properties.json"));
    let words = format!(
        "test --test weak --seeds 20 --junit {} --report {}",
        junit.display(),
        report.display()
    );
    let (output, stdout, stderr) = sim(&dir, &words);
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    assert_eq!(
        lines_from(&stderr, "sim: properties of", 9),
        [
            "sim: properties of props-fixture --test weak:",
            "  a_weak_workload (20 runs):",
            "    always     \"the queue is bounded\"  src/lib.rs:7:5     held in 20 runs",
            "    sometimes  \"the queue backed up\"   src/lib.rs:6:5     never held (reached in 20 runs)",
            "    reachable  \"a path no test takes\"  src/lib.rs:13:5    never reached",
            "    reachable  \"a job was taken\"       tests/weak.rs:8:9  reached in 20 runs, first at seed 0x0",
            "sim: 2 properties of props-fixture --test weak never satisfied (the sweep fails; --allow-unreached lets it pass):",
            "  sometimes \"the queue backed up\" at src/lib.rs:6:5",
            "  reachable \"a path no test takes\" at src/lib.rs:13:5",
        ],
        "{stderr}"
    );
    assert!(
        stdout.contains("sim: 2 passed, 0 failed, 2 properties never satisfied"),
        "{stdout}"
    );
    // The same table in JUnit (as the testcase's properties) and as JSON.
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<property name=\"property: sometimes &quot;the queue backed up&quot; at src/lib.rs:6:5\" value=\"never held (reached in 20 runs)\"/>"),
        "{xml}"
    );
    // And as a page, drawn in a real browser.
    let body = sim_test_support::rendered_body(
        &report.with_extension("html"),
        &tmp().join("chromium-properties"),
    );
    for (attribute, value) in [
        ("data-errors", "0"),
        ("data-drawn", "1"),
        ("data-tests", "1"),
        ("data-properties", "4"),
        ("data-never", "2"),
        ("data-failing", "0"),
    ] {
        assert_eq!(
            body.get(attribute).map(String::as_str),
            Some(value),
            "{attribute}: {body:?}"
        );
    }
    let json = std::fs::read_to_string(&report).unwrap();
    for expected in [
        "\"test\": \"a_weak_workload\"",
        "\"runs\": 20",
        "\"first_satisfied_seed\": \"0x0\"",
        "\"runs_not_reached\": 20",
        "\"fails_the_sweep\": true",
        "\"branch_runs\": ",
    ] {
        assert!(json.contains(expected), "{expected} in:\n{json}");
    }

    let (output, _, stderr) = sim(&dir, "test --test weak --seeds 20 --allow-unreached");
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("never satisfied (not a failure: --allow-unreached):"),
        "{stderr}"
    );
    let (output, _, stderr) = sim(&dir, "test --test weak");
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("never satisfied (not a failure: one seed):"),
        "{stderr}"
    );
    // A filter that leaves a test out cannot tell whose property it was.
    let (output, _, stderr) = sim(&dir, "test --test weak --seeds 5 a_weak");
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("never satisfied (not a failure: a filter left some of its tests out):"),
        "{stderr}"
    );
    // A filter that matches nothing is an error, not a pass.
    // It names the filter and the nearest test names (a typo is found).
    let (output, _, stderr) = sim(&dir, "test --test weak a_waek_workload");
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("sim: error: no test of the 1 test binary built matches `a_waek_workload`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("; the nearest: `a_weak_workload`, `another_test`"),
        "{stderr}"
    );
}

/// The properties of a test marked `#[ignore]` are in its binary whether
/// or not it runs: one that did not run fails no sweep, and asked for, it
/// reaches them.
#[test]
fn a_property_of_an_ignored_test_fails_no_sweep_that_left_it_out() {
    let dir = fixture("ignored");
    let (output, _, stderr) = sim(&dir, "test --test ignored --seeds 5 --no-save");
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "never satisfied (not a failure: its #[ignore]d tests did not run; \
             --include-ignored runs them):"
        ),
        "{stderr}"
    );
    let (output, _, stderr) = sim(
        &dir,
        "test --test ignored --seeds 5 --no-save -- --include-ignored",
    );
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("reached in 5 runs"), "{stderr}");
    assert!(!stderr.contains("never satisfied"), "{stderr}");
}

#[test]
fn a_broken_always_fails_its_run_with_class_assertion_and_replays() {
    let dir = fixture("broken");
    let (output, stdout, stderr) = sim(&dir, "test --test broken --seeds 100 --no-save");
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let fail = stderr
        .lines()
        .find(|l| l.starts_with("FAIL retries_stay_bounded"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(fail.contains("failed (assertion)"), "{fail}");
    assert!(
        stderr.contains(
            "sim: assertion: always \"at most two retries\" did not hold at tests/broken.rs:11:9"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("  details: 3"), "{stderr}");
    assert!(
        stderr.contains("FAILED in 1 run of "),
        "the table counts the failing run:\n{stderr}"
    );
    let (_, output) = run_replay(&dir, &stderr);
    let again = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(101), "{again}");
    assert!(
        again.contains("did not hold at tests/broken.rs:11:9") && again.contains("details: 3"),
        "the replay reproduces it:\n{again}"
    );
}

#[test]
fn the_same_crate_passes_on_the_real_tokio_where_assertions_are_nothing() {
    let dir = fixture("plain");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["test", "--quiet", "--test", "weak"])
        .current_dir(&dir)
        // The real tokio, compiled once with the external-crate test's.
        .env("CARGO_TARGET_DIR", tmp().join("external-target"))
        .env("CARGO_PROFILE_DEV_DEBUG", "line-tables-only")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("2 passed"), "{stdout}");
}

/// The block of the README between `<!-- {name}:start ... -->` and its end
/// marker, without the fence lines.
fn readme_block(name: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("the README");
    let start = readme
        .find(&format!("<!-- {name}:start"))
        .unwrap_or_else(|| panic!("the README's {name} block"));
    let end = readme[start..].find(&format!("<!-- {name}:end")).unwrap() + start;
    readme[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn the_readme_example_prints_what_the_readme_shows() {
    let code = readme_block("properties-code");
    let dir = new_crate(
        "readme",
        "app",
        &[("src/lib.rs", ""), ("tests/queue.rs", &code)],
    );
    let (output, stdout, stderr) = sim(&dir, "test --test queue --seeds 100");
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let shown = readme_block("properties-output");
    let count = shown.lines().count();
    assert_eq!(
        lines_from(&stderr, "sim: properties of", count).join("\n"),
        shown.trim_end(),
        "the README's output is this run's:\n{stderr}"
    );
    assert!(
        stdout.contains("sim: 1 passed, 0 failed, 1 property never satisfied"),
        "{stdout}"
    );
}

#[test]
fn branch_runs_find_a_bug_five_unlikely_steps_deep_and_its_replay_reproduces_it() {
    let dir = fixture("deep");
    // Without exploration, a thousand seeds miss it (about one in 7,776)
    // and the sweep says how far they got.
    let (output, stdout, stderr) =
        sim(&dir, "test --test deep --seeds 1000 --no-save --no-explore");
    assert_eq!(output.status.code(), Some(101), "{stderr}");
    assert!(
        stdout.contains("sim: 1 passed, 0 failed, 1 property never satisfied"),
        "{stdout}"
    );
    assert!(
        stderr.contains("  reachable \"the last racer won race 5\" at tests/deep.rs:"),
        "{stderr}"
    );
    // With the defaults, branch runs from the rare stages dig it out.
    let junit = dir.join("deep.xml");
    let words = format!("test --test deep --seeds 1000 --junit {}", junit.display());
    let (output, stdout, stderr) = sim(&dir, &words);
    assert_eq!(output.status.code(), Some(101), "{stdout}\n{stderr}");
    let fail = stderr
        .lines()
        .find(|l| l.starts_with("FAIL the_last_racer_never_wins_five_in_a_row"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(fail.contains("a branch run of seed"), "{fail}");
    // Its branch runs shared processes, forked at their point.
    let (runs, forked) = branch_runs_forked(&stderr);
    assert!(forked > 0 && forked <= runs, "{stderr}");
    assert!(
        fail.contains("failed (panic), found by exploration after"),
        "{fail}"
    );
    assert!(
        stderr.contains("the last racer won five races in a row"),
        "{stderr}"
    );
    let seeds: u64 = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("sim: ")?
                .split_once(" seeds in ")?
                .0
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        seeds < 500,
        "dozens of runs, not thousands: {seeds}\n{stderr}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure message=\"a branch run of seed ") && xml.contains("SIM_BRANCH="),
        "JUnit names the branch run and its replay line:\n{xml}"
    );
    // Merged with other shards, it still fails.
    let merged = Command::new(env!("CARGO_BIN_EXE_cargo-sim"))
        .args(["sim", "merge"])
        .arg(&junit)
        .current_dir(&dir)
        .output()
        .unwrap();
    let merged_out = String::from_utf8_lossy(&merged.stdout);
    assert_eq!(merged.status.code(), Some(101), "{merged_out}");
    assert!(merged_out.contains("1 failed"), "{merged_out}");
    // Its replay line runs it alone, in a fresh process, and fails the same.
    let (replay, output) = run_replay(&dir, &stderr);
    assert!(replay.starts_with("SIM_BRANCH="), "{replay}");
    let again = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(101), "{again}");
    assert!(
        again.contains("the last racer won five races in a row"),
        "the replay reproduces it:\n{again}"
    );
    // It is saved (its root seed and branch points), and the next run,
    // of one seed, runs it first.
    let saved = std::fs::read_to_string(dir.join("sim-regressions/test-deep.txt")).unwrap();
    assert!(
        saved.contains(" panic branch=") && saved.contains("@tests/deep.rs:"),
        "{saved}"
    );
    let (output, _, stderr) = sim(&dir, "test --test deep");
    assert_eq!(output.status.code(), Some(101), "{stderr}");
    assert!(
        stderr.contains("failed (panic), a saved branch run:"),
        "the saved branch run runs first:\n{stderr}"
    );
}

/// Exploration keeps seeds back and gives back what it does not use:
/// every planned seed runs, in-process or one process per seed, with
/// properties or without.
#[test]
fn every_planned_seed_runs_with_exploration_on() {
    let dir = fixture("counts");
    // The weak target has two tests.
    for (target, seeds) in [("plain", 40), ("weak", 80)] {
        let words = format!("test --test {target} --seeds 40 --allow-unreached");
        let (output, stdout, stderr) = sim(&dir, &words);
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!("sim: {seeds} seeds in ")),
            "{target}: {stderr}"
        );
    }
}

/// The failing runs of a sweep that counts every run: its failed seeds and
/// its failed branch runs.
fn failing_runs(stderr: &str, test: &str) -> u64 {
    let head = format!("FAIL {test} [");
    let Some(line) = stderr.lines().find(|l| l.starts_with(&head)) else {
        return 0;
    };
    let seeds: u64 = line
        .split("]: ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let branches: u64 = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("and ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    seeds + branches
}

/// With a `sometimes` at a bug's precondition (a late grant), a sweep that
/// counts every run fails many times as often with exploration as
/// without.
#[test]
fn guidance_raises_the_rate_of_a_rare_bug_behind_a_sometimes() {
    let dir = fixture("rates");
    let words = "test --test retry --seeds 600 --keep-going --no-save";
    let (_, _, guided) = sim(&dir, words);
    let (_, _, plain) = sim(&dir, &format!("{words} --no-explore"));
    // A harness test forks its branch runs at their point once a plain run
    // passed without a panic; the closing line counts them.
    let (runs, forked) = branch_runs_forked(&guided);
    assert!(forked > 0 && forked <= runs, "{guided}");
    let (guided, plain) = (
        failing_runs(&guided, "a_lease_is_granted"),
        failing_runs(&plain, "a_lease_is_granted"),
    );
    assert!(
        guided >= 3 * plain.max(1),
        "guided {guided} failing runs, plain {plain}"
    );
}

/// The closing line's branch runs, and how many of them forked at their
/// point: `...; 992 of them branch runs from 32 branch points, 960 forked
/// at their point (...)`.
fn branch_runs_forked(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" of them branch run"))
        .unwrap_or_else(|| panic!("no branch runs in:\n{stderr}"));
    let number_before = |word: &str| -> u64 {
        let head = &line[..line
            .find(word)
            .unwrap_or_else(|| panic!("{word:?} in {line}"))];
        head.rsplit([' ', ';', ','])
            .find(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    let forked = match line.contains(" forked at their point") {
        true => number_before(" forked at their point"),
        false => 0,
    };
    (number_before(" of them branch run"), forked)
}

/// The newest test binary under `dir` whose name is `stem-<hash>`.
fn newest_binary(dir: &Path, stem: &str) -> PathBuf {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    // Bounded by the target directory's size.
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.starts_with(&format!("{stem}-")) && !name.contains('.') {
                let modified = entry.metadata().unwrap().modified().unwrap();
                found.push((modified, path));
            }
        }
    }
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no {stem}-* under {}", dir.display()))
        .1
}

/// One process of the test binary `binary` running test `name` for seed
/// 0x5 as a sweep runs it, with `settings`: its records.
fn run_records(binary: &Path, name: &str, settings: &[(&str, String)]) -> Vec<String> {
    let out = binary.with_extension(format!("records-{}", settings.len()));
    let _ = std::fs::remove_file(&out);
    let output = Command::new(binary)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("SIM_SWEEP_OUT", &out)
        .env("SIM_SWEEP_SEEDS", "0x5")
        .env("SIM_SWEEP_PARENT", std::process::id().to_string())
        .env("SIM_SEED", "0x5")
        .envs(settings.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A run's hash after the `branched` record of its salt, for each run.
fn hashes_by_salt(records: &[String]) -> Vec<(String, String)> {
    let mut salt = String::new();
    let mut out = Vec::new();
    for line in records {
        let fields: Vec<&str> = line.split('\t').collect();
        match fields[0] {
            "branched" => salt = fields[1].to_string(),
            "run" => out.push((salt.clone(), fields[2].to_string())),
            _ => {}
        }
    }
    out
}

/// Where the one `reachable` of `test` is, from a plain run's records.
fn point_location(binary: &Path, test: &str) -> String {
    let plain = run_records(binary, test, &[]);
    plain
        .iter()
        .find_map(|l| l.strip_prefix("declare\treachable\t"))
        .and_then(|rest| rest.split('\t').next())
        .unwrap_or_else(|| panic!("{plain:?}"))
        .to_string()
}

/// Runs `test` of `binary` as a branch job of three runs from its one
/// point, forked, then each run alone from the start: equal hashes, and
/// three different suffixes.
fn forked_runs_equal_replays(binary: &Path, test: &str) {
    let location = point_location(binary, test);
    let plan = |salt: &str| format!("{salt}@1@{location}");
    let forked = run_records(
        binary,
        test,
        &[
            ("SIM_BRANCH", plan("0x11")),
            ("SIM_BRANCH_FORK", "0x22,0x33".to_string()),
        ],
    );
    let ended: Vec<&String> = forked
        .iter()
        .filter(|l| l.starts_with("branch-ended"))
        .collect();
    assert_eq!(
        ended,
        ["branch-ended\t0x11\t0", "branch-ended\t0x22\t0"],
        "two children passed, then the process ran its own: {forked:?}"
    );
    let forked_hashes = hashes_by_salt(&forked);
    let salts: Vec<&str> = forked_hashes.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(salts, ["0x11", "0x22", "0x33"], "{forked:?}");
    for (salt, hash) in &forked_hashes {
        let alone = run_records(binary, test, &[("SIM_BRANCH", plan(salt))]);
        let replayed: Vec<String> = hashes_by_salt(&alone).into_iter().map(|(_, h)| h).collect();
        assert_eq!(
            replayed,
            std::slice::from_ref(hash),
            "{test}, salt {salt}: forked and replayed runs differ"
        );
    }
    let distinct: std::collections::BTreeSet<&String> =
        forked_hashes.iter().map(|(_, h)| h).collect();
    assert_eq!(
        distinct.len(),
        3,
        "each salt draws its own suffix: {forked_hashes:?}"
    );
}

/// A branch job forks at its point: each child's run is, hash for hash,
/// the run a replay from the start with its salt gives, and the salts
/// draw different suffixes; in a `#[tokio::test]` (an in-process sweep)
/// and in a harness test (one run per process, libtest's).
#[test]
fn forked_branch_runs_equal_their_replays_from_the_start() {
    let dir = new_crate(
        "fork",
        "props-fixture",
        &[
            ("tests/forked.rs", FORKED),
            ("tests/forked_harness.rs", FORKED_HARNESS),
            ("tests/forked_thread.rs", FORKED_THREAD),
        ],
    );
    let words = "test --test forked --test forked_harness --test forked_thread --no-save";
    let (output, stdout, stderr) = sim(&dir, words);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let target = tmp().join("sweep-target");
    forked_runs_equal_replays(&newest_binary(&target, "forked"), "a_late_point_then_races");
    forked_runs_equal_replays(
        &newest_binary(&target, "forked_harness"),
        "a_late_point_in_a_harness_run",
    );
    // A thread alive at the point: the process does not fork; it runs the
    // first salt and leaves the others to the runner, which replays them.
    let binary = newest_binary(&target, "forked_thread");
    let test = "a_point_with_a_thread_alive";
    let plan = format!("0x11@1@{}", point_location(&binary, test));
    let alone = run_records(
        &binary,
        test,
        &[
            ("SIM_BRANCH", plan),
            ("SIM_BRANCH_FORK", "0x22,0x33".to_string()),
        ],
    );
    let salts: Vec<String> = hashes_by_salt(&alone).into_iter().map(|(s, _)| s).collect();
    assert_eq!(salts, ["0x11"], "{alone:?}");
    assert!(
        !alone.iter().any(|l| l.starts_with("branch-ended")),
        "{alone:?}"
    );
    // It says why, for the runner's summary.
    assert!(
        alone
            .iter()
            .any(|l| l.starts_with("unforked\t1 other thread was alive at the point")),
        "{alone:?}"
    );
}
