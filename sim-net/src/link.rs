//! Links: the directed path from one host to another, and what it does to
//! the bytes on it.

use std::time::Duration;

/// How a directed link behaves. Draws come from the seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkConfig {
    /// The least one-way latency.
    pub latency_min: Duration,
    /// The most one-way latency (inclusive).
    pub latency_max: Duration,
    /// The chance that a UDP datagram is lost, in `[0, 1]`.
    pub udp_drop_rate: f64,
    /// The chance that a UDP datagram arrives twice, in `[0, 1]`.
    pub udp_dup_rate: f64,
    /// The chance that a UDP datagram is held back, in `[0, 1]`: it takes
    /// an extra `latency_max` plus up to 1 ms more, so datagrams sent after
    /// it overtake it. (Datagrams also reorder whenever latencies differ;
    /// TCP never reorders.)
    pub udp_reorder_rate: f64,
}

impl Default for LinkConfig {
    /// A fast, reliable link: 0 to 1 ms, nothing lost or duplicated.
    fn default() -> LinkConfig {
        LinkConfig {
            latency_min: Duration::ZERO,
            latency_max: Duration::from_millis(1),
            udp_drop_rate: 0.0,
            udp_dup_rate: 0.0,
            udp_reorder_rate: 0.0,
        }
    }
}

impl LinkConfig {
    /// Checks the values.
    ///
    /// # Panics
    /// When the latency range is inverted or a rate is outside `[0, 1]`,
    /// naming the field.
    #[track_caller]
    pub fn validate(&self) {
        assert!(
            self.latency_min <= self.latency_max,
            "sim: LinkConfig latency_min {:?} is above latency_max {:?}",
            self.latency_min,
            self.latency_max
        );
        for (name, rate) in [
            ("udp_drop_rate", self.udp_drop_rate),
            ("udp_dup_rate", self.udp_dup_rate),
            ("udp_reorder_rate", self.udp_reorder_rate),
        ] {
            assert!(
                (0.0..=1.0).contains(&rate),
                "sim: LinkConfig {name} {rate} is outside [0, 1]"
            );
        }
    }
}

/// What a link does right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LinkMode {
    /// Bytes flow.
    #[default]
    Up,
    /// Partitioned: datagrams are lost; TCP segments wait (as TCP would
    /// keep retransmitting them) and flow again after the heal.
    Partitioned,
    /// Held: everything waits, and resumes intact on release.
    Held,
}
