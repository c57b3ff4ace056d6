//! The replicated store of `src/follower_reads.rs` on the simulator, its
//! clients' history checked for linearizability, as a user would write
//! it: each client call is wrapped in `history::op`, and the run checks
//! the history at its end.
//!
//! With followers serving reads, a client can read a value older than one
//! whose write was already acknowledged: the check finds it within 100
//! seeds and names the operations. With reads passed to the leader, 500
//! seeds pass.
//!
//! Simulation build only.
#![cfg(simulation)]

use sim_examples::follower_reads::{serve, Client, Config};
use sim_runtime::SimConfig;
use sim_test_support::panic_text;
use tokio::sim::history::{self, models, Linearizable, Op};
use tokio::sim::Sim;

const LEADER: &str = "leader";
const FOLLOWERS: [&str; 2] = ["f1", "f2"];
/// Each client's operations.
const OPS_PER_CLIENT: usize = 12;

fn cluster(seed: u64, followers_serve_reads: bool) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    let config = Config {
        leader: LEADER.to_string(),
        followers: FOLLOWERS.iter().map(|f| f.to_string()).collect(),
        followers_serve_reads,
    };
    for node in [LEADER, FOLLOWERS[0], FOLLOWERS[1]] {
        let config = config.clone();
        sim.host(node, move || {
            let config = config.clone();
            async move {
                serve(node.to_string(), config).await.unwrap();
            }
        });
    }
    // readme-history:start
    sim.check_history(Linearizable::new(models::KeyValue::new()));
    for c in 0..3 {
        sim.client(&format!("client{c}"), async move {
            // Each client talks to one node, as behind a load balancer.
            let node = [LEADER, FOLLOWERS[0], FOLLOWERS[1]][rand::random_range(0..3)];
            let mut client = Client::connect(node).await.unwrap();
            for n in 0..OPS_PER_CLIENT {
                let key = ["a", "b"][rand::random_range(0..2)];
                if rand::random::<bool>() {
                    let value = format!("{c}.{n}");
                    let put = client.put(key, &value);
                    history::op(Op::write(key, value.as_str()), put)
                        .await
                        .unwrap();
                } else {
                    history::op(Op::read(key), client.get(key)).await.unwrap();
                }
            }
        });
    }
    // readme-history:end
    sim
}

/// One seed's failure, if it fails. Each seed runs on a thread of its
/// own, as `cargo sim test` runs it: `rand`'s thread-local generator is
/// seeded once per thread.
fn run(seed: u64, followers_serve_reads: bool) -> Option<String> {
    std::thread::spawn(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            cluster(seed, followers_serve_reads).run();
        }))
        .err()
        .map(panic_text)
    })
    .join()
    .unwrap()
}

#[test]
fn stale_follower_reads_are_found_within_100_seeds_and_named() {
    let (seed, text) = (0..100)
        .find_map(|seed| run(seed, true).map(|text| (seed, text)))
        .expect("a stale read within 100 seeds");
    assert!(
        text.starts_with("sim: consistency: history `ops` is not linearizable (key-value map)"),
        "seed {seed}: {text}"
    );
    // The window names the operations: the stale read, marked, and the
    // write it missed, by client, with their times.
    let window: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("What happened"))
        .collect();
    assert!(
        window
            .iter()
            .any(|l| l.contains("read \"") && l.ends_with("<-")),
        "{text}"
    );
    assert!(window.iter().any(|l| l.contains("write \"")), "{text}");
    assert!(
        window[2]
            .trim_start()
            .starts_with("invoked     returned    client"),
        "{text}"
    );
    assert!(
        text.contains("cannot take effect between its invocation and its return"),
        "{text}"
    );
    // The seed replays: the same failure, word for word.
    assert_eq!(run(seed, true).as_deref(), Some(text.as_str()));
}

#[test]
fn reads_through_the_leader_pass_500_seeds() {
    for seed in 0..500 {
        if let Some(text) = run(seed, false) {
            panic!("seed {seed}: a false failure:\n{text}");
        }
    }
}

/// The README's worked example is `cluster` above, and the report it shows
/// is seed 0's, up to the story of the run.
#[test]
fn the_readme_shows_this_example_and_its_report() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/follower_reads.rs"
    ))
    .unwrap();
    let between = |text: &str, start: &str, end: &str| -> String {
        let from = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
        let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from;
        text[from..to].to_string()
    };
    let readme = sim_test_support::docs();
    // The marked lines, less the function body's indentation.
    let code: String = between(
        &source,
        "// readme-history:start\n",
        "    // readme-history:end",
    )
    .lines()
    .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
    .collect();
    let shown = between(&readme, "<!-- history-code:start", "<!-- history-code:end");
    assert!(
        shown.contains(code.trim()),
        "the README's history example differs from tests/follower_reads.rs"
    );
    let report = run(0, true).expect("seed 0 reads a stale value");
    let report: String = report
        .lines()
        .take_while(|l| !l.starts_with("What happened before it"))
        .map(|l| format!("{l}\n"))
        .collect();
    let shown = between(
        &readme,
        "<!-- history-output:start",
        "<!-- history-output:end",
    );
    assert!(
        shown.contains(report.trim_end()),
        "the README's report differs from seed 0's:\n{report}"
    );
}
