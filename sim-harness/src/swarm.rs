//! The swarm: per seed, the harness draws the run's fault settings (link
//! latency ranges, UDP loss, duplication and reordering, crash, isolation
//! and partition rates, wall-clock jumps, disk latency, EIO, ENOSPC and
//! corruption, the virtual-time cost of a poll) from ranges that include
//! zero and "off", each from a stream of its own in the seed tree. So a sweep tries many kinds of bad
//! days, not one, as TigerBeetle's VOPR and FoundationDB's simulator do.
//! The drawn plan is printed when the run starts and recorded in its trace.
//!
//! ```
//! use std::time::Duration;
//! use tokio::sim::swarm::{Dim, Swarm};
//! use tokio::sim::Sim;
//!
//! let mut sim = Sim::new();
//! for name in ["a", "b", "c"] {
//!     sim.host(name, || std::future::pending::<()>());
//! }
//! sim.swarm(
//!     Swarm::new(&["a", "b", "c"])
//!         .latency_max_ms(Dim::range(0, 20))
//!         .disk_error_rate(Dim::Off),
//! );
//! sim.client("workload", async {
//!     tokio::time::sleep(Duration::from_secs(30)).await;
//! });
//! sim.run();
//! ```

use crate::nemesis::Nemesis;
use sim_fs::DiskConfig;
use sim_net::LinkConfig;
use sim_runtime::rng::Rng;
use std::fmt::Write;
use std::time::Duration;

/// How one dimension of the swarm is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dim<T> {
    /// Never (zero, or the fault switched off).
    Off,
    /// Always this value.
    Fixed(T),
    /// Per seed: off half the time, otherwise uniform in `lo..=hi`.
    Range {
        /// The least value drawn.
        lo: T,
        /// The most value drawn.
        hi: T,
    },
}

impl<T> Dim<T> {
    /// Off half the time, otherwise uniform in `lo..=hi`.
    pub fn range(lo: T, hi: T) -> Dim<T> {
        Dim::Range { lo, hi }
    }
}

/// The swarm's dimensions (see the module docs). Every one can be fixed or
/// switched off by the test.
#[derive(Clone, Debug)]
pub struct Swarm {
    hosts: Vec<String>,
    latency_min_ms: Dim<u64>,
    latency_max_ms: Dim<u64>,
    udp_drop_rate: Dim<f64>,
    udp_dup_rate: Dim<f64>,
    udp_reorder_rate: Dim<f64>,
    crash_every_s: Dim<u64>,
    isolate_every_s: Dim<u64>,
    partition_every_s: Dim<u64>,
    clock_jump_every_s: Dim<u64>,
    disk_error_rate: Dim<f64>,
    disk_full_every_s: Dim<u64>,
    disk_corruption_rate: Dim<f64>,
    disk_latency_max_us: Dim<u64>,
    poll_cost_max_us: Dim<u64>,
    workers: Dim<u64>,
    /// How long the test runs, in virtual time: fault pacing scales to it.
    pacing: Pacing,
    /// Per fault dimension, the hosts it may act on (all the swarm's hosts
    /// when unset).
    groups: Groups,
}

/// The hosts each fault dimension may act on.
#[derive(Clone, Debug, Default)]
struct Groups {
    crash: Option<Vec<String>>,
    isolate: Option<Vec<String>>,
    partition: Option<Vec<String>>,
    clock_jump: Option<Vec<String>>,
    disk_full: Option<Vec<String>>,
}

/// The least time a swarm's link takes: a real network's round trip is
/// tens of microseconds even on one rack, and the swarm's disks (5-100 µs
/// an operation) and polls (up to 200 µs) take time too.
pub const LINK_LATENCY_FLOOR: Duration = Duration::from_micros(20);

/// The fault pacing's reference length: the `every_s` ranges and fault
/// durations are written for a run of this long, and a horizon scales them.
const PACING_REFERENCE: Duration = Duration::from_secs(60);

