//! Scripted controls: faults finer than a link's up, cut or held. Each is
//! set by the harness (`tokio::sim::Fault`), noted in the trace when it is
//! set and each time it acts, and cleared by [`Network::clear_controls`]
//! (which the liveness phase calls through `Fault::HealAll`).
//!
//! - hold a direction after N more bytes ("request processed, response
//!   lost");
//! - reset connections by a predicate on their ends, now or when one sends
//!   bytes that match;
//! - a silent port: connections complete, nobody ever reads or answers;
//! - a throttled reader: a host's TCP reads get at most so many bytes per
//!   second, so its peers' writers feel the backpressure;
//! - DNS: a name resolves late;
//! - routes: one name over several hosts, one host per resolution (so per
//!   connection), changeable over time.

use crate::socket::{Phase, Segment, SegmentKind};
pub use crate::state::{ConnEnds, ConnPredicate};
use crate::state::{HostId, Network, Route, Socket, SocketId};
use std::collections::BTreeSet;
use std::net::IpAddr;
use std::rc::Rc;
use std::time::Duration;

impl Network {
    /// Lets `bytes` more bytes of TCP data through `from -> to`, then holds
    /// the link (as [`Network::hold`]) until it is released. With 0 it
    /// holds at once.
    pub fn hold_after_bytes(self: &Rc<Self>, from: HostId, to: HostId, bytes: u64) {
        if bytes == 0 {
            self.hold(from, to);
            return;
        }
        self.note_fault(
            &[from, to],
            &format!(
                "hold {}->{} after {bytes} bytes",
                self.host_name(from),
                self.host_name(to)
            ),
        );
        self.state
            .borrow_mut()
            .controls
            .hold_after
            .insert((from.0, to.0), bytes);
    }

    /// Whether any link has a hold budget (see `spend_hold_budget`).
    #[inline]
    pub(crate) fn any_hold_budget(&self) -> bool {
        !self.state.borrow().controls.hold_after.is_empty()
    }

    /// Applies a byte budget to a data segment about to cross its link:
    /// the segment unchanged (no budget, or it fits), or what fits and the
    /// rest, with the link held between them. Its caller asks
    /// [`Network::any_hold_budget`] first, so most runs never move the
    /// segment through here.
    pub(crate) fn spend_hold_budget(self: &Rc<Self>, segment: Segment) -> Option<Segment> {
        let SegmentKind::Data {
            bytes: ref data, ..
        } = segment.kind
        else {
            return Some(segment);
        };
        let key = (segment.from_host, segment.to_host);
        let budget = self.state.borrow().controls.hold_after.get(&key).copied();
        let Some(budget) = budget else {
            return Some(segment);
        };
        let len = data.len() as u64;
        if len < budget {
            self.state
                .borrow_mut()
                .controls
                .hold_after
                .insert(key, budget - len);
            return Some(segment);
        }
        // The budget runs out in this segment: what fits goes, the link
        // holds, and the rest waits behind it.
        self.state.borrow_mut().controls.hold_after.remove(&key);
        let SegmentKind::Data {
            msg,
            bytes: data,
            ack,
        } = segment.kind
        else {
            unreachable!("matched above")
        };
        let (first, rest) = data.split_at(budget as usize);
        let base = Segment {
            kind: SegmentKind::Data {
                msg,
                bytes: first.into(),
                ack,
            },
            ..segment
        };
        let rest = crate::payload::Payload::from(rest);
        let (from, to, src, dst, from_id, to_id) = (
            base.from_host,
            base.to_host,
            base.src,
            base.dst,
            base.from,
            base.to,
        );
        self.send_segment(base);
        self.hold(HostId(from), HostId(to));
        if !rest.is_empty() {
            self.send_segment(Segment {
                from_host: from,
                to_host: to,
                from: from_id,
                to: to_id,
                src,
                dst,
                kind: SegmentKind::Data {
                    msg,
                    bytes: rest,
                    ack,
                },
            });
        }
        None
    }

