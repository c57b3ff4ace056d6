//! The showcase: the replicated store of `src/kv` on the harness. Three
//! nodes under a swarm (latency, loss, disk latency and errors, clock
//! jumps) and a nemesis (crashes, SIGTERM, isolation, partitions), a
//! client writing all along, two invariants checked after every harness
//! event, and a liveness property once the faults stop.
//!
//! `KV_PLANTED_BUG=1` plants the bug (a vote without the log check):
//! `KV_PLANTED_BUG=1 cargo sim test -p sim-examples --test kv --seeds 100`
//! finds it, and the checker's message explains it. The last test shows
//! that it is found within 100 seeds, and that its seed replays.
//!
//! Simulation build only.
#![cfg(simulation)]

use sim_test_support::panic_text;

use sim_examples::kv;
use sim_runtime::SimConfig;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tokio::sim::swarm::{Dim, Swarm};
use tokio::sim::{Nemesis, Observations, Sim};

const NODES: [&str; 3] = ["kv1", "kv2", "kv3"];
const S: fn(u64) -> Duration = Duration::from_secs;
/// How many writes the client makes, one every 200 ms.
const WRITES: u64 = 100;

fn peers() -> Vec<String> {
    NODES.iter().map(|n| format!("{n}:8080")).collect()
}

/// "At most one leader per term": every leader ever published, by term.
fn one_leader_per_term() -> impl Fn(&Observations<'_>) -> Result<(), String> {
    let leaders: RefCell<BTreeMap<u64, String>> = RefCell::default();
    move |obs| {
        for (host, value) in obs.all("leader") {
            let term: u64 = value.split(' ').next().unwrap().parse().unwrap();
            let mut leaders = leaders.borrow_mut();
            let first = leaders.entry(term).or_insert_with(|| host.to_string());
            if first != host {
                return Err(format!("{first} and {host} both lead term {term}"));
            }
        }
        Ok(())
    }
}

