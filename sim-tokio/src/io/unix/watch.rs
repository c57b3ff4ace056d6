//! The readiness of one `AsyncFd`, as tokio's reactor keeps it for a
//! descriptor registered edge-triggered: set by the connection's events,
//! cleared only by the `AsyncFd`'s owner (`clear_ready`, or a `try_io`
//! whose closure said `WouldBlock`), never by a read or write that found
//! nothing.
//!
//! The socket counts its read and write events (`sim_net`'s `watch.rs`). A `Watch` keeps the counts at which each direction was
//! cleared: a direction is ready while its count differs. A guard carries
//! the counts it saw, so clearing it keeps an event that came after.
//!
//! As in tokio, a new registration knows nothing until the driver's next
//! turn (the runtime's next step): its readiness is then what would not
//! block, as epoll reports a descriptor just added. Until then (or if the
//! runtime never runs again) nothing is ready. A poll that waits before
//! that turn arms one event at the current instant ("fd-register") to
//! wake it at the turn.

use super::super::{Interest, Ready};
use sim_net::watch::Edges;
use sim_net::SocketId;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

/// A readiness seen, with the event counts it was seen at.
#[derive(Clone, Copy, Debug)]
pub(super) struct Event {
    pub(super) ready: Ready,
    read_tick: u64,
    write_tick: u64,
}

/// Where a waiting poll leaves its waker.
#[derive(Clone, Copy, Debug)]
pub(super) enum Slot {
    /// `poll_read_ready`, `poll_write_ready`: only the last caller's waker
    /// is kept.
    Poll,
    /// `readable()`, `writable()`, `ready()`: every waiting task.
    Task,
}

/// The counts at which each direction was cleared (`None`: not cleared
/// since registration).
#[derive(Debug)]
struct Cleared {
    /// The runtime's step at registration (`Core::steps`).
    registered_step: u64,
    /// The driver's first turn since registration came.
    turned: bool,
    /// A poll waits for that turn: its "fd-register" event is armed.
    armed: bool,
    read_at: Option<u64>,
    write_at: Option<u64>,
}

impl Cleared {
    /// The first look after the driver's turn: ready for what would not
    /// block now.
    fn turn(&mut self, e: &Edges) {
        self.turned = true;
        self.read_at = (!e.readable).then_some(e.read_events);
        self.write_at = (!e.writable).then_some(e.write_events);
    }
}

/// The wakers of the polls waiting on one direction of one `AsyncFd`. The
/// connection wakes this as a whole at each event of the direction; each
/// poll then looks again.
#[derive(Debug, Default)]
struct Waiters {
    slots: Mutex<Slots>,
}

#[derive(Debug, Default)]
struct Slots {
    poll: Option<Waker>,
    /// At most one waker per task (`will_wake`), emptied at each event.
    tasks: Vec<Waker>,
}

impl Waiters {
    fn add(&self, waker: &Waker, slot: Slot) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        match slot {
            Slot::Poll => slots.poll = Some(waker.clone()),
            Slot::Task => {
                if !slots.tasks.iter().any(|w| w.will_wake(waker)) {
                    slots.tasks.push(waker.clone());
                }
            }
        }
    }
}

impl Wake for Waiters {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let woken = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            let mut woken = std::mem::take(&mut slots.tasks);
            woken.extend(slots.poll.take());
            woken
        };
        // Woken with the lock released: a woken poll may run at once.
        woken.into_iter().for_each(Waker::wake);
    }
}

/// What a `Watch` shares with its "fd-register" event.
#[derive(Debug)]
struct Shared {
    cleared: Mutex<Cleared>,
    read: Arc<Waiters>,
    write: Arc<Waiters>,
}

impl Shared {
    fn cleared(&self) -> MutexGuard<'_, Cleared> {
        self.cleared.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The "fd-register" event, at the driver's turn: wakes the waiters
    /// of what is ready.
    fn first_turn(&self, id: SocketId) {
        let Some(Some(e)) = sim_net::try_with_socket(id, |net| net.fd_edges(id)) else {
            return;
        };
        let (read, write) = {
            let mut cleared = self.cleared();
            if !cleared.turned {
                cleared.turn(&e);
            }
            (
                cleared.read_at != Some(e.read_events) || e.read_closed,
                cleared.write_at != Some(e.write_events) || e.write_closed,
            )
        };
        if read {
            self.read.wake_by_ref();
        }
        if write {
            self.write.wake_by_ref();
        }
    }
}

/// One `AsyncFd`'s registration on a simulated socket.
#[derive(Debug)]
pub(super) struct Watch {
    id: SocketId,
    interest: Interest,
    shared: Arc<Shared>,
}