/// What the fault pacing of a swarm is scaled to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pacing {
    /// To the test's length, measured when the run starts.
    Measure,
    /// To a length the test gave ([`Swarm::horizon`]).
    Given(Duration),
    /// To the length measured from a run of the test without the swarm.
    Measured(Duration),
}

impl Pacing {
    /// The length the pacing is scaled to, once known.
    pub fn horizon(self) -> Option<Duration> {
        match self {
            Pacing::Measure => None,
            Pacing::Given(d) | Pacing::Measured(d) => Some(d),
        }
    }
}

/// What the swarm drew for one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Every link's latency is drawn in `latency_min_ms..=latency_max_ms`.
    pub latency_min_ms: u64,
    /// See `latency_min_ms`.
    pub latency_max_ms: u64,
    /// UDP loss on every link.
    pub udp_drop_rate: f64,
    /// UDP duplication on every link.
    pub udp_dup_rate: f64,
    /// UDP datagrams held back past later ones, on every link.
    pub udp_reorder_rate: f64,
    /// A host crashes (and restarts 1 to 5 s later) about this often.
    pub crash_every_s: Option<u64>,
    /// A host is cut off (for 1 to 5 s) about this often.
    pub isolate_every_s: Option<u64>,
    /// Two hosts are cut apart (for 1 to 5 s) about this often.
    pub partition_every_s: Option<u64>,
    /// A host's wall clock jumps (up to 10 s either way) about this often.
    pub clock_jump_every_s: Option<u64>,
    /// EIO on reads, writes and syncs of the hosts' disks.
    pub disk_error_rate: f64,
    /// A host's disk is full (ENOSPC, for 1 to 5 s) about this often.
    pub disk_full_every_s: Option<u64>,
    /// Reads that return a flipped bit, on the hosts' disks.
    pub disk_corruption_rate: f64,
    /// Each disk operation takes up to this long.
    pub disk_latency_max_us: u64,
    /// Each poll of a task takes up to this long in virtual time.
    pub poll_cost_max_us: u64,
    /// What fault times (every `*_every_s`, and how long each fault lasts)
    /// are multiplied by: `horizon / 60 s` (see [`Swarm::horizon`]).
    pub time_scale: f64,
    /// What the pacing is scaled to.
    pub pacing: Pacing,
    /// Each host's simulated workers (`Sim::workers`), when drawn.
    pub workers: Option<u16>,
}

/// A draw of `dim` from the seed tree's stream `swarm <name>`.
pub(crate) fn draw_u64(root: u64, name: &str, dim: Dim<u64>) -> Option<u64> {
    match dim {
        Dim::Off => None,
        Dim::Fixed(v) => Some(v),
        Dim::Range { lo, hi } => {
            assert!(lo <= hi, "swarm: {name} has an empty range {lo}..={hi}");
            let mut rng = Rng::named(root, &format!("swarm {name}"));
            (rng.below(2) == 1).then(|| lo + rng.below(hi - lo + 1))
        }
    }
}

/// A draw of a rate from the seed tree's stream `swarm <name>`.
pub(crate) fn draw_f64(root: u64, name: &str, dim: Dim<f64>) -> f64 {
    match dim {
        Dim::Off => 0.0,
        Dim::Fixed(v) => v,
        Dim::Range { lo, hi } => {
            assert!(
                (0.0..=1.0).contains(&lo) && lo <= hi && hi <= 1.0,
                "swarm: {name} needs 0 <= lo <= hi <= 1, not {lo}..={hi}"
            );
            let mut rng = Rng::named(root, &format!("swarm {name}"));
            if rng.below(2) == 0 {
                return 0.0;
            }
            // A millionth's resolution is plenty for a fault rate.
            let step = rng.below(1_000_001) as f64 / 1_000_000.0;
            lo + (hi - lo) * step
        }
    }
}