/// "No acknowledged write lost": a leader elected in a term after a
/// write's commit term holds the write (Raft's leader completeness).
fn no_acknowledged_write_lost() -> impl Fn(&Observations<'_>) -> Result<(), String> {
    // Write id -> the term it was acknowledged in.
    let acked: RefCell<BTreeMap<u64, u64>> = RefCell::default();
    let judged: RefCell<BTreeSet<(String, String)>> = RefCell::default();
    move |obs| {
        if let Some(ack) = obs.get("client", "acked") {
            let (id, term) = ack.split_once(' ').unwrap();
            acked
                .borrow_mut()
                .insert(id.parse().unwrap(), term.parse().unwrap());
        }
        for (host, value) in obs.all("leader") {
            if !judged
                .borrow_mut()
                .insert((host.to_string(), value.to_string()))
            {
                continue;
            }
            let (term, ids) = value.split_once(' ').unwrap_or((value, ""));
            let term: u64 = term.parse().unwrap();
            let held: BTreeSet<u64> = ids.split(',').filter_map(|i| i.parse().ok()).collect();
            for (&id, &acked_term) in acked.borrow().iter() {
                if acked_term < term && !held.contains(&id) {
                    return Err(format!(
                        "{host} was elected leader of term {term} without write #{id}, which \
                         was acknowledged in term {acked_term}: a vote went to a log that is \
                         not up to date"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The cluster, its workload and its checks, for one seed (`None`: the
/// seed of `SIM_SEED`, as a sweep sets it).
fn cluster(seed: Option<u64>, planted_bug: bool) -> Sim {
    let mut sim = match seed {
        Some(seed) => Sim::with_config(SimConfig::with_seed(seed)),
        None => Sim::new(),
    };
    for (id, name) in NODES.iter().enumerate() {
        sim.host(name, move || async move {
            let config = kv::Config {
                id,
                peers: peers(),
                wal_path: std::env::temp_dir().join("kv.wal"),
                planted_bug,
            };
            // A disk error stops the node; the nemesis or the liveness
            // phase restarts it.
            let _ = kv::serve(config).await;
        });
    }
    sim.swarm(
        Swarm::new(&NODES)
            .latency_max_ms(Dim::range(1, 20))
            .disk_error_rate(Dim::range(0.0, 0.001))
            .crash_every_s(Dim::Off)
            .isolate_every_s(Dim::Off)
            .partition_every_s(Dim::Off)
            .disk_full_every_s(Dim::Off)
            .poll_cost_max_us(Dim::Off),
    );
    sim.nemesis(
        Nemesis::new()
            .crash_restart(&NODES, S(4)..S(10), S(1)..S(3))
            .kill_after_grace(&NODES, S(8)..S(20), S(1), S(1)..S(2))
            .isolate(&NODES, S(3)..S(7), S(1)..S(4))
            .partition(&NODES, S(5)..S(12), S(1)..S(3)),
    );
    sim.check("at most one leader per term", one_leader_per_term());
    sim.check("no acknowledged write lost", no_acknowledged_write_lost());
    sim.eventually("the cluster settles on one leader", S(10), |obs| {
        let roles = obs.all("role");
        let leader = roles.iter().find(|(_, r)| r.starts_with("leader "));
        leader.is_some_and(|(_, r)| {
            let term = &r["leader ".len()..];
            roles.len() == NODES.len()
                && roles.iter().all(|(_, r)| {
                    *r == format!("leader {term}") || *r == format!("follower {term}")
                })
        })
    });
    sim.client("client", async {
        let mut client = kv::Client::new(&peers());
        for id in 1..=WRITES {
            let key = format!("k{}", id % 7);
            if let Ok(ack) = client.put(id, &key, &format!("v{id}"), S(3)).await {
                tokio::sim::publish("acked", format!("{id} {}", ack.term));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    sim
}

fn planted() -> bool {
    std::env::var("KV_PLANTED_BUG").is_ok_and(|v| v == "1")
}

#[test]
fn the_store_keeps_every_acknowledged_write_under_faults() {
    cluster(None, planted()).run();
}

/// Runs one seed on a thread of its own, as `cargo sim test` does: what a
/// run leaves in thread-locals (rand's `ThreadRng`, a library's caches)
/// must not leak into the next. The failure's text, if it failed.
fn run_alone(seed: u64, planted_bug: bool) -> Option<String> {
    std::thread::spawn(move || {
        let run = std::panic::AssertUnwindSafe(|| cluster(Some(seed), planted_bug).run());
        std::panic::catch_unwind(run).err().map(panic_text)
    })
    .join()
    .expect("the run's thread reports")
}

/// The first seed of `0..100` whose run fails, with its failure.
fn first_failing_seed(planted_bug: bool) -> Option<(u64, String)> {
    (0..100).find_map(|seed| run_alone(seed, planted_bug).map(|text| (seed, text)))
}

#[test]
fn the_planted_bug_is_found_within_100_seeds_and_replays() {
    let (seed, text) = first_failing_seed(true).expect("the planted bug is found in 100 seeds");
    assert!(
        text.starts_with("sim: correctness: checker `no acknowledged write lost` failed"),
        "seed {seed}: {text}"
    );
    assert!(
        text.contains("a vote went to a log that is not up to date"),
        "{text}"
    );
    // The seed replays: the same failure, word for word.
    assert_eq!(run_alone(seed, true).as_deref(), Some(text.as_str()));
    // The correct store passes that seed (and every one before it).
    for seed in 0..=seed {
        assert_eq!(run_alone(seed, false), None, "seed {seed}");
    }
}

#[test]
fn the_readme_shows_seed_0s_failure() {
    let readme = sim_test_support::docs();
    let start = readme
        .find("<!-- kv-output:start")
        .expect("the README's kv-output block");
    let block = &readme[start..readme[start..].find("<!-- kv-output:end -->").unwrap() + start];
    let shown = block
        .lines()
        .find(|l| l.starts_with("sim: correctness:"))
        .expect("the failure line");
    // Seed 0, as the sweep's first seed runs it (SIM_SEED=0).
    let text = run_alone(0, true).expect("seed 0 fails with the planted bug");
    assert_eq!(text.lines().next().unwrap(), shown);
}
