use super::timer::Timer;
use super::Instant;
use std::future::poll_fn;
use std::task::{Context, Poll};
use std::time::Duration;

/// Ticks every `period`; the first tick completes at once.
///
/// # Panics
/// When `period` is zero, or outside a runtime.
#[track_caller]
pub fn interval(period: Duration) -> Interval {
    assert!(period > Duration::new(0, 0), "`period` must be non-zero.");
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, first at `start`.
///
/// # Panics
/// When `period` is zero, or outside a runtime.
#[track_caller]
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(period > Duration::new(0, 0), "`period` must be non-zero.");
    Interval {
        delay: Timer::new(start),
        period,
        missed_tick_behavior: MissedTickBehavior::default(),
    }
}

/// What an [`Interval`] does when ticks were missed (the task was busy past
/// a tick).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Tick as fast as possible until caught up.
    #[default]
    Burst,
    /// Tick next one `period` after the late tick.
    Delay,
    /// Skip the missed ticks; tick at the next multiple of `period`.
    Skip,
}

impl MissedTickBehavior {
    fn next_timeout(&self, timeout: Instant, now: Instant, period: Duration) -> Instant {
        match self {
            Self::Burst => timeout + period,
            Self::Delay => now + period,
            Self::Skip => {
                let behind = now.saturating_duration_since(timeout).as_nanos();
                let into_period = (behind % period.as_nanos()) as u64;
                now + period - Duration::from_nanos(into_period)
            }
        }
    }
}

/// A stream of ticks: see [`interval`].
#[derive(Debug)]
pub struct Interval {
    // In place, where tokio boxes a `Sleep` (see `Timer`, which also gives
    // the auto traits of tokio's).
    delay: Timer,
    period: Duration,
    missed_tick_behavior: MissedTickBehavior,
}

/// A tick this late (or later) counts as missed.
const MISSED_AFTER: Duration = Duration::from_millis(5);

impl Interval {
    /// Waits for the next tick and returns its scheduled instant.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.delay.poll_elapsed(cx).is_pending() {
            return Poll::Pending;
        }
        let timeout = self.delay.deadline();
        let now = Instant::now();
        let next = if now > timeout + MISSED_AFTER {
            self.missed_tick_behavior
                .next_timeout(timeout, now, self.period)
        } else {
            timeout
                .checked_add(self.period)
                .unwrap_or_else(Instant::far_future)
        };
        self.delay.reset(next);
        Poll::Ready(timeout)
    }

    /// Restarts: the next tick is one period from now.
    pub fn reset(&mut self) {
        self.delay.reset(Instant::now() + self.period);
    }

    /// Restarts: the next tick is now.
    pub fn reset_immediately(&mut self) {
        self.delay.reset(Instant::now());
    }

    /// Restarts: the next tick is `after` from now.
    pub fn reset_after(&mut self, after: Duration) {
        self.delay.reset(Instant::now() + after);
    }

    /// Restarts: the next tick is at `deadline`.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.delay.reset(deadline);
    }

    /// What happens after missed ticks.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed_tick_behavior
    }

    /// Sets what happens after missed ticks.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed_tick_behavior = behavior;
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }
}
