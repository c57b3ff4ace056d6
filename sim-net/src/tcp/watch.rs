//! What an `AsyncFd` on a simulated connection sees: the connection's
//! read and write events as edges, the way epoll reports a descriptor
//! registered edge-triggered.
//!
//! The connection counts its events (`TcpEnd::read_events`,
//! `write_events`); a watcher remembers the counts at which it cleared
//! its readiness and is ready again once a count moves. The watcher's own
//! wakers are woken by the events (`TcpEnd::fd_watch_read`,
//! `fd_watch_write`), so they never take the slot of a task blocked in a
//! read or a write.

use crate::state::{Network, Socket, SocketId};
use std::task::Waker;

/// A connection's events so far and its state now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edges {
    /// Read events (data, end of stream, reset) so far.
    pub read_events: u64,
    /// Write events (the window opened, a reset) so far.
    pub write_events: u64,
    /// A read would not block now: data, the end of stream or a reset.
    pub readable: bool,
    /// A write would not block now: room in the peer's window, or an
    /// error to report.
    pub writable: bool,
    /// The peer ended its side (epoll's `EPOLLRDHUP`).
    pub read_closed: bool,
    /// The connection can no longer send (epoll's `EPOLLHUP`).
    pub write_closed: bool,
}

impl Network {
    /// The events and state of connection `id`; `None` when it is gone.
    pub fn tcp_edges(&self, id: SocketId) -> Option<Edges> {
        let st = self.state.borrow();
        let Some(Socket::Tcp(end)) = st.get(id) else {
            return None;
        };
        let failed = end.reset || end.write_shut;
        let writable = failed || Self::window(&st, end) > 0;
        Some(Edges {
            read_events: end.read_events,
            write_events: end.write_events,
            readable: !end.recv.is_empty() || end.fin_received || end.reset,
            writable,
            read_closed: end.fin_received || end.reset,
            write_closed: end.reset || (end.write_shut && end.fin_received),
        })
    }

    /// Wakes `read` at the next read event and `write` at the next write
    /// event of connection `id` (each replaces the waker of an earlier
    /// call).
    pub fn tcp_watch(&self, id: SocketId, read: Option<&Waker>, write: Option<&Waker>) {
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            for (slot, waker) in [
                (&mut end.fd_watch_read, read),
                (&mut end.fd_watch_write, write),
            ] {
                match (&*slot, waker) {
                    (Some(w), Some(waker)) if w.will_wake(waker) => {}
                    (_, Some(waker)) => *slot = Some(waker.clone()),
                    (_, None) => {}
                }
            }
        }
    }
}
