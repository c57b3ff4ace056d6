use super::timer::Timer;
use super::Instant;
use std::future::Future;
use std::marker::PhantomPinned;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// Waits until `duration` has passed on the virtual clock.
///
/// # Panics
/// Outside a runtime, as in tokio.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread()
/// #     .enable_all()
/// #     .start_paused(true)
/// #     .build()
/// #     .unwrap()
/// #     .block_on(async {
/// use tokio::time::{sleep, Duration, Instant};
/// let start = Instant::now();
/// sleep(Duration::from_secs(3600)).await; // no wall time passes
/// assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// # });
/// ```
#[track_caller]
pub fn sleep(duration: Duration) -> Sleep {
    let deadline = Instant::now()
        .checked_add(duration)
        .unwrap_or_else(Instant::far_future);
    Sleep::new(deadline)
}

/// Waits until `deadline` on the virtual clock.
///
/// # Panics
/// Outside a runtime, as in tokio.
#[track_caller]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::new(deadline)
}

pin_project_lite::pin_project! {
    /// The future of [`sleep`] and [`sleep_until`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Sleep {
        timer: Timer,
        #[pin]
        _pinned: PhantomPinned,
    }
}

impl Sleep {
    #[track_caller]
    fn new(deadline: Instant) -> Sleep {
        Sleep {
            timer: Timer::new(deadline),
            _pinned: PhantomPinned,
        }
    }

    /// The instant this sleep ends.
    pub fn deadline(&self) -> Instant {
        self.timer.deadline()
    }

    /// Whether the sleep has elapsed: its timer fired (the deadline's tick
    /// reached after a poll registered it) or a poll completed it. A sleep
    /// never polled has not elapsed, even past its deadline, as in tokio,
    /// whose driver fires only registered timers.
    pub fn is_elapsed(&self) -> bool {
        self.timer.is_elapsed()
    }

    /// Moves the deadline. A task waiting on this sleep is woken at the new
    /// deadline without polling it again.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.project().timer.reset(deadline);
    }

    pub(crate) fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.project().timer.poll_elapsed(cx)
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_elapsed(cx)
    }
}
