//! A segment's way across its link: sent (or parked while the link is cut
//! or held), in flight in the network's table, and delivered to its
//! endpoint, which takes its bytes, its SYN, FIN or RST, or answers a
//! segment for a socket that is gone with an RST.

use super::*;

impl Network {
    /// Sends a segment over its link: now, later (partitioned or held), or
    /// never (a partition loses nothing of TCP's: it waits).
    pub(crate) fn send_segment(self: &Rc<Self>, segment: Segment) {
        if self.is_unix_end(segment.from) {
            self.hand_over(segment);
            return;
        }
        let (latency, mode, config) = self.link_draw(segment.from_host, segment.to_host, || {
            format!(
                "tcp-{}{} {}>{}",
                segment.word(),
                segment.msg_tag(),
                self.describe(&segment.src),
                self.describe(&segment.dst)
            )
        });
        if mode != LinkMode::Up {
            if let SegmentKind::Data { msg, ref bytes, .. } = segment.kind {
                crate::net::with_core(|core| {
                    core.story_held(msg, (segment.src, segment.dst), bytes)
                });
            }
            self.note(&format!(
                "hold tcp-{}{} {}>{}",
                segment.word(),
                segment.msg_tag(),
                self.describe(&segment.src),
                self.describe(&segment.dst)
            ));
            self.park(segment.from_host, segment.to_host, Parked::Tcp(segment));
            return;
        }
        // Scripted controls act on what crosses an open link (a parked
        // segment meets them when it flows again).
        if self.reset_by_rule(&segment) {
            return;
        }
        // Most runs set no hold budget: checked before the segment moves.
        let segment = match self.any_hold_budget() {
            false => segment,
            true => match self.spend_hold_budget(segment) {
                Some(segment) => segment,
                None => return,
            },
        };
        let now = self.now_ns();
        let mut at = now + latency;
        // Never overtake an earlier segment of the same endpoint.
        {
            let mut st = self.state.borrow_mut();
            if let Some(Socket::Tcp(end)) = st.get_mut(segment.from) {
                at = at.max(end.last_arrival_ns);
                end.last_arrival_ns = at;
            }
        }
        if let SegmentKind::Data {
            msg,
            bytes: ref data,
            ..
        } = segment.kind
        {
            let least_ns =
                crate::net::least_latency_ns(segment.from_host, segment.to_host, &config);
            self.note_message_over(
                "send",
                msg,
                Some((segment.src, segment.dst)),
                Some(data),
                Some(least_ns),
            );
        }
        let label = match segment.kind {
            SegmentKind::Syn { .. } => "tcp-syn",
            SegmentKind::SynAck => "tcp-syn-ack",
            SegmentKind::Data { .. } => "tcp-deliver",
            SegmentKind::Ack { .. } => "tcp-ack",
            SegmentKind::Fin => "tcp-fin",
            SegmentKind::Rst => "tcp-rst",
        };
        // Equal arrival times fire in scheduling order, which is send order.
        let index = self.state.borrow_mut().tcp_flight.put(segment);
        self.schedule_with(at, label, &DELIVER_SEGMENT, index);
    }

    fn is_unix_end(&self, id: SocketId) -> bool {
        matches!(self.state.borrow().get(id), Some(Socket::Tcp(end)) if end.unix.is_some())
    }

    /// A Unix stream has no wire: what one end writes is in the peer's
    /// buffer when the write returns, as the kernel copies it. No link, no
    /// latency, no fault applies.
    fn hand_over(self: &Rc<Self>, segment: Segment) {
        if let SegmentKind::Data { msg, ref bytes, .. } = segment.kind {
            self.note_message_over(
                "send",
                msg,
                Some((segment.src, segment.dst)),
                Some(bytes),
                Some(0),
            );
        }
        self.deliver_segment(segment);
    }

    pub(super) fn reply_rst(self: &Rc<Self>, to: &Segment) {
        if matches!(to.kind, SegmentKind::Rst) {
            return;
        }
        self.send_segment(Segment {
            from_host: to.to_host,
            to_host: to.from_host,
            from: to.to.unwrap_or(to.from),
            to: Some(to.from),
            src: to.dst,
            dst: to.src,
            kind: SegmentKind::Rst,
        });
    }