impl Swarm {
    /// The default swarm over `hosts`: every dimension drawn.
    pub fn new(hosts: &[&str]) -> Swarm {
        Swarm {
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            latency_min_ms: Dim::range(0, 10),
            latency_max_ms: Dim::range(0, 50),
            udp_drop_rate: Dim::range(0.0, 0.1),
            udp_dup_rate: Dim::range(0.0, 0.05),
            udp_reorder_rate: Dim::range(0.0, 0.1),
            crash_every_s: Dim::range(5, 60),
            isolate_every_s: Dim::range(5, 60),
            partition_every_s: Dim::range(5, 60),
            clock_jump_every_s: Dim::range(10, 60),
            disk_error_rate: Dim::range(0.0, 0.01),
            disk_full_every_s: Dim::range(10, 60),
            // Off unless asked for: a service that keeps no checksums can
            // only fail under it, which says nothing new on every seed.
            disk_corruption_rate: Dim::Off,
            disk_latency_max_us: Dim::range(0, 20_000),
            poll_cost_max_us: Dim::range(0, 200),
            // Off unless asked for: `.workers(Dim::range(1, 8))`.
            workers: Dim::Off,
            pacing: Pacing::Measure,
            groups: Groups::default(),
        }
    }

    /// The test's length in virtual time. The fault pacing (written for a
    /// minute: faults every 5-60 s, each 1-5 s long) scales to it, so a
    /// short test gets its first faults early and several of them: with a
    /// 6 s horizon, a crash every 0.5-6 s, down for 0.1-0.5 s.
    ///
    /// Without it, the horizon is measured: the test's length in a run of
    /// its own without the swarm (see `horizon.rs`), from 100 ms to a
    /// minute. `horizon(Duration::from_secs(60))` keeps a minute's pacing
    /// whatever the test's length, with no measuring run.
    ///
    /// # Panics
    /// For a zero horizon.
    pub fn horizon(mut self, horizon: Duration) -> Swarm {
        assert!(
            !horizon.is_zero(),
            "swarm: a horizon must be longer than zero"
        );
        self.pacing = Pacing::Given(horizon);
        self
    }

    /// Whether the pacing waits for the test's measured length.
    pub(crate) fn paces_by_measure(&self) -> bool {
        self.pacing == Pacing::Measure
    }

    /// The horizon measured from a run of the test without the swarm
    /// (`horizon.rs`), or a minute's pacing when it could not be measured.
    pub(crate) fn measured_horizon(mut self, horizon: Option<Duration>) -> Swarm {
        self.pacing = match horizon {
            Some(horizon) => Pacing::Measured(horizon),
            None => Pacing::Given(PACING_REFERENCE),
        };
        self
    }

    /// Each host's simulated workers (`Sim::workers`), drawn per seed: off
    /// (tasks picked as on one thread) unless asked for.
    pub fn workers(mut self, dim: Dim<u64>) -> Swarm {
        self.workers = dim;
        self
    }

    /// Crashes only these hosts (the others never crash: an in-memory
    /// host that must not lose its state stays in the swarm).
    pub fn crash_only(mut self, hosts: &[&str]) -> Swarm {
        self.groups.crash = Some(owned(hosts));
        self
    }

    /// Isolates only these hosts.
    pub fn isolate_only(mut self, hosts: &[&str]) -> Swarm {
        self.groups.isolate = Some(owned(hosts));
        self
    }

    /// Partitions only among these hosts.
    pub fn partition_only(mut self, hosts: &[&str]) -> Swarm {
        self.groups.partition = Some(owned(hosts));
        self
    }

    /// Jumps only these hosts' clocks.
    pub fn clock_jump_only(mut self, hosts: &[&str]) -> Swarm {
        self.groups.clock_jump = Some(owned(hosts));
        self
    }

    /// Fills only these hosts' disks.
    pub fn disk_full_only(mut self, hosts: &[&str]) -> Swarm {
        self.groups.disk_full = Some(owned(hosts));
        self
    }

