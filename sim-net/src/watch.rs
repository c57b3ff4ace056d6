//! What an `AsyncFd` on a simulated socket sees: the socket's read and
//! write events as edges, the way epoll reports a descriptor registered
//! edge-triggered.
//!
//! Each socket counts its events: a connection its read events (data, end
//! of stream, reset) and write events (the window opened, a reset); a
//! datagram socket its arrivals; a listener the connections that reached
//! its backlog. A watcher remembers the counts at which it cleared its
//! readiness and is ready again once a count moves. The watcher's own
//! wakers are woken by the events (`fd_watch_read`, `fd_watch_write`), so
//! they never take the slot of a task blocked in a read or a write.

use crate::state::{Network, Socket, SocketId};
use std::task::Waker;

/// A socket's events so far and its state now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edges {
    /// Read events so far.
    pub read_events: u64,
    /// Write events so far.
    pub write_events: u64,
    /// A read (or an accept) would not block now.
    pub readable: bool,
    /// A write would not block now (a listener is never writable).
    pub writable: bool,
    /// The peer ended its side (epoll's `EPOLLRDHUP`).
    pub read_closed: bool,
    /// The connection can no longer send (epoll's `EPOLLHUP`).
    pub write_closed: bool,
}

/// Sets `slot` to `waker` unless it already wakes the same task.
fn watch_slot(slot: &mut Option<Waker>, waker: Option<&Waker>) {
    match (&*slot, waker) {
        (Some(w), Some(waker)) if w.will_wake(waker) => {}
        (_, Some(waker)) => *slot = Some(waker.clone()),
        (_, None) => {}
    }
}

impl Network {
    /// The events and state of socket `id`; `None` when it is gone.
    pub fn fd_edges(&self, id: SocketId) -> Option<Edges> {
        let st = self.state.borrow();
        match st.get(id)? {
            Socket::Tcp(end) => {
                let failed = end.reset || end.write_shut;
                Some(Edges {
                    read_events: end.read_events,
                    write_events: end.write_events,
                    readable: !end.recv.is_empty() || end.fin_received || end.reset,
                    writable: failed || Self::window(&st, end) > 0,
                    read_closed: end.fin_received || end.reset,
                    write_closed: end.reset || (end.write_shut && end.fin_received),
                })
            }
            Socket::Udp(u) => Some(Edges {
                read_events: u.arrivals,
                write_events: 0,
                readable: !u.queue.is_empty() || u.refused,
                // Sends never wait.
                writable: true,
                read_closed: false,
                write_closed: false,
            }),
            Socket::Listener(l) => Some(Edges {
                read_events: l.arrivals,
                write_events: 0,
                readable: !l.backlog.is_empty(),
                writable: false,
                read_closed: false,
                write_closed: false,
            }),
            Socket::UnixDatagram(_) => None,
        }
    }

    /// Wakes `read` at the next read event and `write` at the next write
    /// event of socket `id` (each replaces the waker of an earlier call).
    pub fn fd_watch(&self, id: SocketId, read: Option<&Waker>, write: Option<&Waker>) {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Tcp(end)) => {
                watch_slot(&mut end.fd_watch_read, read);
                watch_slot(&mut end.fd_watch_write, write);
            }
            Some(Socket::Udp(u)) => watch_slot(&mut u.fd_watch_read, read),
            Some(Socket::Listener(l)) => watch_slot(&mut l.fd_watch_read, read),
            _ => {}
        }
    }
}