    pub(super) fn deliver_segment(self: &Rc<Self>, segment: Segment) {
        let (alive, exited) = {
            let st = self.state.borrow();
            let host = &st.hosts[segment.to_host as usize];
            (host.alive, host.exited)
        };
        if exited {
            // The process is gone, the machine is not: its kernel resets.
            self.reply_rst(&segment);
            return;
        }
        if !alive {
            // A crashed host answers nothing.
            self.note(&format!(
                "lost tcp-{}{} {}>{}: the host is down",
                segment.word(),
                segment.msg_tag(),
                self.describe(&segment.src),
                self.describe(&segment.dst)
            ));
            return;
        }
        match segment.kind {
            SegmentKind::Syn { listener_addr, .. } => self.deliver_syn(segment, listener_addr),
            SegmentKind::SynAck => self.deliver_syn_ack(&segment),
            SegmentKind::Data {
                msg,
                bytes: ref data,
                ack,
            } => {
                let len = data.len();
                // The send line has the addresses: the number pairs them.
                self.note_message("deliver", msg, None, None);
                let mut st = self.state.borrow_mut();
                if let Some(Socket::Tcp(sender)) = st.get_mut(segment.from) {
                    sender.in_flight -= len;
                }
                let target = segment.to.and_then(|to| st.get_mut(to));
                match target {
                    Some(Socket::Tcp(end)) if !end.closed && !end.reset => {
                        let SegmentKind::Data { bytes: data, .. } = segment.kind else {
                            unreachable!()
                        };
                        end.recv.extend(data.iter());
                        end.read_event();
                        drop(st);
                        let link = (segment.from_host, segment.to_host);
                        if let Some(to) = segment.to {
                            self.data_received(to, link, len, ack);
                        }
                    }
                    _ => {
                        drop(st);
                        self.note(&format!(
                            "lost #{msg} {}>{}: no socket, reset",
                            self.describe(&segment.src),
                            self.describe(&segment.dst)
                        ));
                        self.reply_rst(&segment);
                    }
                }
            }
            SegmentKind::Ack { upto } => {
                if let Some(to) = segment.to {
                    self.ack_received(to, upto);
                }
            }
            SegmentKind::Fin => {
                let mut st = self.state.borrow_mut();
                let Some(to) = segment.to else { return };
                if let Some(Socket::Tcp(end)) = st.get_mut(to) {
                    end.fin_received = true;
                    end.read_event();
                    if end.closed {
                        // Both sides ended and this one's FIN left at its
                        // close: nothing more arrives that needs the
                        // tombstone.
                        st.free_slot(to.index);
                    }
                }
            }
            SegmentKind::Rst => self.deliver_rst(&segment),
        }
    }

    /// A SYN-ACK: the connecting end is established; none there, a reset.
    fn deliver_syn_ack(self: &Rc<Self>, segment: &Segment) {
        let mut st = self.state.borrow_mut();
        if let Some(Socket::Tcp(end)) = segment.to.and_then(|to| st.get_mut(to)) {
            if end.phase == Phase::Connecting {
                end.phase = Phase::Established;
                end.peer_id = Some(segment.from);
                end.wake_all();
                // Established is writable, not readable (no data yet).
                end.read_cleared_at = Some(end.read_events);
                if let Some(timer) = end.syn_timer.take() {
                    drop(st);
                    self.cancel(timer);
                }
            }
        } else {
            drop(st);
            self.reply_rst(segment);
        }
    }

    /// A reset: a connecting end is refused, an established one reset.
    /// What it received before stays readable, as on Linux (whose reset
    /// drops the unsent bytes, not the unread ones): an HTTP server's early
    /// answer to a request it then resets is read, then the reset.
    fn deliver_rst(self: &Rc<Self>, segment: &Segment) {
        let mut st = self.state.borrow_mut();
        if let Some(Socket::Tcp(end)) = segment.to.and_then(|to| st.get_mut(to)) {
            match end.phase {
                Phase::Connecting => end.phase = Phase::Failed(io::ErrorKind::ConnectionRefused),
                _ => end.reset = true,
            }
            end.wake_all();
        }
        drop(st);
        self.note(&format!(
            "reset {}>{}",
            self.describe(&segment.src),
            self.describe(&segment.dst)
        ));
    }
}

/// The delivery event of the segment in flight entry `index`.
static DELIVER_SEGMENT: sim_runtime::events::Handler = sim_runtime::events::Handler {
    run: |index| {
        Network::deliver_in_flight(index, |st| &mut st.tcp_flight, Network::deliver_segment)
    },
    fetch: |index| Network::fetch_in_flight(index, |st| &st.tcp_flight),
};
