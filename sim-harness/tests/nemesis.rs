//! The nemesis's network, clock and disk generators, each seen from the
//! hosts it breaks. Simulation build only: `tokio::sim` is the facade's.
#![cfg(simulation)]

use sim_runtime::SimConfig;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sim::{DiskConfig, Nemesis, Sim};

const HOSTS: [&str; 3] = ["a", "b", "c"];
const PORT: u16 = 5000;
/// How often each host sends a heartbeat to each other host.
const BEAT_MS: u64 = 10;

/// Beats sent before this have arrived by the end, unless lost.
const SETTLED_MS: u64 = 17_000;

/// A heartbeat, as sent and as received.
#[derive(Debug, Default)]
struct Beats {
    /// (from, to) -> send times (ms).
    sent: BTreeMap<(String, String), Vec<u64>>,
    /// (from, to) -> (send ms, receive ms).
    received: BTreeMap<(String, String), Vec<(u64, u64)>>,
}

impl Beats {
    /// The send times of heartbeats `from -> to` that never arrived.
    fn lost(&self, from: &str, to: &str) -> Vec<u64> {
        let key = (from.to_string(), to.to_string());
        let got: Vec<u64> = self
            .received
            .get(&key)
            .map_or(Vec::new(), |r| r.iter().map(|(sent, _)| *sent).collect());
        // Beats sent near the end may still be on their way (or held).
        self.sent[&key]
            .iter()
            .copied()
            .filter(|t| *t < SETTLED_MS && !got.contains(t))
            .collect()
    }

    /// The longest a heartbeat `from -> to` took, in ms.
    fn slowest(&self, from: &str, to: &str) -> u64 {
        self.received[&(from.to_string(), to.to_string())]
            .iter()
            .map(|(sent, got)| got - sent)
            .max()
            .unwrap_or(0)
    }
}

/// Three hosts beat at each other over UDP for 20 s under `nemesis`.
fn heartbeats(seed: u64, nemesis: Nemesis) -> (Beats, String) {
    let beats = Rc::new(RefCell::new(Beats::default()));
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    for name in HOSTS {
        let beats = beats.clone();
        sim.host(name, move || {
            let beats = beats.clone();
            async move {
                let socket = tokio::net::UdpSocket::bind(("0.0.0.0", PORT))
                    .await
                    .unwrap();
                let ms = || tokio::sim::now().as_millis() as u64;
                let mut tick = tokio::time::interval(Duration::from_millis(BEAT_MS));
                let mut buf = [0u8; 64];
                loop {
                    tokio::select! {
                        got = socket.recv_from(&mut buf) => {
                            let (n, _) = got.unwrap();
                            let text = std::str::from_utf8(&buf[..n]).unwrap();
                            let (from, sent) = text.split_once(' ').unwrap();
                            beats
                                .borrow_mut()
                                .received
                                .entry((from.to_string(), name.to_string()))
                                .or_default()
                                .push((sent.parse().unwrap(), ms()));
                        }
                        _ = tick.tick() => {
                            for peer in HOSTS.iter().filter(|p| **p != name) {
                                let now = ms();
                                let beat = format!("{name} {now}");
                                socket.send_to(beat.as_bytes(), (*peer, PORT)).await.unwrap();
                                beats
                                    .borrow_mut()
                                    .sent
                                    .entry((name.to_string(), peer.to_string()))
                                    .or_default()
                                    .push(now);
                            }
                        }
                    }
                }
            }
        });
    }
    sim.nemesis(nemesis);
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(20)).await;
    });
    let hash = sim.run().trace_hash;
    let beats = Rc::try_unwrap(beats).unwrap().into_inner();
    (beats, hash)
}

fn pairs() -> Vec<(&'static str, &'static str)> {
    let mut pairs = Vec::new();
    for a in HOSTS {
        for b in HOSTS.iter().filter(|b| **b != a) {
            pairs.push((a, *b));
        }
    }
    pairs
}

const S: fn(u64) -> Duration = Duration::from_secs;

#[test]
fn pairwise_partitions_cut_both_directions_of_a_drawn_pair() {
    let nemesis = || Nemesis::new().partition(&HOSTS, S(2)..S(4), S(1)..S(2));
    let (beats, hash) = heartbeats(1, nemesis());
    // Some pair lost beats both ways at the same moments.
    let both_ways = pairs().iter().any(|(a, b)| {
        let back = beats.lost(b, a);
        beats.lost(a, b).iter().any(|t| back.contains(t))
    });
    assert!(
        both_ways,
        "{:?}",
        pairs()
            .iter()
            .map(|(a, b)| beats.lost(a, b).len())
            .collect::<Vec<_>>()
    );
    // Without a nemesis nothing is lost; with it, the seed decides.
    let (calm, _) = heartbeats(1, Nemesis::new());
    assert!(pairs().iter().all(|(a, b)| calm.lost(a, b).is_empty()));
    assert_eq!(heartbeats(1, nemesis()).1, hash);
}

#[test]
fn one_way_partitions_cut_one_direction_only() {
    let (beats, _) = heartbeats(
        2,
        Nemesis::new().partition_one_way(&HOSTS, S(2)..S(4), S(1)..S(2)),
    );
    let mut one_way = false;
    for (a, b) in pairs() {
        let back = beats.lost(b, a);
        let lost = beats.lost(a, b);
        // A one-way cut never loses both directions at one moment.
        assert!(
            lost.iter().all(|t| !back.contains(t)),
            "{a}<->{b} both ways"
        );
        one_way |= !lost.is_empty();
    }
    assert!(one_way, "some direction was cut");
}

