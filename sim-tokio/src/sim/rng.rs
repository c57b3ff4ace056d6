//! `tokio::sim::rng`: named random streams of the run's seed tree.

use std::ops::Range;

/// A named random stream of the current run (see [`rng`]).
///
/// # Examples
///
/// ```
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() {
///     let jitter = tokio::sim::rng("jitter");
///     let word = jitter.next_u64();
///     let delay_ms = jitter.range(10..20);
///     assert!((10..20).contains(&delay_ms));
///     let _ = (word, jitter.chance(0.5));
///     // Another stream's draws are its own: drawing here shifts none of them.
///     let _ = tokio::sim::rng("retries").range(0..3);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    label: String,
}

/// The stream named `label` of the current run's seed tree. Its draws
/// follow the seed and its name only: another stream, a new host or a new
/// kind of fault drawing more numbers shifts none of them.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let jitter_ms = tokio::sim::rng("client jitter").range(0..50);
/// tokio::time::sleep(std::time::Duration::from_millis(jitter_ms)).await;
/// # }
/// ```
pub fn rng(label: &str) -> Stream {
    Stream {
        label: label.to_string(),
    }
}

impl Stream {
    #[track_caller]
    fn below(&self, n: u64) -> u64 {
        sim_runtime::context::with_current(|core| core.stream_below(&self.label, n)).unwrap_or_else(
            || {
                panic!(
                    "sim: tokio::sim::rng({:?}) was drawn from outside a simulation run: its draws \
                     follow a run's seed, so draw inside the run (in a task or a host)",
                    self.label
                )
            },
        )
    }

    /// The next 64 random bits.
    ///
    /// # Panics
    /// Outside a simulation run.
    #[track_caller]
    pub fn next_u64(&self) -> u64 {
        sim_runtime::context::with_current(|core| core.stream_u64(&self.label)).unwrap_or_else(
            || {
                panic!(
                    "sim: tokio::sim::rng({:?}) was drawn from outside a simulation run",
                    self.label
                )
            },
        )
    }

    /// A draw in `range` (uniform).
    ///
    /// # Panics
    /// Outside a simulation run, or on an empty range.
    #[track_caller]
    pub fn range(&self, range: Range<u64>) -> u64 {
        assert!(
            range.start < range.end,
            "sim: tokio::sim::rng({:?}).range({range:?}) is empty",
            self.label
        );
        range.start + self.below(range.end - range.start)
    }

    /// `true` with probability `p` (0 to 1).
    ///
    /// # Panics
    /// Outside a simulation run, or when `p` is not in 0..=1.
    #[track_caller]
    pub fn chance(&self, p: f64) -> bool {
        assert!(
            (0.0..=1.0).contains(&p),
            "sim: tokio::sim::rng({:?}).chance({p}): a probability is in 0..=1",
            self.label
        );
        // 2^53 steps: every f64 probability in 0..=1 is exact enough.
        const STEPS: u64 = 1 << 53;
        (self.below(STEPS) as f64) < p * STEPS as f64
    }
}
