//! Nagle's algorithm and delayed ACKs: why `set_nodelay` matters.
//!
//! Each end of a connection counts, in bytes, what it sent of its stream and
//! what the peer acknowledged, and what it received of the peer's stream and
//! acknowledged (`AckState`).
//!
//! - **Nagle** (while `TCP_NODELAY` is off, the default): a write that would
//!   leave a small segment (less than an MSS) while an earlier small segment
//!   is unacknowledged is held back until the ACK comes or a full segment's
//!   worth is written. That is Minshall's variant, which Linux uses: one
//!   small segment may be in flight at a time. `set_nodelay(true)`, a
//!   shutdown and a close send what is held at once.
//! - **Delayed ACK:** a receiver acknowledges at once for a connection's
//!   first segments (Linux's quick-ACK start, `QUICK_ACKS`) and whenever more
//!   than a full segment is unacknowledged. Otherwise it waits up to
//!   `DELAYED_ACK_NS` for data of its own to carry the ACK. Once an end has
//!   sent data within that time of receiving some (Linux's "ping-pong"
//!   mode) it no longer uses quick ACKs, until its delayed-ACK timer fires.
//!
//! Together they give Linux's classic stall: on a connection that already
//! answered a request, a request written in two small writes waits for the
//! peer's delayed ACK (40 ms) before its second half leaves, and
//! `set_nodelay(true)` removes the wait. Unix streams have neither. There
//! is no loss to recover from here, so no retransmission timer: a segment
//! to a crashed host is lost with its host, and what Nagle held for it stays
//! held.

use crate::socket::{AckState, Segment, SegmentKind};
use crate::state::{Network, Socket, SocketId};
use std::rc::Rc;

/// How long a receiver waits for a reply to carry its ACK: Linux's
/// `TCP_DELACK_MIN`.
pub const DELAYED_ACK_NS: u64 = 40_000_000;

/// How many segments at the start of a connection a receiver acknowledges
/// at once: Linux's `TCP_MAX_QUICKACKS`.
pub const QUICK_ACKS: u32 = 16;

/// The MSS of Linux's loopback (a 65,536-byte MTU, less the headers).
pub const MSS_LOOPBACK_BYTES: usize = 65_483;

/// What a received data segment asks of its receiver.
enum AckAction {
    Now,
    Later,
    Nothing,
}

/// What is left of `len` bytes after full segments of `mss`: `len % mss`,
/// without the division for a write shorter than a segment (most are; a
/// division is tens of cycles, on every write).
#[inline]
fn tail_of(len: usize, mss: usize) -> usize {
    if len < mss {
        len
    } else {
        len % mss
    }
}

impl AckState {
    /// How many of `total` written-and-unsent bytes may leave now: all of
    /// them, or all but a small tail while a small segment is
    /// unacknowledged and Nagle is on.
    fn sendable(&self, total: usize, nodelay: bool, mss: usize) -> usize {
        let tail = tail_of(total, mss);
        if tail == 0 || nodelay || self.small_end <= self.acked {
            total
        } else {
            total - tail
        }
    }

    /// Counts `len` bytes sent; a small tail is the one small segment in
    /// flight.
    fn count_sent(&mut self, len: usize, mss: usize) {
        self.sent += len as u64;
        if tail_of(len, mss) != 0 {
            self.small_end = self.sent;
        }
    }

    /// The peer acknowledged `upto` bytes of this end's stream.
    fn count_acked(&mut self, upto: u64) {
        debug_assert!(upto <= self.sent, "an ACK beyond what was sent");
        self.acked = self.acked.max(upto);
    }

    /// Bytes of the peer's stream received and not yet acknowledged.
    fn owed(&self) -> u64 {
        self.received - self.received_acked
    }
}

impl Network {
    /// The MSS of a connection from `from_host` to `to_host`.
    fn mss(from_host: u32, to_host: u32) -> usize {
        if from_host == to_host {
            MSS_LOOPBACK_BYTES
        } else {
            super::MSS_BYTES
        }
    }