    /// Resets, now, every established TCP connection whose ends `matches`
    /// accepts (seen from either end; bytes empty). Both ends see
    /// `ConnectionReset` (once, after what had arrived), as if a middlebox
    /// had sent each an RST. Returns how many connections were reset.
    pub fn reset_now(self: &Rc<Self>, name: &str, matches: &ConnPredicate) -> usize {
        let ends: Vec<(SocketId, ConnEnds, Option<SocketId>)> = {
            let st = self.state.borrow();
            st.sockets
                .iter()
                .enumerate()
                .filter_map(|(index, slot)| match &slot.socket {
                    Some(Socket::Tcp(end))
                        if end.phase == Phase::Established
                            && !end.reset
                            && !end.closed
                            && end.unix.is_none() =>
                    {
                        let id = SocketId {
                            net: st.net,
                            index: index as u32,
                            generation: slot.generation,
                        };
                        let to = self
                            .host_of_ip(HostId(end.host), end.peer.ip())
                            .unwrap_or(HostId(end.host));
                        let view = ConnEnds {
                            from: HostId(end.host),
                            to,
                            src: end.local,
                            dst: end.peer,
                        };
                        Some((id, view, end.peer_id))
                    }
                    _ => None,
                })
                .collect()
        };
        let mut count = 0;
        let mut done = BTreeSet::new();
        for (id, view, peer) in ends {
            if done.contains(&id) || !matches(&view, &[]) {
                continue;
            }
            self.note(&format!(
                "reset {}<>{}: {name}",
                self.describe(&view.src),
                self.describe(&view.dst)
            ));
            self.abort_end(id);
            done.insert(id);
            if let Some(peer) = peer {
                self.abort_end(peer);
                done.insert(peer);
            }
            count += 1;
        }
        count
    }

    /// From now on, a TCP data segment whose ends and bytes `matches`
    /// accepts resets its connection instead of arriving (both ends see
    /// `ConnectionReset`). Until [`Network::clear_controls`].
    pub fn reset_when(&self, name: &str, matches: ConnPredicate) {
        self.note(&format!("reset rule set: {name}"));
        self.state
            .borrow_mut()
            .controls
            .reset_rules
            .push((name.to_string(), matches));
    }

    /// Whether a reset rule takes this data segment: if so, its connection
    /// is reset and the segment is gone.
    pub(crate) fn reset_by_rule(self: &Rc<Self>, segment: &Segment) -> bool {
        let SegmentKind::Data {
            bytes: ref data, ..
        } = segment.kind
        else {
            return false;
        };
        let rules: Vec<(String, ConnPredicate)> = {
            let st = self.state.borrow();
            if st.controls.reset_rules.is_empty() {
                return false;
            }
            st.controls.reset_rules.clone()
        };
        let view = ConnEnds {
            from: HostId(segment.from_host),
            to: HostId(segment.to_host),
            src: segment.src,
            dst: segment.dst,
        };
        let Some((name, _)) = rules.iter().find(|(_, rule)| rule(&view, data)) else {
            return false;
        };
        self.note(&format!(
            "reset {}>{} len={}: rule {name}",
            self.describe(&segment.src),
            self.describe(&segment.dst),
            data.len()
        ));
        {
            let mut st = self.state.borrow_mut();
            if let Some(Socket::Tcp(sender)) = st.get_mut(segment.from) {
                sender.in_flight -= data.len();
            }
        }
        self.abort_end(segment.from);
        if let Some(to) = segment.to {
            self.abort_end(to);
        }
        true
    }

    /// One end of a connection is reset, as by an RST: it keeps what it
    /// received, and the reset's error goes once to its first read (after
    /// those bytes), write or `SO_ERROR`, as on Linux.
    fn abort_end(&self, id: SocketId) {
        let mut st = self.state.borrow_mut();
        if let Some(Socket::Tcp(end)) = st.get_mut(id) {
            if end.phase == Phase::Established {
                end.reset = true;
                end.wake_all();
            }
        }
    }

    /// Makes `host`'s `port` silent (`silent`) or answer again: connections
    /// to it complete, as if a process had accepted them, but nobody reads
    /// or writes. Clients see their own timeouts only.
    pub fn set_silent(&self, host: HostId, port: u16, silent: bool) {
        self.note_fault(
            &[host],
            &format!(
                "port {}:{port} {}",
                self.host_name(host),
                if silent { "silent" } else { "answers" }
            ),
        );
        let mut st = self.state.borrow_mut();
        if silent {
            st.controls.silent.insert((host.0, port));
        } else {
            st.controls.silent.remove(&(host.0, port));
        }
    }

    pub(crate) fn is_silent(&self, host: u32, port: u16) -> bool {
        let st = self.state.borrow();
        !st.controls.silent.is_empty() && st.controls.silent.contains(&(host, port))
    }

