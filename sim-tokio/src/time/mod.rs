//! Virtual time: `Instant`, `sleep`, `interval`, `timeout`, and the clock
//! controls `pause`, `resume` and `advance`.
//!
//! The clock starts at zero when the runtime is built and moves only when no
//! task is ready: it jumps to the next timer. Timer deadlines are rounded up
//! to the next whole millisecond of the runtime's clock, as tokio's timer
//! wheel rounds them, so a paused tokio runtime and the simulator agree on
//! every `Instant`.

mod clock;
pub mod error;
mod instant;
mod interval;
mod sleep;
mod timeout;
mod timer;

pub use clock::{advance, pause, resume};
pub use instant::Instant;
pub use interval::{interval, interval_at, Interval, MissedTickBehavior};
pub use sleep::{sleep, sleep_until, Sleep};
pub use std::time::Duration;
pub use timeout::{timeout, timeout_at, Timeout};

/// The tick of `deadline` on its host's clock: ns since `core`'s base,
/// rounded up to whole ms. Fixed for a deadline, so a timer computes it
/// once (the `Instant` arithmetic is most of a poll's cost otherwise).
pub(crate) fn local_tick_ns(core: &sim_runtime::Core, deadline: Instant) -> u64 {
    let since = deadline
        .into_std()
        .saturating_duration_since(core.base_instant());
    let local = since.as_nanos().min(u128::from(u64::MAX - 1_000_000)) as u64;
    local.div_ceil(1_000_000) * 1_000_000
}

/// Virtual ns on true time at which a timer of host-clock tick
/// `local_tick_ns` fires, rounded up to whole ms (the tick a timer fires
/// on). Asked at each poll: the task's host clock may be skewed since.
pub(crate) fn fire_ns(core: &sim_runtime::Core, local_tick_ns: u64) -> u64 {
    let ns = core.true_ns_of_local(local_tick_ns);
    ns.div_ceil(1_000_000) * 1_000_000
}