    /// The nemesis of `plan` on this swarm's hosts, each fault dimension
    /// on its own group.
    pub fn nemesis(&self, plan: &Plan) -> Nemesis {
        fn group<'a>(g: &'a Option<Vec<String>>, all: &[&'a str]) -> Vec<&'a str> {
            match g {
                Some(hosts) => hosts.iter().map(String::as_str).collect(),
                None => all.to_vec(),
            }
        }
        let all = self.hosts();
        plan.nemesis_on(&NemesisGroups {
            crash: group(&self.groups.crash, &all),
            isolate: group(&self.groups.isolate, &all),
            partition: group(&self.groups.partition, &all),
            clock_jump: group(&self.groups.clock_jump, &all),
            disk_full: group(&self.groups.disk_full, &all),
        })
    }

    /// The cost of one poll in virtual time (most, in µs; see
    /// [`crate::Sim::poll_cost`]).
    pub fn poll_cost_max_us(mut self, dim: Dim<u64>) -> Swarm {
        self.poll_cost_max_us = dim;
        self
    }

    /// Link latency (most, in ms).
    pub fn latency_max_ms(mut self, dim: Dim<u64>) -> Swarm {
        self.latency_max_ms = dim;
        self
    }

    /// Link latency (least, in ms; never above the most drawn). Off: 0.
    pub fn latency_min_ms(mut self, dim: Dim<u64>) -> Swarm {
        self.latency_min_ms = dim;
        self
    }

    /// UDP reordering rate (see `LinkConfig::udp_reorder_rate`).
    pub fn udp_reorder_rate(mut self, dim: Dim<f64>) -> Swarm {
        self.udp_reorder_rate = dim;
        self
    }

    /// How often (about, in s) two hosts are cut apart.
    pub fn partition_every_s(mut self, dim: Dim<u64>) -> Swarm {
        self.partition_every_s = dim;
        self
    }

    /// How often (about, in s) a host's wall clock jumps.
    pub fn clock_jump_every_s(mut self, dim: Dim<u64>) -> Swarm {
        self.clock_jump_every_s = dim;
        self
    }

    /// How often (about, in s) a host's disk is full for a while.
    pub fn disk_full_every_s(mut self, dim: Dim<u64>) -> Swarm {
        self.disk_full_every_s = dim;
        self
    }

    /// Disk corruption rate (a read returns a flipped bit); off by default.
    pub fn disk_corruption_rate(mut self, dim: Dim<f64>) -> Swarm {
        self.disk_corruption_rate = dim;
        self
    }

    /// UDP loss rate.
    pub fn udp_drop_rate(mut self, dim: Dim<f64>) -> Swarm {
        self.udp_drop_rate = dim;
        self
    }

    /// UDP duplication rate.
    pub fn udp_dup_rate(mut self, dim: Dim<f64>) -> Swarm {
        self.udp_dup_rate = dim;
        self
    }

    /// How often (about, in s) a host crashes.
    pub fn crash_every_s(mut self, dim: Dim<u64>) -> Swarm {
        self.crash_every_s = dim;
        self
    }

    /// How often (about, in s) a host is cut off.
    pub fn isolate_every_s(mut self, dim: Dim<u64>) -> Swarm {
        self.isolate_every_s = dim;
        self
    }

    /// Disk EIO rate (reads, writes, syncs).
    pub fn disk_error_rate(mut self, dim: Dim<f64>) -> Swarm {
        self.disk_error_rate = dim;
        self
    }

    /// Disk latency (most, in µs).
    pub fn disk_latency_max_us(mut self, dim: Dim<u64>) -> Swarm {
        self.disk_latency_max_us = dim;
        self
    }

    /// What this swarm draws for `seed` (a pure function of the seed).
    pub fn plan(&self, seed: u64) -> Plan {
        let every = |name: &str, dim: Dim<u64>| draw_u64(seed, name, dim).filter(|s| *s > 0);
        let latency_max_ms = draw_u64(seed, "latency", self.latency_max_ms).unwrap_or(0);
        Plan {
            latency_min_ms: draw_u64(seed, "latency min", self.latency_min_ms)
                .unwrap_or(0)
                .min(latency_max_ms),
            latency_max_ms,
            udp_drop_rate: draw_f64(seed, "udp drop", self.udp_drop_rate),
            udp_dup_rate: draw_f64(seed, "udp dup", self.udp_dup_rate),
            udp_reorder_rate: draw_f64(seed, "udp reorder", self.udp_reorder_rate),
            crash_every_s: every("crash", self.crash_every_s),
            isolate_every_s: every("isolate", self.isolate_every_s),
            partition_every_s: every("partition", self.partition_every_s),
            clock_jump_every_s: every("clock jump", self.clock_jump_every_s),
            disk_error_rate: draw_f64(seed, "disk errors", self.disk_error_rate),
            disk_full_every_s: every("disk full", self.disk_full_every_s),
            disk_corruption_rate: draw_f64(seed, "disk corruption", self.disk_corruption_rate),
            disk_latency_max_us: draw_u64(seed, "disk latency", self.disk_latency_max_us)
                .unwrap_or(0),
            poll_cost_max_us: draw_u64(seed, "poll cost", self.poll_cost_max_us).unwrap_or(0),
            time_scale: self
                .pacing
                .horizon()
                .map_or(1.0, |h| h.as_secs_f64() / PACING_REFERENCE.as_secs_f64()),
            pacing: self.pacing,
            workers: draw_u64(seed, "workers", self.workers)
                .filter(|n| *n > 0)
                .map(|n| n.min(u64::from(sim_runtime::scheduler::WORKERS_MAX)) as u16),
        }
    }

    /// The hosts the swarm's faults apply to.
    pub(crate) fn hosts(&self) -> Vec<&str> {
        self.hosts.iter().map(String::as_str).collect()
    }
}

impl Plan {
    /// The link every pair of hosts gets.
    ///
    /// A link never takes less than [`LINK_LATENCY_FLOOR`], even with the
    /// latency dimensions off: a network that takes no time is faster than
    /// a poll or a disk operation, and a loop bounded by virtual time
    /// would never see the clock move.
    pub fn link(&self) -> LinkConfig {
        let floor = |ms: u64| Duration::from_millis(ms).max(LINK_LATENCY_FLOOR);
        LinkConfig {
            latency_min: floor(self.latency_min_ms),
            latency_max: floor(self.latency_max_ms),
            udp_drop_rate: self.udp_drop_rate,
            udp_dup_rate: self.udp_dup_rate,
            udp_reorder_rate: self.udp_reorder_rate,
        }
    }

