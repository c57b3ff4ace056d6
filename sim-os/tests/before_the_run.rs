//! Randomness a test draws before its simulation starts follows the seed:
//! `rand::random()` and a `HashMap`'s order before `Sim::new()` repeat with
//! `SIM_SEED`, across processes. Simulation build only.
#![cfg(simulation)]

use std::process::Command;

/// What this test draws before any run: printed in probe mode.
fn draws_before_the_run() -> String {
    let value: u64 = rand::random();
    let map: std::collections::HashMap<u32, ()> = (0..16).map(|i| (i, ())).collect();
    let order: Vec<u32> = map.keys().copied().collect();
    format!("{value:x} {order:?}")
}

fn probe(seed: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "randomness_drawn_before_the_run_follows_the_seed",
            "--exact",
            "--nocapture",
        ])
        .env("BEFORE_THE_RUN_PROBE", "1")
        .env("SIM_SEED", seed)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("DRAWN "))
        .expect("the probe printed its draws")
        .to_string()
}

#[test]
fn randomness_drawn_before_the_run_follows_the_seed() {
    if std::env::var_os("BEFORE_THE_RUN_PROBE").is_some() {
        // Drawn before the simulation starts, as a test that picks its
        // fault times with rand and then builds its Sim does.
        let drawn = draws_before_the_run();
        let mut sim = tokio::sim::Sim::new();
        sim.client("client", async {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        });
        sim.run();
        println!("DRAWN {drawn}");
        return;
    }
    let a = probe("0x7");
    assert_eq!(a, probe("0x7"), "one seed, the same draws in two processes");
    assert_ne!(a, probe("0x8"), "another seed, other draws");
}

/// A future made while the test builds its `Sim` that makes a timer as it
/// is constructed cannot bind to a run that has not started: the panic
/// says so and shows the fix.
#[test]
fn a_timer_made_before_the_run_says_why_and_how_to_fix_it() {
    let payload = std::panic::catch_unwind(|| {
        let mut sim = tokio::sim::Sim::new();
        sim.client("w", tokio::time::sleep(std::time::Duration::from_millis(1)));
        sim.run();
    })
    .unwrap_err();
    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(text.starts_with("there is no reactor running"), "{text}");
    assert!(text.contains("while the test builds its Sim"), "{text}");
    assert!(
        text.contains("async move { tokio::time::sleep(d).await }"),
        "{text}"
    );
}
