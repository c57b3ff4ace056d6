//! What a host's disk is like: its size, its speed and the faults it
//! suffers. Every draw comes from the seed.

/// The configuration of one host's disk.
///
/// Rates are probabilities per operation, from 0.0 (never, the default) to
/// 1.0 (always). A rate of zero draws nothing from the seed, so turning a
/// fault off leaves every other decision of a run as it was.
#[derive(Clone, Debug, PartialEq)]
pub struct DiskConfig {
    /// Bytes of file data the disk holds; a write past it is short, or
    /// fails with `ENOSPC` (`ErrorKind::StorageFull`) when nothing fits.
    pub capacity_bytes: u64,
    /// Each operation takes a latency drawn uniformly from
    /// `latency_min_us..=latency_max_us` microseconds of virtual time.
    pub latency_min_us: u64,
    /// See `latency_min_us`.
    pub latency_max_us: u64,
    /// Chance that a read fails with `EIO`.
    pub read_error_rate: f64,
    /// Chance that a write fails with `EIO` (nothing is written).
    pub write_error_rate: f64,
    /// Chance that an `fsync` (`sync_all`, `sync_data`) fails with `EIO`.
    /// As on Linux, the file's unsynced pages are then dropped: they stay
    /// readable until a crash, are never written, and the next `fsync`
    /// reports success.
    pub sync_error_rate: f64,
    /// Chance that a read silently returns data with one bit flipped.
    pub corruption_rate: f64,
}

impl Default for DiskConfig {
    fn default() -> DiskConfig {
        DiskConfig {
            capacity_bytes: 64 << 30,
            latency_min_us: 5,
            latency_max_us: 100,
            read_error_rate: 0.0,
            write_error_rate: 0.0,
            sync_error_rate: 0.0,
            corruption_rate: 0.0,
        }
    }
}

impl DiskConfig {
    /// Checks the configuration, naming the field that is wrong.
    ///
    /// # Panics
    /// On a rate outside `0.0..=1.0` or a latency range upside down.
    pub fn validate(&self) {
        for (name, rate) in [
            ("read_error_rate", self.read_error_rate),
            ("write_error_rate", self.write_error_rate),
            ("sync_error_rate", self.sync_error_rate),
            ("corruption_rate", self.corruption_rate),
        ] {
            assert!(
                (0.0..=1.0).contains(&rate),
                "sim: DiskConfig::{name} is {rate}; a rate is a probability in 0.0..=1.0"
            );
        }
        assert!(
            self.latency_min_us <= self.latency_max_us,
            "sim: DiskConfig latency_min_us ({}) is above latency_max_us ({})",
            self.latency_min_us,
            self.latency_max_us
        );
    }
}