    /// Each host's disk.
    pub fn disk(&self) -> DiskConfig {
        DiskConfig {
            read_error_rate: self.disk_error_rate,
            write_error_rate: self.disk_error_rate,
            sync_error_rate: self.disk_error_rate,
            corruption_rate: self.disk_corruption_rate,
            latency_min_us: 0,
            latency_max_us: self.disk_latency_max_us,
            ..DiskConfig::default()
        }
    }

    /// The nemesis the plan asks for, over `hosts`.
    pub fn nemesis(&self, hosts: &[&str]) -> Nemesis {
        self.nemesis_on(&NemesisGroups {
            crash: hosts.to_vec(),
            isolate: hosts.to_vec(),
            partition: hosts.to_vec(),
            clock_jump: hosts.to_vec(),
            disk_full: hosts.to_vec(),
        })
    }

    /// The nemesis with each fault dimension on its own group of hosts.
    fn nemesis_on(&self, groups: &NemesisGroups<'_>) -> Nemesis {
        let mut nemesis = Nemesis::new();
        let scale = |d: Duration| d.mul_f64(self.time_scale);
        let around = |s: u64| {
            let every = scale(Duration::from_secs(s));
            every / 2..every * 3 / 2
        };
        let down = scale(Duration::from_secs(1))..scale(Duration::from_secs(5));
        if let (Some(every), false) = (self.crash_every_s, groups.crash.is_empty()) {
            nemesis = nemesis.crash_restart(&groups.crash, around(every), down.clone());
        }
        if let (Some(every), false) = (self.isolate_every_s, groups.isolate.is_empty()) {
            nemesis = nemesis.isolate(&groups.isolate, around(every), down.clone());
        }
        if let (Some(every), true) = (self.partition_every_s, groups.partition.len() >= 2) {
            nemesis = nemesis.partition(&groups.partition, around(every), down.clone());
        }
        if let (Some(every), false) = (self.clock_jump_every_s, groups.clock_jump.is_empty()) {
            nemesis = nemesis.clock_jump(&groups.clock_jump, around(every), CLOCK_JUMP_MAX_MS);
        }
        if let (Some(every), false) = (self.disk_full_every_s, groups.disk_full.is_empty()) {
            nemesis = nemesis.disk_full(&groups.disk_full, around(every), down);
        }
        nemesis
    }

