//! The README's multi-host example, exactly as the README shows it, and a
//! check that its printed output at seed 0x2a is the README's too.
//! Simulation build only: `tokio::sim` is the facade's.
#![cfg(simulation)]

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sim::{Fault, Sim};

// readme-harness:start
#[test]
fn the_client_rides_out_a_partition() {
    let mut sim = Sim::new(); // seeded from SIM_SEED
                              // A host is built by a factory, so that it can restart.
    sim.host("server", || async {
        let listener = tokio::net::TcpListener::bind("0.0.0.0:7").await.unwrap();
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    sim.at(
        Duration::from_secs(2),
        Fault::Partition("client".into(), "server".into()),
    );
    sim.at(
        Duration::from_secs(5),
        Fault::Heal("client".into(), "server".into()),
    );
    sim.client("client", async {
        let mut stream = tokio::net::TcpStream::connect("server:7").await.unwrap();
        let mut echo = [0u8; 4];
        for round in 0..5 {
            let sent = tokio::time::Instant::now();
            stream.write_all(b"ping").await.unwrap();
            // Across the partition, TCP holds the bytes until the heal.
            stream.read_exact(&mut echo).await.unwrap();
            let took = sent.elapsed().as_millis();
            println!(
                "round {round}: echo in {took} ms, at {:?}",
                tokio::sim::now()
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let report = sim.run(); // until every client finishes
    println!(
        "{} events, trace sha256 {}",
        report.events,
        &report.trace_hash[..16]
    );
}
// readme-harness:end

fn readme() -> String {
    sim_test_support::docs()
}

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
    let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from;
    &text[from..to]
}

#[test]
fn the_readme_shows_this_example_and_its_output() {
    let readme = readme();
    // The code, as this file has it.
    let source = std::fs::read_to_string(file!()).unwrap_or_else(|_| {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/readme_harness.rs"
        ))
        .unwrap()
    });
    let code = between(
        &source,
        "// readme-harness:start\n",
        "// readme-harness:end",
    );
    let shown = between(&readme, "<!-- harness-code:start", "<!-- harness-code:end");
    assert!(
        shown.contains(code.trim()),
        "the README's harness example differs from tests/readme_harness.rs"
    );
    // The output, as a run at seed 0x2a prints it.
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["the_client_rides_out_a_partition", "--exact", "--nocapture"])
        .env("SIM_SEED", "0x2a")
        .env_remove("SIM_TRACE")
        .env_remove("SIM_VERBOSE")
        .output()
        .unwrap();
    assert!(output.status.success());
    let printed: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.starts_with("round ") || l.contains(" events, trace sha256 "))
        .map(str::to_string)
        .collect();
    let block = between(
        &readme,
        "<!-- harness-output:start",
        "<!-- harness-output:end",
    );
    let expected: Vec<&str> = block
        .lines()
        .skip_while(|l| !l.starts_with("$ "))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert_eq!(expected, printed, "the README's harness output is stale");
}

#[test]
fn the_readme_trace_excerpt_is_this_examples_trace() {
    let trace = sim_test_support::child_trace(
        env!("CARGO_TARGET_TMPDIR"),
        "the_client_rides_out_a_partition",
        "0x2a",
        "readme-trace",
    );
    let trace = String::from_utf8(trace).unwrap();
    let lines: Vec<&str> = trace.lines().collect();
    let readme = readme();
    let block = between(
        &readme,
        "<!-- trace-excerpt:start",
        "<!-- trace-excerpt:end",
    );
    let shown: Vec<&str> = block
        .lines()
        .skip_while(|l| !l.starts_with("```text"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    assert!(shown.len() >= 5, "{block}");
    for line in shown {
        assert!(lines.contains(&line), "not in the trace: {line}");
    }
}

/// The README's "compare two seeds" output is what the comparison of this
/// example's traces at seeds 0x2a and 0x2b says.
#[test]
fn the_readme_compares_two_seeds_as_cargo_sim_diff_does() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let name = "the_client_rides_out_a_partition";
    sim_test_support::child_trace(env!("CARGO_TARGET_TMPDIR"), name, "0x2a", "compare-a");
    sim_test_support::child_trace(env!("CARGO_TARGET_TMPDIR"), name, "0x2b", "compare-b");
    let report = sim_runtime::trace::compare::report(
        &dir.join(format!("compare-a.{name}")),
        &dir.join(format!("compare-b.{name}")),
    )
    .unwrap()
    .expect("two seeds part");
    let readme = readme();
    let block = between(
        &readme,
        "<!-- compare-seeds:start",
        "<!-- compare-seeds:end",
    );
    let shown: Vec<&str> = block
        .lines()
        .skip_while(|l| !l.starts_with("first divergent event"))
        .take_while(|l| !l.starts_with("```"))
        .collect();
    let printed: Vec<&str> = report.lines().collect();
    assert_eq!(shown, printed, "the README's comparison is stale");
}

// Last, so that the lines above (spawn sites in traces and reports) keep
// their numbers.
