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

/// Virtual ns of `deadline` on `core`'s clock, rounded up to whole ms (the
/// tick a timer fires on).
pub(crate) fn fire_ns(core: &sim_runtime::Core, deadline: Instant) -> u64 {
    let since = deadline
        .into_std()
        .saturating_duration_since(core.base_instant());
    let local = since.as_nanos().min(u128::from(u64::MAX - 1_000_000)) as u64;
    // The deadline is on the task's host clock; the timer is on true time.
    let ns = core.true_ns_of_local(local.div_ceil(1_000_000) * 1_000_000);
    ns.div_ceil(1_000_000) * 1_000_000
}