/// Connection `id`'s edges (`None`: it is gone) and its runtime's step.
fn edges(id: SocketId) -> io::Result<(Option<Edges>, u64)> {
    sim_net::with_socket(id, |net| {
        let step = sim_runtime::context::with_current(|core| core.steps()).unwrap_or(0);
        Ok((net.fd_edges(id), step))
    })
}

impl Watch {
    /// Registers connection `id` for `interest` (ready from the driver's
    /// next turn, see the module docs).
    pub(super) fn new(id: SocketId, interest: Interest) -> io::Result<Watch> {
        let (_, registered_step) = edges(id)?;
        let shared = Arc::new(Shared {
            cleared: Mutex::new(Cleared {
                registered_step,
                turned: false,
                armed: false,
                read_at: None,
                write_at: None,
            }),
            read: Arc::default(),
            write: Arc::default(),
        });
        Ok(Watch {
            id,
            interest,
            shared,
        })
    }

    /// Arms the "fd-register" event that wakes a poll waiting for the
    /// driver's first turn (once).
    fn arm_first_turn(&self) {
        {
            let mut cleared = self.shared.cleared();
            if cleared.turned || cleared.armed {
                return;
            }
            cleared.armed = true;
        }
        let (id, shared) = (self.id, self.shared.clone());
        sim_net::try_with_socket(id, |net| {
            net.after(
                std::time::Duration::ZERO,
                "fd-register",
                Box::new(move || shared.first_turn(id)),
            );
        });
    }

    /// The readiness of `want` now (`None`: nothing of it), or the
    /// runtime's shutdown error.
    pub(super) fn now(&self, want: Interest) -> io::Result<Option<Event>> {
        let (edges, step) = edges(self.id)?;
        let Some(e) = edges else {
            // The connection is gone (its descriptor closed under the
            // `AsyncFd`): no event comes any more.
            return Ok(None);
        };
        let mut cleared = self.shared.cleared();
        if !cleared.turned {
            if step <= cleared.registered_step {
                return Ok(None);
            }
            cleared.turn(&e);
        }
        let mut ready = Ready::EMPTY;
        if want.is_readable() && self.interest.is_readable() {
            if cleared.read_at != Some(e.read_events) {
                ready |= Ready::READABLE;
            }
            if e.read_closed {
                ready |= Ready::READ_CLOSED;
            }
        }
        if want.is_writable() && self.interest.is_writable() {
            if cleared.write_at != Some(e.write_events) {
                ready |= Ready::WRITABLE;
            }
            if e.write_closed {
                ready |= Ready::WRITE_CLOSED;
            }
        }
        // No urgent data and no error queue in the simulated network:
        // PRIORITY and ERROR never become ready.
        Ok((!ready.is_empty()).then_some(Event {
            ready,
            read_tick: e.read_events,
            write_tick: e.write_events,
        }))
    }

    /// Polls for `want`, leaving `cx`'s waker in `slot` while not ready.
    pub(super) fn poll(
        &self,
        want: Interest,
        cx: &mut Context<'_>,
        slot: Slot,
    ) -> Poll<io::Result<Event>> {
        match self.now(want) {
            Err(e) => return Poll::Ready(Err(e)),
            Ok(Some(event)) => return Poll::Ready(Ok(event)),
            Ok(None) => {}
        }
        let reads = want.is_readable() && self.interest.is_readable();
        let writes = want.is_writable() && self.interest.is_writable();
        if reads {
            self.shared.read.add(cx.waker(), slot);
        }
        if writes {
            self.shared.write.add(cx.waker(), slot);
        }
        self.arm_first_turn();
        let read = reads.then(|| Waker::from(self.shared.read.clone()));
        let write = writes.then(|| Waker::from(self.shared.write.clone()));
        sim_net::try_with_socket(self.id, |net| {
            net.fd_watch(self.id, read.as_ref(), write.as_ref());
        });
        crate::util::note_wait("AsyncFd readiness", sim_runtime::WaitDetail::None, None);
        Poll::Pending
    }

    /// Clears the `which` part of `event`'s readiness: not ready again
    /// until an event after the ones `event` saw. Closed states stay.
    pub(super) fn clear(&self, event: Event, which: Ready) {
        // A count only moves forward: an older guard's clear does not undo
        // a newer one's.
        let later = |at: Option<u64>, tick: u64| Some(at.map_or(tick, |at| at.max(tick)));
        let mut cleared = self.shared.cleared();
        if (event.ready & which).is_readable() {
            cleared.read_at = later(cleared.read_at, event.read_tick);
        }
        if (event.ready & which).is_writable() {
            cleared.write_at = later(cleared.write_at, event.write_tick);
        }
    }
}
