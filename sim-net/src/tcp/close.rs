//! The end of a connection: a shutdown of the write side (a FIN after the
//! data), and a close, graceful (a FIN) or abortive (an RST: unread data,
//! or `SO_LINGER` of zero).

use super::not_connected;
use crate::socket::{Phase, Segment, SegmentKind};
use crate::state::{Network, Socket, SocketId};
use std::io;
use std::rc::Rc;
use std::time::Duration;

impl Network {
    /// Shuts the write side: a FIN follows the data.
    pub fn tcp_shutdown_write(self: &Rc<Self>, id: SocketId) -> io::Result<()> {
        // What Nagle holds leaves first: the FIN follows the last byte.
        self.flush_held(id);
        let segment = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                return Err(not_connected());
            };
            if end.write_shut || end.phase != Phase::Established {
                return Ok(());
            }
            end.write_shut = true;
            Segment {
                from_host: end.host,
                to_host: 0,
                from: id,
                to: end.peer_id,
                src: end.local,
                dst: end.peer,
                kind: SegmentKind::Fin,
            }
        };
        let to_host = self.route(segment.from_host, segment.dst);
        self.send_segment(Segment { to_host, ..segment });
        Ok(())
    }

    /// The application closed the socket (dropped it). A listener frees its
    /// port, and resets connections nobody accepted. A connection with
    /// unread data resets the peer; otherwise it sends a FIN. The endpoint
    /// stays as a tombstone that answers later data with an RST.
    pub fn tcp_close(self: &Rc<Self>, id: SocketId) {
        // A connect given up: its SYN is not sent again.
        let syn_timer = match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Tcp(end)) => end.syn_timer.take(),
            _ => None,
        };
        if let Some(timer) = syn_timer {
            self.cancel(timer);
        }
        // A graceful close sends what Nagle holds before its FIN; an
        // abortive one (unread data, or `SO_LINGER` of zero) drops it.
        let abortive = match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Tcp(end)) => {
                let abortive = !end.recv.is_empty() || end.linger == Some(Duration::ZERO);
                if abortive {
                    end.ack.held.clear();
                }
                abortive
            }
            _ => false,
        };
        if !abortive {
            self.flush_held(id);
        }
        let immediate;
        let mut free_now = false;
        let segment = {
            let mut st = self.state.borrow_mut();
            match st.get_mut(id) {
                Some(Socket::Listener(_)) => {
                    drop(st);
                    self.close_listener(id);
                    return;
                }
                Some(Socket::Tcp(end)) if end.phase != Phase::Established => {
                    // Never connected: nothing to tell anyone. A late SYN-ACK
                    // finds no socket and answers with an RST.
                    let (host, port) = (end.host, end.local.port());
                    debug_assert!(end.unix.is_none(), "unix streams connect at once");
                    st.hosts[host as usize].tcp_ports.remove(port, id.index);
                    st.free_slot(id.index);
                    return;
                }
                Some(Socket::Tcp(end)) => {
                    end.closed = true;
                    let peer_done = end.fin_received || end.reset;
                    let peer = end.peer_id;
                    let kind = if end.reset {
                        None
                    } else if !end.recv.is_empty() || end.linger == Some(Duration::ZERO) {
                        Some(SegmentKind::Rst)
                    } else if !end.write_shut {
                        end.write_shut = true;
                        Some(SegmentKind::Fin)
                    } else {
                        None
                    };
                    // A Unix stream's end has no wire: with nothing of it
                    // in flight, its FIN or RST is at the peer at once (a
                    // connect that waits a turn sees it).
                    immediate = end.unix.is_some() && end.in_flight == 0;
                    let segment = kind.map(|kind| Segment {
                        from_host: end.host,
                        to_host: end.host,
                        from: id,
                        to: end.peer_id,
                        src: end.local,
                        dst: end.peer,
                        kind,
                    });
                    // The port is free for new binds; the tombstone keeps its
                    // slot so that late segments still find it.
                    let (host, port) = (end.host, end.local.port());
                    st.hosts[host as usize].tcp_ports.remove(port, id.index);
                    // Both sides are done, and the peer sends nothing more
                    // (it sent its FIN and is closed or gone): nothing can
                    // arrive that needs this tombstone once its own segment
                    // is out.
                    let peer_closed = match peer.and_then(|p| st.get(p)) {
                        Some(Socket::Tcp(p)) => p.closed,
                        _ => true,
                    };
                    if peer_done && (segment.is_none() || peer_closed) {
                        free_now = true;
                    }
                    segment
                }
                _ => return,
            }
        };
        if let Some(segment) = segment {
            if matches!(segment.kind, SegmentKind::Rst) {
                self.note(&format!(
                    "reset {}>{}: closed with unread data or a zero linger",
                    self.describe(&segment.src),
                    self.describe(&segment.dst)
                ));
            }
            let to_host = self.route(segment.from_host, segment.dst);
            if immediate {
                self.deliver_segment(Segment { to_host, ..segment });
            } else {
                self.send_segment(Segment { to_host, ..segment });
            }
        }
        if free_now {
            self.state.borrow_mut().free_slot(id.index);
        }
    }

    /// A listener closes: its port (or path) is free, and the connections
    /// nobody accepted are reset, as Linux resets them.
    fn close_listener(self: &Rc<Self>, id: SocketId) {
        let pending = {
            let mut st = self.state.borrow_mut();
            let Some(Socket::Listener(l)) = st.get_mut(id) else {
                return;
            };
            let (host, port, path) = (l.host, l.local.port(), l.path.take());
            let pending: Vec<SocketId> = l.backlog.drain(..).map(|(s, _)| s).collect();
            match path {
                // The socket file stays, as on Linux: a connect is refused
                // until something binds the path again.
                Some(path) => {
                    st.hosts[host as usize].unix_paths.remove(&path);
                    st.hosts[host as usize].unix_stale.insert(path);
                }
                None => {
                    st.hosts[host as usize].tcp_ports.remove(port, id.index);
                    crate::std_net::note_listening(port, false);
                }
            }
            for &pending in &pending {
                if let Some(Socket::Tcp(end)) = st.get_mut(pending) {
                    end.linger = Some(Duration::ZERO);
                }
            }
            st.free_slot(id.index);
            pending
        };
        for pending in pending {
            self.tcp_close(pending);
        }
    }
}
