//! The guide's example of every harness builder with its arguments (links,
//! disks, workers, the liveness core, each nemesis generator, the swarm),
//! exactly as `docs/harness.md` shows it, run here. Simulation build only:
//! `tokio::sim` is the facade's.
#![cfg(simulation)]

// guide-builders:start
use std::time::Duration;
use tokio::sim::swarm::{Dim, Swarm};
use tokio::sim::{DiskConfig, LinkConfig, Nemesis, Sim};

const HOSTS: [&str; 3] = ["a", "b", "c"];

/// Each host sends a heartbeat to the others every 100 ms, publishes how
/// many it heard, and appends a line to its disk now and then (a write
/// that fails under a disk fault is let go: the service keeps beating).
async fn heartbeat(me: &'static str) {
    let socket = tokio::net::UdpSocket::bind("0.0.0.0:9").await.unwrap();
    let mut heard = 0u64;
    let mut buf = [0u8; 8];
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                for peer in HOSTS.iter().filter(|peer| **peer != me) {
                    let _ = socket.send_to(me.as_bytes(), (*peer, 9)).await;
                }
                let _ = tokio::fs::write("/beats", heard.to_string()).await;
            }
            Ok(_) = socket.recv_from(&mut buf) => {
                heard += 1;
                tokio::sim::publish("heard", heard);
            }
        }
    }
}

#[test]
fn heartbeats_ride_out_every_nemesis_generator() {
    let (s, ms) = (Duration::from_secs, Duration::from_millis);
    let mut sim = Sim::new();
    // Every link, then one pair: latency drawn per message, UDP loss.
    sim.default_link(LinkConfig {
        latency_min: ms(1),
        latency_max: ms(10),
        ..LinkConfig::default()
    });
    sim.link(
        "a",
        "b",
        LinkConfig {
            latency_min: ms(20),
            latency_max: ms(40),
            udp_drop_rate: 0.01,
            ..LinkConfig::default()
        },
    );
    sim.disk(
        "a",
        DiskConfig {
            write_error_rate: 0.001,
            ..DiskConfig::default()
        },
    );
    sim.workers("b", 4); // a multi_thread runtime of 4 simulated workers
    sim.liveness_core(&["a", "b"]); // healed and restarted when clients end
    for host in HOSTS {
        sim.host(host, move || heartbeat(host));
    }
    let broken_disk = DiskConfig {
        write_error_rate: 0.5,
        ..DiskConfig::default()
    };
    sim.nemesis(
        Nemesis::new()
            // hosts, every (drawn), then how long (drawn) or how much
            .crash_restart(&HOSTS, s(5)..s(20), s(1)..s(4))
            .kill_after_grace(&HOSTS, s(10)..s(40), s(2), s(1)..s(3))
            .isolate(&HOSTS, s(10)..s(30), s(2)..s(6))
            .split(&HOSTS, s(10)..s(30), s(1)..s(3))
            .partition(&HOSTS, s(5)..s(15), s(1)..s(3))
            .partition_one_way(&HOSTS, s(5)..s(15), s(1)..s(3))
            .hold(&HOSTS, s(5)..s(15), ms(100)..ms(500))
            .clock_skew(&HOSTS, s(5)..s(15), ms(200))
            .clock_jump(&HOSTS, s(10)..s(30), 5_000) // at most 5,000 ms
            .clock_drift(&HOSTS, s(10)..s(30), 100) // at most 100 ppm
            .disk_faults(&["a"], s(10)..s(30), broken_disk, s(1)..s(2))
            .disk_full(&["a"], s(10)..s(30), s(1)..s(2)),
    );
    sim.check("every count is a number", |obs| {
        match obs
            .all("heard")
            .iter()
            .find(|(_, n)| n.parse::<u64>().is_err())
        {
            Some((host, n)) => Err(format!("{host} published {n:?}")),
            None => Ok(()),
        }
    });
    sim.eventually("a and b hear each other again", s(10), |obs| {
        obs.get("a", "heard").is_some() && obs.get("b", "heard").is_some()
    });
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    sim.run();
}

#[test]
fn heartbeats_under_a_swarm() {
    let mut sim = Sim::new();
    sim.swarm(
        Swarm::new(&HOSTS)
            .latency_min_ms(Dim::Fixed(1))
            .latency_max_ms(Dim::range(5, 30))
            .udp_drop_rate(Dim::range(0.0, 0.05))
            .udp_dup_rate(Dim::Off)
            .udp_reorder_rate(Dim::range(0.0, 0.1))
            .crash_every_s(Dim::range(5, 30))
            .crash_only(&["b", "c"])
            .isolate_every_s(Dim::Off)
            .isolate_only(&["c"])
            .partition_every_s(Dim::range(5, 30))
            .partition_only(&["a", "b"])
            .clock_jump_every_s(Dim::Off)
            .clock_jump_only(&["a"])
            .disk_error_rate(Dim::range(0.0, 0.01))
            .disk_corruption_rate(Dim::Off)
            .disk_latency_max_us(Dim::Fixed(500))
            .disk_full_every_s(Dim::Off)
            .disk_full_only(&["a"])
            .poll_cost_max_us(Dim::range(0, 50))
            .workers(Dim::Fixed(1))
            .horizon(Duration::from_secs(20)),
    );
    for host in HOSTS {
        sim.host(host, move || heartbeat(host));
    }
    sim.client("clock", async {
        tokio::time::sleep(Duration::from_secs(20)).await;
    });
    sim.run();
}
// guide-builders:end

#[test]
fn the_guide_shows_this_example() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/guide_faults.rs"
    ))
    .unwrap();
    let between = |text: &str, start: &str, end: &str| -> String {
        let from = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
        let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from;
        text[from..to].to_string()
    };
    let code = between(
        &source,
        "// guide-builders:start\n",
        "// guide-builders:end",
    );
    let guide = sim_test_support::docs();
    let shown = between(&guide, "<!-- builders-code:start", "<!-- builders-code:end");
    assert!(
        shown.contains(code.trim()),
        "docs/harness.md's builders example differs from examples/tests/guide_faults.rs"
    );
}