    /// The MSS of `id`'s connection.
    fn end_mss(&self, id: SocketId) -> Option<usize> {
        let (host, peer) = match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) => (end.host, end.peer),
            _ => return None,
        };
        Some(Self::mss(host, self.route(host, peer)))
    }

    /// Sends `bytes`, just written on `id` (the window allowed them), or
    /// holds back the small tail Nagle keeps.
    pub(super) fn send_written(self: &Rc<Self>, id: SocketId, bytes: &[u8]) {
        enum Out {
            /// The first bytes of the caller's buffer.
            Written(usize),
            /// Bytes that were held.
            Held(Vec<u8>),
        }
        let Some(mss) = self.end_mss(id) else { return };
        let out = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            let ack = &mut end.ack;
            if end.unix.is_some() {
                Out::Written(bytes.len())
            } else if ack.held.is_empty() {
                // Nothing held: send from the caller's buffer, keep the tail.
                let now = ack.sendable(bytes.len(), end.nodelay, mss);
                ack.held.extend_from_slice(&bytes[now..]);
                ack.count_sent(now, mss);
                Out::Written(now)
            } else {
                ack.held.extend_from_slice(bytes);
                let now = ack.sendable(ack.held.len(), end.nodelay, mss);
                let rest = ack.held.split_off(now);
                ack.count_sent(now, mss);
                Out::Held(std::mem::replace(&mut ack.held, rest))
            }
        };
        match out {
            Out::Written(n) => self.transmit(id, &bytes[..n]),
            Out::Held(held) => self.transmit(id, &held),
        }
    }

    /// Sends everything Nagle holds on `id`, Nagle or not (`TCP_NODELAY`
    /// set, a shutdown or a close).
    pub(super) fn flush_held(self: &Rc<Self>, id: SocketId) {
        let Some(mss) = self.end_mss(id) else { return };
        let held = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            if end.ack.held.is_empty() {
                return;
            }
            let held = std::mem::take(&mut end.ack.held);
            end.ack.count_sent(held.len(), mss);
            held
        };
        self.transmit(id, &held);
    }

    /// Sends what Nagle may now let go of on `id` (an ACK came).
    fn release_held(self: &Rc<Self>, id: SocketId) {
        self.send_written(id, &[]);
    }

    /// Sends `bytes` of `id`'s stream as data segments, each carrying the
    /// end's acknowledgement of what it received (which settles any ACK it
    /// owed).
    fn transmit(self: &Rc<Self>, id: SocketId, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let now_ns = self.now_ns();
        let (host, local, peer, peer_id, ack) = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            let ack = &mut end.ack;
            if ack.received > 0 && now_ns - ack.received_at_ns < DELAYED_ACK_NS {
                // Data answered data: Linux's ping-pong mode.
                ack.interactive = true;
            }
            ack.received_acked = ack.received;
            // The ACK rides on this data: none is owed. A pending delayed
            // ACK event stays and finds nothing to do (see `owe_ack`).
            ack.delack_due_ns = None;
            (end.host, end.local, end.peer, end.peer_id, ack.received)
        };
        let to_host = self.route(host, peer);
        self.cut_segments(bytes, to_host == host, |chunk| {
            self.send_segment(Segment {
                from_host: host,
                to_host,
                from: id,
                to: peer_id,
                src: local,
                dst: peer,
                kind: SegmentKind::Data {
                    msg: self.next_msg(),
                    bytes: chunk.into(),
                    ack,
                },
            });
        });
    }

    /// A data segment of `len` bytes, carrying `ack`, crossed `link` (from
    /// host, to host) to `id` and is in its receive buffer: the ACK it
    /// carries may release held bytes, and the receiver acknowledges now or
    /// later.
    pub(super) fn data_received(
        self: &Rc<Self>,
        id: SocketId,
        link: (u32, u32),
        len: usize,
        ack: u64,
    ) {
        let mss = Self::mss(link.0, link.1) as u64;
        let (release, action) = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            if end.unix.is_some() {
                return;
            }
            let state = &mut end.ack;
            state.count_acked(ack);
            state.received += len as u64;
            state.received_at_ns = self.now_ns();
            let release = !state.held.is_empty();
            let quick = !state.interactive && state.quick_acks_used < QUICK_ACKS;
            let action = if state.owed() > mss || quick {
                if quick {
                    state.quick_acks_used += 1;
                }
                AckAction::Now
            } else if state.delack_due_ns.is_none() {
                AckAction::Later
            } else {
                AckAction::Nothing
            };
            (release, action)
        };
        match action {
            AckAction::Now => self.send_ack(id),
            AckAction::Later => self.owe_ack(id, self.now_ns() + DELAYED_ACK_NS),
            AckAction::Nothing => {}
        }
        if release {
            self.release_held(id);
        }
    }

    /// `id` owes an ACK, due at `due_ns`. The delayed ACK's event is
    /// lazy, as Linux's timer is: an ACK that rides on a reply leaves the
    /// event pending, and the next ACK owed reuses it. So a connection that
    /// answers each message schedules about one event per `DELAYED_ACK_NS`,
    /// not one per message (each armed only to be cancelled).
    fn owe_ack(self: &Rc<Self>, id: SocketId, due_ns: u64) {
        let pending = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            end.ack.delack_due_ns = Some(due_ns);
            end.ack.delack_pending
        };
        // A pending event was scheduled for an earlier ACK, so it comes
        // first; when it fires it schedules this one's.
        if !pending {
            self.arm_delayed_ack(id, due_ns);
        }
    }

    fn arm_delayed_ack(self: &Rc<Self>, id: SocketId, at_ns: u64) {
        let net = self.clone();
        self.schedule(
            at_ns,
            "tcp-delayed-ack",
            Box::new(move || net.delayed_ack_event(id)),
        );
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            end.ack.delack_pending = true;
        }
    }

    /// The delayed ACK's event: when the ACK owed is due and no reply
    /// carried it, it leaves alone, and the end leaves ping-pong mode, as
    /// Linux's does; when it is due later, the event moves there; when
    /// none is owed, nothing happens.
    fn delayed_ack_event(self: &Rc<Self>, id: SocketId) {
        let now_ns = self.now_ns();
        let due = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            end.ack.delack_pending = false;
            end.ack.delack_due_ns
        };
        match due {
            None => {}
            Some(due_ns) if due_ns > now_ns => self.arm_delayed_ack(id, due_ns),
            Some(_) => {
                if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
                    end.ack.interactive = false;
                }
                self.send_ack(id);
            }
        }
    }

    /// Sends `id`'s acknowledgement of all it received, alone.
    fn send_ack(self: &Rc<Self>, id: SocketId) {
        let segment = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            if end.ack.owed() == 0 || end.closed {
                return;
            }
            end.ack.received_acked = end.ack.received;
            Segment {
                from_host: end.host,
                to_host: 0,
                from: id,
                to: end.peer_id,
                src: end.local,
                dst: end.peer,
                kind: SegmentKind::Ack {
                    upto: end.ack.received,
                },
            }
        };
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            // Nothing is owed now; a pending event finds nothing to do.
            end.ack.delack_due_ns = None;
        }
        let to_host = self.route(segment.from_host, segment.dst);
        self.send_segment(Segment { to_host, ..segment });
    }

    /// An ACK alone reached `id`: it may release held bytes.
    pub(super) fn ack_received(self: &Rc<Self>, id: SocketId, upto: u64) {
        let release = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return;
            };
            end.ack.count_acked(upto);
            !end.ack.held.is_empty()
        };
        if release {
            self.release_held(id);
        }
    }

    /// `TCP_QUICKACK`: on, the end leaves ping-pong mode, acknowledges what
    /// it owes now and quick-acknowledges again; off, it enters ping-pong
    /// mode. Not permanent, as on Linux: the end's traffic moves it between
    /// the modes afterwards.
    pub fn tcp_set_quickack(self: &Rc<Self>, id: SocketId, on: bool) -> std::io::Result<()> {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Tcp(end)) => {
                end.ack.interactive = !on;
                if on {
                    end.ack.quick_acks_used = 0;
                }
            }
            _ => return Err(super::not_connected()),
        }
        if on {
            self.send_ack(id);
        }
        Ok(())
    }

    /// `TCP_QUICKACK`: whether the end is out of ping-pong mode, as Linux
    /// reports it.
    pub fn tcp_quickack(&self, id: SocketId) -> std::io::Result<bool> {
        match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) => Ok(!end.ack.interactive),
            _ => Err(super::not_connected()),
        }
    }
}
