//! The decision log: `SIM_RECORD` writes every choice of a run, stream by
//! stream; `SIM_REPLAY` replays the run from that file alone, and from an
//! edited one. Simulation build only: the harness is the facade's.
#![cfg(simulation)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tokio::sim::{Nemesis, Sim};

const HOSTS: [&str; 3] = ["a", "b", "c"];
const PORT: u16 = 5000;

/// The run the other tests record and replay: three hosts beat at each
/// other over UDP under a partitioning nemesis, each with three workers
/// that sleep random times (`getrandom`, through std's hasher keys) and
/// race in `select!`.
#[test]
fn cluster() {
    let mut sim = Sim::new();
    for name in HOSTS {
        sim.host(name, move || async move {
            let socket = tokio::net::UdpSocket::bind(("0.0.0.0", PORT))
                .await
                .unwrap();
            for worker in 0..3u64 {
                tokio::spawn(async move {
                    use std::hash::{BuildHasher, Hasher};
                    let keys = std::collections::hash_map::RandomState::new();
                    loop {
                        let mut h = keys.build_hasher();
                        h.write_u64(worker);
                        let ms = h.finish() % 7 + 1;
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                            _ = tokio::time::sleep(Duration::from_millis(8 - ms)) => {}
                        }
                    }
                });
            }
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            let mut buf = [0u8; 16];
            loop {
                tokio::select! {
                    got = socket.recv_from(&mut buf) => { got.unwrap(); }
                    _ = tick.tick() => {
                        for peer in HOSTS.iter().filter(|p| **p != name) {
                            socket.send_to(name.as_bytes(), (*peer, PORT)).await.unwrap();
                        }
                    }
                }
            }
        });
    }
    let s = Duration::from_secs;
    sim.nemesis(Nemesis::new().partition(&HOSTS, s(1)..s(2), s(1)..s(2)));
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    sim.run();
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("decisions")
}

/// Runs `cluster` in a child with `env`, and returns its trace and stderr.
fn run_cluster(label: &str, env: &[(&str, &Path)], seed: Option<&str>) -> (Vec<u8>, String) {
    std::fs::create_dir_all(dir()).unwrap();
    let trace = dir().join(format!("{label}.trace"));
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["cluster", "--exact", "--test-threads", "1"])
        .env("SIM_TRACE", &trace)
        .env_remove("SIM_SEED")
        .env_remove("SIM_RECORD")
        .env_remove("SIM_REPLAY")
        .env_remove("SIM_TRACE_BYTES");
    if let Some(seed) = seed {
        command.env("SIM_SEED", seed);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().unwrap();
    // A test's panic message is on its stdout, the run's notes on stderr.
    let stderr =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return (Vec::new(), stderr);
    }
    let file = dir().join(format!("{label}.trace.cluster"));
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    (bytes, stderr)
}

/// Records seed 7 to `<label>.decisions.cluster`.
fn record(label: &str) -> (Vec<u8>, PathBuf) {
    let base = dir().join(format!("{label}.decisions"));
    let (trace, stderr) = run_cluster(label, &[("SIM_RECORD", &base)], Some("7"));
    assert!(!trace.is_empty(), "the recorded run failed: {stderr}");
    (trace, dir().join(format!("{label}.decisions.cluster")))
}

fn streams(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("stream\t"))
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn a_recorded_run_is_the_run_and_its_file_replays_it_alone() {
    let (plain, _) = run_cluster("plain", &[], Some("7"));
    let (recorded, file) = record("recorded");
    assert!(plain == recorded, "recording changed the run");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\nseed 0x7\n"), "{text}");
    assert!(text.contains("\nset SIM_POLICY=random\n"), "{text}");
    let names = streams(&text);
    for wanted in ["schedule", "select", "random", "net latency"] {
        assert!(
            names.iter().any(|n| n == wanted),
            "no {wanted} in {names:?}"
        );
    }
    assert!(
        names.iter().any(|n| n.starts_with("nemesis")),
        "the nemesis's draws are listed: {names:?}"
    );
    // No seed given: the file's.
    let (replayed, stderr) = run_cluster("replayed", &[("SIM_REPLAY", &file)], None);
    assert!(replayed == recorded, "the replay differs: {stderr}");
}

#[test]
fn an_edited_schedule_drives_the_run_and_replays_the_same_each_time() {
    let (recorded, file) = record("edited");
    let text = std::fs::read_to_string(&file).unwrap();
    // Every pick FIFO: the schedule's values go, and its rest is `min`.
    let fifo: String = text
        .lines()
        .map(|l| {
            if l.starts_with("stream\tschedule\t") {
                "stream\tschedule\trest=min\t".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let edited = dir().join("edited.fifo");
    std::fs::write(&edited, fifo).unwrap();
    let (first, stderr) = run_cluster("fifo1", &[("SIM_REPLAY", &edited)], None);
    assert!(!first.is_empty(), "the FIFO run failed: {stderr}");
    let (second, _) = run_cluster("fifo2", &[("SIM_REPLAY", &edited)], None);
    assert!(first == second, "the edited file replays two ways");
    assert!(first != recorded, "the FIFO schedule changed nothing");
}

#[test]
fn a_replay_with_another_seed_or_a_bad_file_is_refused_by_name() {
    let (_, file) = record("refused");
    let (trace, stderr) = run_cluster("other-seed", &[("SIM_REPLAY", &file)], Some("8"));
    assert!(trace.is_empty(), "a replay ran with another seed");
    assert!(
        stderr.contains("was recorded with seed 0x7") && stderr.contains("seed 0x8"),
        "{stderr}"
    );
    let bad = dir().join("bad.decisions");
    std::fs::write(&bad, "seed 7\nstream\tschedule\trest=soon\t1\n").unwrap();
    let (trace, stderr) = run_cluster("bad-file", &[("SIM_REPLAY", &bad)], None);
    assert!(trace.is_empty(), "a bad file was replayed");
    assert!(
        stderr.contains("bad.decisions is not a decision file") && stderr.contains("line 2"),
        "{stderr}"
    );
}