    /// One line: the run's plan.
    pub fn describe(&self) -> String {
        let rate = |r: f64| {
            if r == 0.0 {
                "off".to_string()
            } else {
                format!("{r:.4}")
            }
        };
        let every = |e: Option<u64>| {
            e.map_or("off".to_string(), |s| {
                let every = Duration::from_secs(s).mul_f64(self.time_scale);
                format!("~{}s", trim_secs(every))
            })
        };
        let ms = |ms: u64| {
            if ms == 0 {
                format!("{}us", LINK_LATENCY_FLOOR.as_micros())
            } else {
                format!("{ms}ms")
            }
        };
        let mut text = format!(
            "swarm: latency {}-{}",
            ms(self.latency_min_ms),
            ms(self.latency_max_ms)
        );
        let _ = write!(
            text,
            ", udp drop {}, udp dup {}, udp reorder {}, crash every {}, isolate every {}, \
             partition every {}, clock jump every {}, disk errors {}, disk full every {}, \
             disk corruption {}, disk latency 0-{}us, poll cost 0-{}us",
            rate(self.udp_drop_rate),
            rate(self.udp_dup_rate),
            rate(self.udp_reorder_rate),
            every(self.crash_every_s),
            every(self.isolate_every_s),
            every(self.partition_every_s),
            every(self.clock_jump_every_s),
            rate(self.disk_error_rate),
            every(self.disk_full_every_s),
            rate(self.disk_corruption_rate),
            self.disk_latency_max_us,
            self.poll_cost_max_us
        );
        if let Some(workers) = self.workers {
            let _ = write!(text, ", {workers} workers per host");
        }
        match self.pacing {
            Pacing::Measure => {}
            Pacing::Given(h) => {
                let _ = write!(text, ", faults paced for a {}s test", trim_secs(h));
            }
            Pacing::Measured(h) => {
                let _ = write!(
                    text,
                    ", faults paced for a {}s test (its measured length)",
                    trim_secs(h)
                );
            }
        }
        text
    }
}

/// The hosts each fault dimension of a nemesis acts on.
struct NemesisGroups<'a> {
    crash: Vec<&'a str>,
    isolate: Vec<&'a str>,
    partition: Vec<&'a str>,
    clock_jump: Vec<&'a str>,
    disk_full: Vec<&'a str>,
}

fn owned(hosts: &[&str]) -> Vec<String> {
    hosts.iter().map(|h| h.to_string()).collect()
}

/// `d` in seconds, as short as it reads: `17`, `1.5`, `0.25`.
fn trim_secs(d: Duration) -> String {
    let text = format!("{:.3}", d.as_secs_f64());
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The largest wall-clock jump the swarm's nemesis makes, either way.
const CLOCK_JUMP_MAX_MS: u64 = 10_000;