    /// Throttles `host`'s TCP reads to `bytes_per_s` (or lifts it, with
    /// `None`): a slow consumer. What it does not read fills its receive
    /// window, and its peers' writes wait.
    ///
    /// # Panics
    /// For a rate of zero (a reader that never reads is a silent port).
    pub fn set_read_rate(&self, host: HostId, bytes_per_s: Option<u64>) {
        assert!(
            bytes_per_s != Some(0),
            "sim: a read throttle of 0 bytes/s never reads; use a silent port instead"
        );
        self.note_fault(
            &[host],
            &format!(
                "throttle reads of {} to {}",
                self.host_name(host),
                bytes_per_s.map_or("no limit".to_string(), |r| format!("{r} bytes/s"))
            ),
        );
        let mut st = self.state.borrow_mut();
        match bytes_per_s {
            Some(rate) => st.controls.read_rate.insert(host.0, rate),
            None => st.controls.read_rate.remove(&host.0),
        };
    }

    /// Makes `name`'s resolution take `delay` (zero: answer at once again)
    /// for tokio's resolvers (`lookup_host`, and connects and sends by
    /// name). Blocking resolvers (std's, libc's `getaddrinfo`) answer at
    /// once: a blocked thread cannot wait in virtual time.
    pub fn set_dns_delay(&self, name: &str, delay: Duration) {
        self.note(&format!("dns {name} delay {delay:?}"));
        let mut st = self.state.borrow_mut();
        if delay.is_zero() {
            st.controls.dns_delay.remove(name);
        } else {
            st.controls.dns_delay.insert(name.to_string(), delay);
        }
    }

    /// How long resolving `name` takes.
    pub fn dns_delay(&self, name: &str) -> Duration {
        let st = self.state.borrow();
        if st.controls.dns_delay.is_empty() {
            return Duration::ZERO;
        }
        st.controls
            .dns_delay
            .get(name)
            .copied()
            .unwrap_or(Duration::ZERO)
    }

    /// Routes `name` over `hosts`: each resolution answers with the next
    /// of them in turn (so each connection goes to one), until the route
    /// changes. An empty list removes the route.
    ///
    /// # Panics
    /// When `name` is a host's own name.
    pub fn set_route(&self, name: &str, hosts: &[HostId]) {
        assert!(
            self.host_id(name).is_none(),
            "sim: a route named {name:?} would hide the host of that name; give it another name"
        );
        let names: Vec<String> = hosts.iter().map(|h| self.host_name(*h)).collect();
        self.note(&format!("route {name} -> [{}]", names.join(",")));
        let mut st = self.state.borrow_mut();
        if hosts.is_empty() {
            st.controls.routes.remove(name);
            return;
        }
        let next = st.controls.routes.get(name).map_or(0, |r| r.next);
        st.controls.routes.insert(
            name.to_string(),
            Route {
                hosts: hosts.to_vec(),
                next,
            },
        );
    }

    /// The hosts behind route `name` (none: no such route).
    pub fn route_hosts(&self, name: &str) -> Vec<HostId> {
        self.state
            .borrow()
            .controls
            .routes
            .get(name)
            .map_or(Vec::new(), |r| r.hosts.clone())
    }

    /// The next address of route `name`, if it is one.
    pub(crate) fn resolve_route(&self, name: &str) -> Option<IpAddr> {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let route = st.controls.routes.get_mut(name)?;
        let host = route.hosts[route.next % route.hosts.len()];
        route.next = route.next.wrapping_add(1);
        Some(IpAddr::V4(st.hosts[host.0 as usize].addr))
    }

    /// Lifts every scripted control: byte budgets, reset rules, silent
    /// ports, read throttles, DNS delays. Routes stay (they are where a
    /// name points, not a fault).
    pub fn clear_controls(&self) {
        let mut st = self.state.borrow_mut();
        let c = &mut st.controls;
        let any = !(c.hold_after.is_empty()
            && c.reset_rules.is_empty()
            && c.silent.is_empty()
            && c.read_rate.is_empty()
            && c.dns_delay.is_empty());
        c.hold_after.clear();
        c.reset_rules.clear();
        c.silent.clear();
        c.read_rate.clear();
        c.dns_delay.clear();
        drop(st);
        if any {
            self.note("scripted controls cleared");
        }
    }
}
