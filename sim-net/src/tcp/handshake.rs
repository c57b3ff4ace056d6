//! The handshake: a SYN, its retransmissions with Linux's backoff, and the
//! SYN-ACK of the listener that accepts it (or the RST of a host that
//! refuses).

use crate::socket::{Phase, Segment, SegmentKind, TcpEnd};
use crate::state::{ConnectPolicy, HostId, Network, Socket, SocketId};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::Waker;

/// Linux's initial retransmission timeout for a SYN (`TCP_TIMEOUT_INIT`).
pub const SYN_RTO_INITIAL_NS: u64 = 1_000_000_000;

/// How often Linux resends an unanswered SYN before a connect fails with
/// `ETIMEDOUT` (`net.ipv4.tcp_syn_retries`, default 6).
pub const SYN_RETRIES_MAX: u32 = 6;

/// Linux's `ETIMEDOUT`.
pub(super) const ETIMEDOUT: i32 = 110;

impl Network {
    /// Arms the retransmission timer of a connecting socket's `attempt`-th
    /// SYN: Linux's initial RTO, doubled after each retransmission.
    pub(super) fn arm_syn_timer(self: &Rc<Self>, id: SocketId, attempt: u32) {
        let at = self.now_ns() + (SYN_RTO_INITIAL_NS << attempt);
        let net = self.clone();
        let key = self.schedule(
            at,
            "tcp-syn-timeout",
            Box::new(move || net.syn_timeout(id, attempt)),
        );
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            end.syn_timer = Some(key);
        }
    }

    /// No SYN-ACK came for the `attempt`-th SYN: send it again, or, after
    /// the last retransmission, fail the connect with `ETIMEDOUT`, as Linux
    /// does (`tcp_syn_retries` = 6: at 1, 3, 7, 15, 31 and 63 s, then
    /// giving up at 127 s). A SYN that reaches a restarted host completes
    /// the connection.
    fn syn_timeout(self: &Rc<Self>, id: SocketId, attempt: u32) {
        let ends = {
            let mut st = self.state.borrow_mut();
            let end = match st.get_mut(id) {
                Some(Socket::Tcp(end)) if end.phase == Phase::Connecting && !end.closed => end,
                _ => return,
            };
            end.syn_timer = None;
            if attempt >= SYN_RETRIES_MAX {
                end.phase = Phase::Failed(io::ErrorKind::TimedOut);
                end.wake_all();
                None
            } else {
                Some((end.host, end.local, end.peer))
            }
        };
        let Some((host, local, peer)) = ends else {
            self.note(&format!(
                "tcp-connect timed out after {} SYNs",
                SYN_RETRIES_MAX + 1
            ));
            return;
        };
        let Some(to_host) = self.host_of_ip(HostId(host), peer.ip()) else {
            return;
        };
        self.send_segment(Segment {
            from_host: host,
            to_host: to_host.0,
            from: id,
            to: None,
            src: local,
            dst: peer,
            kind: SegmentKind::Syn {
                listener_addr: peer,
                attempt: attempt + 1,
            },
        });
        self.arm_syn_timer(id, attempt + 1);
    }

    pub(super) fn deliver_syn(self: &Rc<Self>, segment: Segment, dst: SocketAddr) {
        // A retransmitted SYN of a connection the host already accepted is
        // answered again, not accepted twice.
        if let SegmentKind::Syn { attempt: 1.., .. } = segment.kind {
            let accepted = {
                let st = self.state.borrow();
                st.sockets
                    .iter()
                    .enumerate()
                    .find_map(|(index, slot)| match &slot.socket {
                        Some(Socket::Tcp(end))
                            if end.host == segment.to_host
                                && end.peer_id == Some(segment.from)
                                && end.local == dst
                                && !end.closed =>
                        {
                            Some(SocketId {
                                net: st.net,
                                index: index as u32,
                                generation: slot.generation,
                            })
                        }
                        _ => None,
                    })
            };
            if let Some(server) = accepted {
                self.syn_ack(&segment, server, dst);
                return;
            }
        }
        let policy = self.state.borrow().hosts[segment.to_host as usize].policy;
        match policy {
            ConnectPolicy::BlackHole => {
                self.note(&format!(
                    "drop tcp-syn {}>{}: black hole",
                    self.describe(&segment.src),
                    self.describe(&dst)
                ));
                return;
            }
            ConnectPolicy::Refuse => {
                self.reply_rst(&segment);
                return;
            }
            ConnectPolicy::Normal => {}
        }
        if self.is_silent(segment.to_host, dst.port()) {
            // Accepted by a process that never reads or answers: the
            // connection completes, and its bytes pile up unread.
            let server = {
                let mut end = TcpEnd::new(segment.to_host, dst, segment.src, Phase::Established);
                end.peer_id = Some(segment.from);
                self.state.borrow_mut().insert(Socket::Tcp(end))
            };
            self.note(&format!(
                "accept {}>{}: a silent port",
                self.describe(&segment.src),
                self.describe(&dst)
            ));
            self.syn_ack(&segment, server, dst);
            return;
        }
        let mut woken = Vec::new();
        let accepted = {
            let mut st = self.state.borrow_mut();
            let listener_id = st
                .tcp_listener_for(segment.to_host, dst)
                .map(|index| SocketId {
                    net: st.net,
                    index,
                    generation: st.sockets[index as usize].generation,
                });
            // The listener's address matches (`tcp_listener_for`); its
            // backlog must have room.
            let listening = listener_id.and_then(|id| match st.get(id) {
                Some(Socket::Listener(l)) if l.backlog.len() < l.backlog_max => Some(id),
                _ => None,
            });
            listening.map(|listener_id| {
                let mut end = TcpEnd::new(segment.to_host, dst, segment.src, Phase::Established);
                end.peer_id = Some(segment.from);
                let server = st.insert(Socket::Tcp(end));
                if let Some(scope) = st.scope_of(listener_id) {
                    st.set_scope(server, scope);
                }
                if let Some(Socket::Listener(l)) = st.get_mut(listener_id) {
                    l.backlog.push_back((server, segment.src));
                    l.arrived();
                    woken = std::mem::take(&mut l.wakers);
                }
                server
            })
        };
        match accepted {
            Some(server) => self.syn_ack(&segment, server, dst),
            None => self.reply_rst(&segment),
        }
        // Woken with the state released and the SYN-ACK on its way, as the
        // kernel completes the handshake before the accepting task hears of
        // it: a wake may drop the last handle of that task, and with it the
        // listener, whose close then resets the connection.
        woken.into_iter().for_each(Waker::wake);
    }

    /// Answers `syn` from the new endpoint `server`, bound at `dst`.
    fn syn_ack(self: &Rc<Self>, syn: &Segment, server: SocketId, dst: SocketAddr) {
        self.send_segment(Segment {
            from_host: syn.to_host,
            to_host: syn.from_host,
            from: server,
            to: Some(syn.from),
            src: dst,
            dst: syn.src,
            kind: SegmentKind::SynAck,
        });
    }
}
