//! Signals delivered to one host: what `tokio::signal` waits for.
//!
//! A host that registered a handler for a signal (through
//! `tokio::signal::unix::signal` or `ctrl_c`) gets it as a notification on
//! each of its `Signal` streams; deliveries coalesce until received, as in
//! tokio. Registering is permanent for the host's life, as installing a
//! process's handler is. A host that registered none takes the default
//! action: for the terminating signals, a crash.

use crate::state::{HostId, Network, SignalSlot};
use std::task::{Context, Poll};

/// A host's registration of one signal: a stream of notifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignalId {
    index: u32,
    generation: u32,
}

/// Whether `signum`'s default action ends the process (here: crashes the
/// host): every signal but those Linux ignores by default and those that
/// stop it (a host cannot stop).
fn terminates(signum: i32) -> bool {
    !matches!(
        signum,
        libc::SIGCHLD
            | libc::SIGCONT
            | libc::SIGSTOP
            | libc::SIGTSTP
            | libc::SIGTTIN
            | libc::SIGTTOU
            | libc::SIGURG
            | libc::SIGWINCH
    )
}

impl Network {
    /// Registers the current host for `signum`; its default action no
    /// longer applies.
    pub fn signal_register(&self, signum: i32) -> SignalId {
        let host = self.current_host().0;
        let mut signals = self.signals.borrow_mut();
        signals.handled.insert((host, signum));
        let slot = SignalSlot {
            host,
            signum,
            pending: false,
            waker: None,
        };
        let index = match signals.free.pop() {
            Some(index) => {
                signals.slots[index as usize].1 = Some(slot);
                index
            }
            None => {
                signals.slots.push((0, Some(slot)));
                signals.slots.len() as u32 - 1
            }
        };
        SignalId {
            index,
            generation: signals.slots[index as usize].0,
        }
    }

    /// Drops a registration (the host still handles the signal).
    pub fn signal_drop(&self, id: SignalId) {
        let mut signals = self.signals.borrow_mut();
        let entry = &mut signals.slots[id.index as usize];
        if entry.0 == id.generation && entry.1.is_some() {
            entry.1 = None;
            entry.0 = entry.0.wrapping_add(1);
            signals.free.push(id.index);
        }
    }

    /// Waits for the next delivery; `None` if the host is gone.
    pub fn signal_poll_recv(&self, id: SignalId, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let mut signals = self.signals.borrow_mut();
        let entry = &mut signals.slots[id.index as usize];
        match (&mut entry.1, entry.0 == id.generation) {
            (Some(slot), true) => {
                if slot.pending {
                    slot.pending = false;
                    Poll::Ready(Some(()))
                } else {
                    slot.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
            // The registration went with a crash of its host.
            _ => Poll::Ready(None),
        }
    }

    /// Whether `host` has a handler for `signum`.
    pub fn signal_handled(&self, host: HostId, signum: i32) -> bool {
        self.signals.borrow().handled.contains(&(host.0, signum))
    }

    /// Delivers `signum` to `host`: to its handlers, or the default action.
    /// As in tokio, a handled signal reaches the streams that exist when
    /// the host's runtime next turns (an event at this instant), so a
    /// stream made right after the signal was sent still receives it.
    pub fn signal(self: &std::rc::Rc<Self>, host: HostId, signum: i32) {
        let handled = self.signals.borrow().handled.contains(&(host.0, signum));
        if handled {
            self.note_fault(
                &[host],
                &format!("signal {} {signum}", self.host_name(host)),
            );
            let net = std::rc::Rc::downgrade(self);
            let now = self.now_ns();
            self.schedule(
                now,
                "signal",
                Box::new(move || {
                    if let Some(net) = net.upgrade() {
                        net.signal_dispatch(host, signum);
                    }
                }),
            );
        } else if terminates(signum) {
            self.note_fault(
                &[host],
                &format!(
                    "signal {} {signum}: no handler, default action terminates",
                    self.host_name(host)
                ),
            );
            self.crash(host);
        } else {
            self.note_fault(
                &[host],
                &format!(
                    "signal {} {signum}: no handler, ignored",
                    self.host_name(host)
                ),
            );
        }
    }

    /// Marks `signum` pending on each of `host`'s streams for it.
    fn signal_dispatch(&self, host: HostId, signum: i32) {
        let mut signals = self.signals.borrow_mut();
        for (_, slot) in signals.slots.iter_mut() {
            if let Some(slot) = slot {
                if slot.host == host.0 && slot.signum == signum {
                    slot.pending = true;
                    if let Some(w) = slot.waker.take() {
                        w.wake();
                    }
                }
            }
        }
    }
}