#[test]
fn a_held_direction_delays_its_bytes_and_loses_none() {
    let (beats, _) = heartbeats(3, Nemesis::new().hold(&HOSTS, S(2)..S(4), S(1)..S(2)));
    let slowest = pairs()
        .iter()
        .map(|(a, b)| beats.slowest(a, b))
        .max()
        .unwrap();
    assert!(
        slowest >= 900,
        "a hold of 1 to 2 s delayed some beat: {slowest} ms"
    );
    for (a, b) in pairs() {
        assert!(
            beats.lost(a, b).is_empty(),
            "{a}->{b} lost beats under a hold"
        );
    }
}

/// Each host's wall clock minus true time, sampled every 500 ms.
fn clock_offsets(seed: u64, nemesis: Nemesis) -> BTreeMap<&'static str, Vec<i128>> {
    let offsets = Rc::new(RefCell::new(BTreeMap::new()));
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    let mut base = None;
    for name in HOSTS {
        let out = offsets.clone();
        sim.host(name, move || {
            let out = out.clone();
            async move {
                loop {
                    let wall = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_millis() as i128;
                    let truth = tokio::sim::now().as_millis() as i128;
                    out.borrow_mut()
                        .entry(name)
                        .or_insert_with(Vec::new)
                        .push(wall - truth);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        });
    }
    sim.nemesis(nemesis);
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    sim.run();
    let mut offsets = Rc::try_unwrap(offsets).unwrap().into_inner();
    // Relative to the run's start: only changes count.
    for samples in offsets.values_mut() {
        let first = *base.get_or_insert(samples[0]);
        for s in samples.iter_mut() {
            *s -= first;
        }
    }
    offsets
}

#[test]
fn clock_generators_skew_jump_and_drift_the_drawn_hosts() {
    let calm = clock_offsets(4, Nemesis::new());
    assert!(calm.values().flatten().all(|o| *o == 0), "{calm:?}");
    let skewed = clock_offsets(4, Nemesis::new().clock_skew(&HOSTS, S(3)..S(6), S(10)));
    assert!(skewed.values().flatten().any(|o| *o >= 1_000), "{skewed:?}");
    // Skews only go ahead; jumps go either way.
    assert!(skewed.values().flatten().all(|o| *o >= 0), "{skewed:?}");
    let jumped = clock_offsets(4, Nemesis::new().clock_jump(&HOSTS, S(3)..S(6), 5_000));
    let back =
        |o: &BTreeMap<&str, Vec<i128>>| o.values().any(|s| s.windows(2).any(|w| w[1] < w[0]));
    assert!(back(&jumped), "{jumped:?}");
    // A drift moves a clock a little at every sample, not in one step.
    let drifted = clock_offsets(4, Nemesis::new().clock_drift(&HOSTS, S(1)..S(2), 50_000));
    let steps: usize = drifted
        .values()
        .map(|s| s.windows(2).filter(|w| w[0] != w[1]).count())
        .sum();
    assert!(steps > 20, "{drifted:?}");
}

/// A host that appends 1 KiB and syncs every 100 ms for 20 s; the errors
/// it saw, by kind, and whether its last write worked.
fn disk_errors(seed: u64, nemesis: Nemesis) -> (BTreeMap<String, u32>, bool) {
    let errors = Rc::new(RefCell::new((BTreeMap::new(), false)));
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    let out = errors.clone();
    sim.host("db", move || {
        let out = out.clone();
        async move {
            use tokio::io::AsyncWriteExt;
            let path = std::env::temp_dir().join("nemesis-disk.log");
            let mut file = tokio::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .await
                .unwrap();
            loop {
                let result = match file.write_all(&[7u8; 1024]).await {
                    Ok(()) => file.sync_all().await,
                    Err(e) => Err(e),
                };
                tokio::sim::publish("write ok", result.is_ok());
                {
                    let mut out = out.borrow_mut();
                    out.1 = result.is_ok();
                    if let Err(e) = result {
                        *out.0.entry(format!("{:?}", e.kind())).or_insert(0) += 1;
                    }
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    sim.nemesis(nemesis);
    sim.client("workload", async {
        tokio::time::sleep(Duration::from_secs(20)).await;
    });
    // The liveness phase stops the nemesis, whose disk faults then end.
    sim.eventually("the db writes again", S(1), |obs| {
        obs.get("db", "write ok") == Some("true")
    });
    sim.run();
    Rc::try_unwrap(errors).unwrap().into_inner()
}

#[test]
fn disk_generators_fill_and_break_a_disk_for_a_while() {
    let (calm, _) = disk_errors(5, Nemesis::new());
    assert!(calm.is_empty(), "{calm:?}");
    let (full, _) = disk_errors(5, Nemesis::new().disk_full(&["db"], S(2)..S(4), S(1)..S(2)));
    assert!(
        full.get("StorageFull").copied().unwrap_or(0) > 5,
        "{full:?}"
    );
    let broken = DiskConfig {
        write_error_rate: 1.0,
        ..DiskConfig::default()
    };
    let (eio, last_ok) = disk_errors(
        5,
        Nemesis::new().disk_faults(&["db"], S(2)..S(4), broken, S(1)..S(2)),
    );
    assert!(eio.values().sum::<u32>() > 5, "{eio:?}");
    assert!(last_ok, "the disk's own config came back: {eio:?}");
}
