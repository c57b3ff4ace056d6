//! The timer under [`Sleep`](super::Sleep) and [`Interval`](super::Interval):
//! a deadline on the virtual clock and its entry in the runtime's event
//! queue. It needs no pinning (the queue names the entry by key), so an
//! `Interval` keeps one in place, where tokio's boxes a `Sleep`: one heap
//! line less to fetch at every tick, which counts with thousands of hosts
//! ticking.

use super::Instant;
use sim_runtime::EventKey;
use std::task::{Context, Poll};

#[derive(Debug)]
pub(crate) struct Timer {
    // The auto traits of tokio's `Sleep` and `Interval`, which hold one
    // (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    deadline: Instant,
    // The deadline's tick on its host's clock (see `local_tick_ns`): known
    // from the first poll after the making or a reset.
    local_tick_ns: Option<u64>,
    core: u16,
    // The timer in the event queue and the tick it fires on.
    entry: Option<(EventKey, u64)>,
    // A poll found the deadline reached (until a reset).
    fired: bool,
    // Where it was made (`sleep(...)`, `timeout(...)`, `interval(...)`),
    // for the reports of what pending tasks wait on.
    site: &'static std::panic::Location<'static>,
}

impl Timer {
    /// A timer for `deadline` on the current runtime, made at the caller's
    /// site.
    ///
    /// # Panics
    /// Outside a runtime, or on one without timers, naming the caller's
    /// line (as tokio's panics do).
    #[track_caller]
    pub(crate) fn new(deadline: Instant) -> Timer {
        // Checked here, not in the closure: a closure has no caller's
        // location.
        let (core, enabled) = crate::util::with_runtime(|core| (core.id(), core.time_enabled()));
        assert!(
            enabled,
            "A Tokio 1.x context was found, but timers are disabled. Call `enable_time` on the \
             runtime builder to enable timers."
        );
        Timer {
            _unwind: std::marker::PhantomData,
            deadline,
            local_tick_ns: None,
            core,
            entry: None,
            fired: false,
            site: std::panic::Location::caller(),
        }
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the timer fired (the deadline's tick reached after a poll
    /// registered it) or a poll completed it. One never polled has not
    /// elapsed, even past its deadline, as tokio's driver fires only
    /// registered timers.
    pub(crate) fn is_elapsed(&self) -> bool {
        if self.fired {
            return true;
        }
        self.entry.is_some()
            && sim_runtime::context::with_core(self.core, |core| {
                let tick = self
                    .local_tick_ns
                    .unwrap_or_else(|| super::local_tick_ns(core, self.deadline));
                core.now_ns() >= super::fire_ns(core, tick)
            })
            .unwrap_or(true)
    }

    /// Moves the deadline. A task waiting on the timer is woken at the new
    /// deadline without polling it again.
    pub(crate) fn reset(&mut self, deadline: Instant) {
        self.deadline = deadline;
        self.fired = false;
        self.local_tick_ns = None;
        if let Some((key, _)) = self.entry {
            let tick = &mut self.local_tick_ns;
            self.entry = sim_runtime::context::with_core(self.core, |core| {
                let fire = super::fire_ns(core, *tick.insert(super::local_tick_ns(core, deadline)));
                (core.timer_reset(key, fire), fire)
            });
        }
    }

    /// Ready once the deadline's tick is reached; until then the task is
    /// woken at that tick.
    ///
    /// # Panics
    /// When the timer's runtime is gone, with tokio's message.
    pub(crate) fn poll_elapsed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let (deadline, tick) = (self.deadline, &mut self.local_tick_ns);
        let entry = &mut self.entry;
        let fired = &mut self.fired;
        let site = self.site;
        let polled = sim_runtime::context::with_core(self.core, |core| {
            if core.is_shut_down() {
                return None;
            }
            if core.poll_budget(cx).is_pending() {
                return Some(Poll::Pending);
            }
            let tick = *tick.get_or_insert_with(|| super::local_tick_ns(core, deadline));
            let fire = super::fire_ns(core, tick);
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

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some((key, _)) = self.entry.take() {
            sim_runtime::context::with_core(self.core, |core| core.event_cancel(key));
        }
    }
}
