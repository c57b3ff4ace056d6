//! The swarm: per seed, the harness draws the run's fault settings (link
//! latency ranges, UDP loss, duplication and reordering, crash, isolation
//! and partition rates, wall-clock jumps, disk latency, EIO, ENOSPC and
//! corruption, the virtual-time cost of a poll) from ranges that include
//! zero and "off", each from a stream of its own in the seed tree. So a sweep tries many kinds of bad
//! days, not one, as TigerBeetle's VOPR and FoundationDB's simulator do.
//! The drawn plan is printed when the run starts and recorded in its trace.
//!
//! ```no_run
//! # let mut sim = sim_harness::Sim::new();
//! use sim_harness::swarm::{Dim, Swarm};
//! sim.swarm(
//!     Swarm::new(&["a", "b", "c"])
//!         .latency_max_ms(Dim::range(0, 20))
//!         .disk_error_rate(Dim::Off),
//! );
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
        }
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
        }
    }

    /// The hosts the swarm's faults apply to.
    pub(crate) fn hosts(&self) -> Vec<&str> {
        self.hosts.iter().map(String::as_str).collect()
    }
}

impl Plan {
    /// The link every pair of hosts gets.
    pub fn link(&self) -> LinkConfig {
        LinkConfig {
            latency_min: Duration::from_millis(self.latency_min_ms),
            latency_max: Duration::from_millis(self.latency_max_ms),
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
        let mut nemesis = Nemesis::new();
        if hosts.is_empty() {
            return nemesis;
        }
        let around = |s: u64| Duration::from_secs(s) / 2..Duration::from_secs(s) * 3 / 2;
        let s = Duration::from_secs;
        if let Some(every) = self.crash_every_s {
            nemesis = nemesis.crash_restart(hosts, around(every), s(1)..s(5));
        }
        if let Some(every) = self.isolate_every_s {
            nemesis = nemesis.isolate(hosts, around(every), s(1)..s(5));
        }
        if let (Some(every), true) = (self.partition_every_s, hosts.len() >= 2) {
            nemesis = nemesis.partition(hosts, around(every), s(1)..s(5));
        }
        if let Some(every) = self.clock_jump_every_s {
            nemesis = nemesis.clock_jump(hosts, around(every), CLOCK_JUMP_MAX_MS);
        }
        if let Some(every) = self.disk_full_every_s {
            nemesis = nemesis.disk_full(hosts, around(every), s(1)..s(5));
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
        let every = |e: Option<u64>| e.map_or("off".to_string(), |s| format!("~{s}s"));
        let mut text = format!(
            "swarm: latency {}-{}ms",
            self.latency_min_ms, self.latency_max_ms
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
        text
    }
}

/// The largest wall-clock jump the swarm's nemesis makes, either way.
const CLOCK_JUMP_MAX_MS: u64 = 10_000;
