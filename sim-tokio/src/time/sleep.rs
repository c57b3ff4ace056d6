use super::Instant;
use sim_runtime::EventKey;
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
        // Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
        _unwind: crate::util::NoUnwindSafety,
        deadline: Instant,
        core: u16,
        // The timer in the event queue and the tick it fires on.
        entry: Option<(EventKey, u64)>,
        // A poll found the deadline reached (until a reset).
        fired: bool,
        // Where it was made (`sleep(...)`, `timeout(...)`, `interval(...)`),
        // for the reports of what pending tasks wait on.
        site: &'static std::panic::Location<'static>,
        #[pin]
        _pinned: PhantomPinned,
    }

    impl PinnedDrop for Sleep {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            if let Some((key, _)) = this.entry.take() {
                sim_runtime::context::with_core(*this.core, |core| core.event_cancel(key));
            }
        }
    }
}

impl Sleep {
    #[track_caller]
    fn new(deadline: Instant) -> Sleep {
        // Checked here, not in the closure: a closure has no caller's
        // location, and the panic names the user's line, as tokio's does.
        let (core, enabled) = crate::util::with_runtime(|core| (core.id(), core.time_enabled()));
        assert!(
            enabled,
            "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the \
             runtime builder to enable timers."
        );
        Sleep {
            _unwind: std::marker::PhantomData,
            deadline,
            core,
            entry: None,
            fired: false,
            site: std::panic::Location::caller(),
            _pinned: PhantomPinned,
        }
    }

    /// The instant this sleep ends.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the sleep has elapsed: its timer fired (the deadline's tick
    /// reached after a poll registered it) or a poll completed it. A sleep
    /// never polled has not elapsed, even past its deadline, as in tokio,
    /// whose driver fires only registered timers.
    pub fn is_elapsed(&self) -> bool {
        if self.fired {
            return true;
        }
        self.entry.is_some()
            && sim_runtime::context::with_core(self.core, |core| {
                core.now_ns() >= super::fire_ns(core, self.deadline)
            })
            .unwrap_or(true)
    }

    /// Moves the deadline. A task waiting on this sleep is woken at the new
    /// deadline without polling it again.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        let this = self.project();
        *this.deadline = deadline;
        *this.fired = false;
        if let Some((key, _)) = *this.entry {
            *this.entry = sim_runtime::context::with_core(*this.core, |core| {
                let fire = super::fire_ns(core, deadline);
                (core.timer_reset(key, fire), fire)
            });
        }
    }

    pub(crate) fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        let deadline = *this.deadline;
        let entry = this.entry;
        let fired = this.fired;
        let site = *this.site;
        let polled = sim_runtime::context::with_core(*this.core, |core| {
            if core.is_shut_down() {
                return None;
            }
            if core.poll_budget(cx).is_pending() {
                return Some(Poll::Pending);
            }
            let fire = super::fire_ns(core, deadline);
            if core.now_ns() >= fire {
                if let Some((key, _)) = entry.take() {
                    core.event_cancel(key);
                }
                *fired = true;
                return Some(Poll::Ready(()));
            }
            match *entry {
                Some((key, at)) if at == fire && core.timer_set_waker(key, cx.waker()) => {}
                _ => {
                    if let Some((key, _)) = entry.take() {
                        core.event_cancel(key);
                    }
                    *entry = Some((core.timer_insert(fire, Some(cx.waker())), fire));
                }
            }
            core.note_wait(sim_runtime::WaitNote {
                what: "sleep",
                detail: sim_runtime::WaitDetail::UntilNs(fire),
                site: Some(site),
            });
            Some(Poll::Pending)
        });
        // The runtime is gone: tokio reports a shutdown timer by panicking.
        polled
            .flatten()
            .unwrap_or_else(|| panic!("{}", crate::runtime::is_rt_shutdown_message()))
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_elapsed(cx)
    }
}
