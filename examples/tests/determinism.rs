//! The example's whole run repeats with its seed, across processes: same
//! trace file, same output. Different seeds give different schedules.
//! Simulation build only: on real tokio nothing is seeded.
#![cfg(simulation)]

use std::path::PathBuf;
use std::process::{Command, Output};

fn run_jobs(seed: &str, trace: &PathBuf) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_jobs"))
        .env("SIM_SEED", seed)
        .env("SIM_TRACE", trace)
        .output()
        .expect("the example runs");
    assert!(
        output.status.success(),
        "jobs failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    dir.join(name)
}

#[test]
fn one_seed_gives_identical_traces_in_two_processes() {
    let (a, b) = (scratch("det-a.trace"), scratch("det-b.trace"));
    let out_a = run_jobs("0x5eed", &a);
    let out_b = run_jobs("0x5eed", &b);
    let trace_a = std::fs::read(&a).unwrap();
    let trace_b = std::fs::read(&b).unwrap();
    assert!(trace_a.len() > 1000, "a real trace was written");
    assert!(trace_a == trace_b, "same seed, different traces");
    assert_eq!(out_a.stdout, out_b.stdout, "same seed, different output");
    // The reported hash is the same too.
    let hash = |o: &Output| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .find_map(|l| l.split("trace sha256 ").nth(1).map(|h| h[..64].to_string()))
            .expect("the run reports its hash")
    };
    assert_eq!(hash(&out_a), hash(&out_b));
}

#[test]
fn different_seeds_give_different_schedules() {
    let (a, b) = (scratch("seed-1.trace"), scratch("seed-2.trace"));
    run_jobs("1", &a);
    run_jobs("2", &b);
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn a_bad_seed_is_refused_with_a_clear_message() {
    let output = Command::new(env!("CARGO_BIN_EXE_jobs"))
        .env("SIM_SEED", "not-a-number")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("SIM_SEED=\"not-a-number\" is not a valid seed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("0x2a"),
        "the message shows the accepted forms: {stderr}"
    );
}

#[test]
fn the_seed_and_replay_command_come_first() {
    let trace = scratch("banner.trace");
    let output = run_jobs("42", &trace);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(first.contains("seed 0x2a"), "{first}");
    assert!(first.contains("replay: SIM_SEED=0x2a"), "{first}");
}
