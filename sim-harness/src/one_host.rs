//! A world for one-host tests: the swarm of a plain `#[tokio::test]`.
//!
//! A test that runs on one host never meets a network: its loopback is
//! immediate and a write arrives whole, so a `select!` that reads a
//! length-prefixed frame next to a timer never loses half a frame, though
//! it would across any real network. With `cargo sim test --swarm` (or
//! `SIM_SWARM=1`), each seed draws what the host suffers, each dimension
//! off half the time or drawn from a stream of its own in the seed tree:
//! loopback latency, segment cuts (a write leaves in pieces of drawn
//! sizes), loopback UDP drops, disk latency and errors, and the
//! virtual-time cost of a poll.
//! The plan is printed when the run starts (for a program, or with
//! `SIM_VERBOSE`) and noted at the head of its trace; the replay line
//! carries `SIM_SWARM=1`.

use crate::swarm::{draw_f64, draw_u64, Dim};
use sim_fs::DiskConfig;
use sim_runtime::{Core, SimConfig};
use std::time::Duration;

/// The variable that turns the one-host swarm on (`1`).
pub const SWARM_VAR: &str = sim_runtime::settings::SWARM.name;

/// Whether `SIM_SWARM` asks for the one-host swarm.
pub fn enabled() -> bool {
    sim_runtime::settings::SWARM.is_on()
}

/// What the one-host swarm drew for one seed.
#[derive(Clone, Debug, PartialEq)]
pub struct OneHostPlan {
    /// Each loopback segment takes `0..=loopback_latency_max_us`.
    pub loopback_latency_max_us: u64,
    /// A TCP write leaves in segments of `1..=segment_bytes_max` bytes (0:
    /// whole).
    pub segment_bytes_max: usize,
    /// Each disk operation takes `0..=disk_latency_max_us`.
    pub disk_latency_max_us: u64,
    /// Each disk read, write and sync fails with `EIO` at this rate.
    pub disk_error_rate: f64,
    /// Each poll takes `0..=poll_cost_max_us` of virtual time.
    pub poll_cost_max_us: u64,
    /// Each loopback datagram is dropped with this probability.
    pub udp_drop_rate: f64,
}

impl OneHostPlan {
    /// The plan of `seed`.
    pub fn draw(seed: u64) -> OneHostPlan {
        OneHostPlan {
            loopback_latency_max_us: draw_u64(seed, "loopback latency", Dim::range(1, 5_000))
                .unwrap_or(0),
            segment_bytes_max: draw_u64(seed, "segment bytes", Dim::range(1, 1_460)).unwrap_or(0)
                as usize,
            disk_latency_max_us: draw_u64(seed, "disk latency", Dim::range(0, 20_000)).unwrap_or(0),
            disk_error_rate: draw_f64(seed, "disk errors", Dim::range(0.0, 0.01)),
            poll_cost_max_us: draw_u64(seed, "poll cost", Dim::range(0, 200)).unwrap_or(0),
            udp_drop_rate: draw_f64(seed, "loopback udp drops", Dim::range(0.0, 0.02)),
        }
    }

    /// Sets what the run's configuration carries (the poll cost), unless
    /// the test set it.
    pub fn configure(&self, config: &mut SimConfig) {
        if config.poll_cost_max_ns == 0 {
            config.poll_cost_max_ns = self.poll_cost_max_us * 1_000;
        }
    }

    /// Applies the rest to the run of `core` (its host 0's loopback and
    /// disk), and notes the plan at the head of its trace.
    pub fn apply(&self, core: &std::rc::Rc<Core>) {
        let _enter = sim_runtime::context::Enter::new(core.clone());
        core.trace(
            sim_runtime::EventKind::Note,
            0,
            sim_runtime::Label::Str(&format!("swarm: {self}")),
        );
        if core.io_enabled() {
            sim_net::with_net(|net| {
                net.set_loopback_faults(sim_net::LoopbackFaults {
                    latency_max: Duration::from_micros(self.loopback_latency_max_us),
                    segment_bytes_max: self.segment_bytes_max,
                    udp_drop_rate: self.udp_drop_rate,
                });
            });
        }
        sim_fs::set_disk_config(
            0,
            DiskConfig {
                read_error_rate: self.disk_error_rate,
                write_error_rate: self.disk_error_rate,
                sync_error_rate: self.disk_error_rate,
                latency_min_us: 0,
                latency_max_us: self.disk_latency_max_us,
                ..DiskConfig::default()
            },
        );
    }
}

impl std::fmt::Display for OneHostPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loopback = match self.loopback_latency_max_us {
            0 => "immediate".to_string(),
            us => format!("0-{us} us"),
        };
        let segments = match self.segment_bytes_max {
            0 => "whole writes".to_string(),
            n => format!("segments of 1-{n} bytes"),
        };
        write!(
            f,
            "loopback {loopback}, {segments}, UDP drops {:.4}, disk latency 0-{} us, disk errors \
             {:.4}, poll cost 0-{} us",
            self.udp_drop_rate,
            self.disk_latency_max_us,
            self.disk_error_rate,
            self.poll_cost_max_us
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_repeat_per_seed_and_vary_across_seeds() {
        assert_eq!(OneHostPlan::draw(7), OneHostPlan::draw(7));
        let plans: Vec<OneHostPlan> = (0..64).map(OneHostPlan::draw).collect();
        let cut = plans.iter().filter(|p| p.segment_bytes_max > 0).count();
        let slow = plans
            .iter()
            .filter(|p| p.loopback_latency_max_us > 0)
            .count();
        // Each dimension is off about half the time.
        assert!((16..=48).contains(&cut), "{cut} of 64 cut segments");
        assert!((16..=48).contains(&slow), "{slow} of 64 slow loopbacks");
        assert!(plans.iter().all(|p| p.segment_bytes_max <= 1_460
            && p.disk_error_rate <= 0.01
            && p.udp_drop_rate <= 0.02));
    }
}
