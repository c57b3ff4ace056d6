//! UDP: datagrams, which a link may drop, duplicate or reorder.

use crate::link::LinkMode;
use crate::socket::{Datagram, UdpState};
pub use crate::socket::{DATAGRAM_MAX, QUEUE_MAX};
use crate::state::{HostId, Network, Parked, Socket, SocketId};
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

impl Network {
    /// Binds a UDP socket on the current host.
    ///
    /// # Errors
    /// `AddrInUse` for a taken port; `AddrNotAvailable` for an address that
    /// is not the host's.
    pub fn udp_bind(&self, addr: SocketAddr) -> io::Result<SocketId> {
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        st.check_bind_ip(host, addr.ip())?;
        let port = if addr.port() == 0 {
            st.ephemeral_port(host, false)?
        } else {
            addr.port()
        };
        let local = SocketAddr::new(addr.ip(), port);
        if st.udp_bind_conflict(host, local) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("Address already in use: UDP {local}"),
            ));
        }
        let id = st.insert(Socket::Udp(UdpState {
            host,
            local,
            shown: None,
            peer: None,
            queue: Default::default(),
            waker: None,
            broadcast: false,
            ttl: 64,
            refused: false,
            arrivals: 0,
            read_cleared_at: None,
            seen: false,
            unseen_since_step: None,
            fd_watch_read: None,
        }));
        st.udp_add(host, port, id.index);
        Ok(id)
    }

    fn with_udp<R>(&self, id: SocketId, f: impl FnOnce(&mut UdpState) -> R) -> io::Result<R> {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Udp(u)) => Ok(f(u)),
            _ => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "sim: the socket is gone",
            )),
        }
    }

    /// The bound address.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_local_addr(&self, id: SocketId) -> io::Result<SocketAddr> {
        self.with_udp(id, |u| u.shown.unwrap_or(u.local))
    }

    /// The address the socket is bound to in the simulation (not the one
    /// it shows).
    pub(crate) fn with_udp_local(&self, id: SocketId) -> io::Result<SocketAddr> {
        self.with_udp(id, |u| u.local)
    }

    /// Makes `local_addr` answer `addr` (an adopted real socket's address,
    /// which the program saw before the simulation took the socket over).
    pub(crate) fn udp_show(&self, id: SocketId, addr: SocketAddr) -> io::Result<()> {
        self.with_udp(id, |u| u.shown = Some(addr))
    }

    /// The connected address.
    ///
    /// # Errors
    /// `NotConnected` when not connected.
    pub fn udp_peer_addr(&self, id: SocketId) -> io::Result<SocketAddr> {
        self.with_udp(id, |u| u.peer)?.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotConnected,
                "Transport endpoint is not connected",
            )
        })
    }

    /// Connects: sends default to `peer`, and only datagrams from it are
    /// received.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_connect(&self, id: SocketId, peer: SocketAddr) -> io::Result<()> {
        self.with_udp(id, |u| u.peer = Some(peer))
    }

    /// `SO_BROADCAST`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_set_broadcast(&self, id: SocketId, on: bool) -> io::Result<()> {
        self.with_udp(id, |u| u.broadcast = on)
    }

    /// `SO_BROADCAST`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_broadcast(&self, id: SocketId) -> io::Result<bool> {
        self.with_udp(id, |u| u.broadcast)
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_set_ttl(&self, id: SocketId, ttl: u32) -> io::Result<()> {
        self.with_udp(id, |u| u.ttl = ttl)
    }

    /// `IP_TTL`.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn udp_ttl(&self, id: SocketId) -> io::Result<u32> {
        self.with_udp(id, |u| u.ttl)
    }

    /// Sends a datagram. It is sent whole or not at all; the link decides
    /// whether it arrives, how late, and how often.
    ///
    /// # Errors
    /// `InvalidInput` for a datagram over 65507 bytes.
    pub fn udp_send_to(
        self: &Rc<Self>,
        id: SocketId,
        buf: &[u8],
        dst: SocketAddr,
    ) -> io::Result<usize> {
        if buf.len() > DATAGRAM_MAX {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "Message too long",
            ));
        }
        let (host, local) = self.with_udp(id, |u| (u.host, u.local))?;
        // A dual-stack IPv6 socket reaches an IPv4 address through its
        // mapped form (`::ffff:a.b.c.d`): on the wire it is IPv4.
        let dst = match dst {
            SocketAddr::V6(v6) => match v6.ip().to_ipv4_mapped() {
                Some(v4) => SocketAddr::new(v4.into(), v6.port()),
                None => dst,
            },
            SocketAddr::V4(_) => dst,
        };
        let src = if local.ip().is_unspecified()
            || (dst.ip().is_loopback() != local.ip().is_loopback())
        {
            let ip = if dst.ip().is_loopback() {
                dst.ip()
            } else {
                std::net::IpAddr::V4(self.host_addr(HostId(host)))
            };
            SocketAddr::new(ip, local.port())
        } else {
            local
        };
        // A datagram to an adopted real socket's real port on this host
        // goes to the simulated port it has now.
        let dst = match crate::std_net::udp_alias(dst.port()) {
            Some(port) if self.host_of_ip(HostId(host), dst.ip()) == Some(HostId(host)) => {
                SocketAddr::new(dst.ip(), port)
            }
            _ => dst,
        };
        let Some(to) = self.host_of_ip(HostId(host), dst.ip()) else {
            // Nobody has the address: the datagram goes nowhere, silently.
            self.note(&format!(
                "drop udp {}>{}: no such host",
                self.describe(&src),
                self.describe(&dst)
            ));
            return Ok(buf.len());
        };
        self.send_datagram(Datagram {
            msg: self.next_msg(),
            from_host: host,
            to_host: to.0,
            src,
            dst,
            data: buf.into(),
        });
        Ok(buf.len())
    }

    /// A trace note about datagram `d`: `<head> udp #<msg> <src>><dst><tail>`.
    fn note_udp(&self, head: &str, d: &Datagram, tail: &str) {
        self.note(&format!(
            "{head} udp #{} {}>{}{tail}",
            d.msg,
            self.describe(&d.src),
            self.describe(&d.dst)
        ));
    }

    /// What a draw about `d` is for, in the decision log: `datagram #17
    /// a:1>b:2` and `why`.
    fn datagram_draw(&self, d: &Datagram, why: &str) -> String {
        format!(
            "datagram #{} {}>{}{why}",
            d.msg,
            self.describe(&d.src),
            self.describe(&d.dst)
        )
    }

    pub(crate) fn send_datagram(self: &Rc<Self>, datagram: Datagram) {
        let (latency, mode, config) = self.link_draw(datagram.from_host, datagram.to_host, || {
            self.datagram_draw(&datagram, "")
        });
        match mode {
            LinkMode::Partitioned => {
                self.note_udp("lost", &datagram, ": partition");
                return;
            }
            LinkMode::Held => {
                crate::net::with_core(|core| {
                    core.story_held(datagram.msg, (datagram.src, datagram.dst), &datagram.data)
                });
                self.note_udp("hold", &datagram, "");
                self.park(datagram.from_host, datagram.to_host, Parked::Udp(datagram));
                return;
            }
            LinkMode::Up => {}
        }
        if config.udp_drop_rate > 0.0
            && self.chance(|| self.datagram_draw(&datagram, ": may it be dropped"))
                < config.udp_drop_rate
        {
            let tail = format!(" len={}: dropped", datagram.data.len());
            self.note_udp("lost", &datagram, &tail);
            return;
        }
        let copies = if config.udp_dup_rate > 0.0
            && self.chance(|| self.datagram_draw(&datagram, ": may it be duplicated"))
                < config.udp_dup_rate
        {
            self.note_udp("dup", &datagram, "");
            2
        } else {
            1
        };
        self.note_message_over(
            "send udp",
            datagram.msg,
            Some((datagram.src, datagram.dst)),
            Some(&datagram.data),
            Some(crate::net::least_latency_ns(
                datagram.from_host,
                datagram.to_host,
                &config,
            )),
        );
        let now = self.now_ns();
        // Each copy draws its own latency: datagrams reorder freely. An
        // earlier copy clones the datagram; the last one is the datagram
        // itself, moved whole (rebuilding it field by field stalled on
        // its addresses).
        for copy in 0..copies - 1 {
            let delay = self.copy_delay(copy, latency, &datagram, &config);
            let d = Datagram {
                data: datagram.data.clone(),
                ..datagram
            };
            self.dispatch_datagram(d, now, delay);
        }
        let delay = self.copy_delay(copies - 1, latency, &datagram, &config);
        self.dispatch_datagram(datagram, now, delay);
    }

    /// How long copy `copy` of `datagram` takes: the first copy the link's
    /// `latency`, a duplicate a draw of its own, either held back past
    /// every datagram sent within `latency_max` when the link reorders.
    fn copy_delay(
        self: &Rc<Self>,
        copy: u32,
        latency: u64,
        datagram: &Datagram,
        config: &crate::LinkConfig,
    ) -> u64 {
        let what = |why: &str| self.datagram_draw(datagram, why);
        let mut delay = if copy == 0 {
            latency
        } else {
            self.link_draw(datagram.from_host, datagram.to_host, || {
                what(" (its duplicate)")
            })
            .0
        };
        if config.udp_reorder_rate > 0.0
            && self.chance(|| what(": may it be held back")) < config.udp_reorder_rate
        {
            let extra = config.latency_max.as_nanos() as u64
                + (self.chance(|| what(": how long it is held back")) * 1_000_000.0) as u64
                + 1;
            self.note_udp("reorder", datagram, &format!(": {extra} ns late"));
            delay += extra;
        }
        delay
    }

    /// Sends one copy of a datagram on its way at `now_ns`, to arrive
    /// `delay_ns` later.
    fn dispatch_datagram(self: &Rc<Self>, d: Datagram, now_ns: u64, delay_ns: u64) {
        if delay_ns == 0 && d.from_host == d.to_host {
            // Loopback with nothing in the way: in the receiver's queue
            // at once, as the kernel puts it there within the send (a
            // recv right after a send finds it).
            self.deliver_datagram(d);
            return;
        }
        let to_host = d.to_host;
        let index = self.state.borrow_mut().udp_flight.put(d);
        let arg = delivery_arg(index, to_host);
        self.schedule_with(now_ns + delay_ns, "udp-deliver", &DELIVER_DATAGRAM, arg);
    }

    fn deliver_datagram(self: &Rc<Self>, d: Datagram) {
        let lost = |net: &Network, why: &str| net.note_udp("lost", &d, &format!(": {why}"));
        let mut st = self.state.borrow_mut();
        if !st.hosts[d.to_host as usize].alive {
            drop(st);
            lost(self, "the host is down");
            return;
        }
        let Some(index) = st.udp_socket_for(d.to_host, d.dst) else {
            // Port unreachable: a sender connected to this address hears of
            // it (only connected sockets do, as on Linux).
            let sender = st.udp_socket_for(d.from_host, d.src);
            let mut waker = None;
            let mut watcher = None;
            if let Some(index) = sender {
                let generation = st.sockets[index as usize].generation;
                if let Some(Socket::Udp(u)) = {
                    let id = SocketId {
                        net: st.net,
                        index,
                        generation,
                    };
                    st.get_mut(id)
                } {
                    if u.peer == Some(d.dst) {
                        u.refused = true;
                        u.arrivals += 1;
                        waker = u.waker.take();
                        watcher = u.fd_watch_read.take();
                    }
                }
            }
            drop(st);
            lost(self, "no socket on the port");
            if let Some(w) = waker {
                w.wake();
            }
            if let Some(w) = watcher {
                w.wake();
            }
            return;
        };
        let generation = st.sockets[index as usize].generation;
        let id = SocketId {
            net: st.net,
            index,
            generation,
        };
        let Some(Socket::Udp(u)) = st.get_mut(id) else {
            return;
        };
        if u.peer
            .is_some_and(|peer| peer != d.src && !(peer.ip().is_unspecified()))
        {
            // A connected socket takes only its peer's datagrams.
            drop(st);
            lost(self, "the socket is connected to another peer");
            return;
        }
        if u.queue.len() >= QUEUE_MAX {
            drop(st);
            lost(self, "receive buffer full");
            return;
        }
        drop(st);
        // The send line has the addresses: the message number pairs them.
        self.note_message("deliver udp", d.msg, None, None);
        let mut st = self.state.borrow_mut();
        let id = SocketId {
            net: st.net,
            index,
            generation,
        };
        let Some(Socket::Udp(u)) = st.get_mut(id) else {
            return;
        };
        u.queue.push_back((d.data, d.src));
        u.arrived(|| self.step());
        st.udp_receiver_guess[d.to_host as usize] = index;
    }

    /// Receives a datagram into `buf` (truncating a longer one, as UDP
    /// does); with `peek`, leaves it queued.
    pub fn udp_poll_recv_from(
        &self,
        id: SocketId,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        peek: bool,
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        let mut st = self.state.borrow_mut();
        let Some(Socket::Udp(u)) = st.get_mut(id) else {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "sim: the socket is gone",
            )));
        };
        if std::mem::take(&mut u.refused) {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                "Connection refused: nothing listens at the connected address",
            )));
        }
        // As tokio's receive: it tries only once the driver reported the
        // socket readable, and a try that finds nothing clears that.
        let popped = if u.sees(|| self.step()) {
            if peek {
                u.queue.front().cloned()
            } else {
                u.queue.pop_front()
            }
        } else {
            None
        };
        let Some((data, from)) = popped else {
            // Nothing to take: readiness is cleared (if it was set).
            u.seen = false;
            let unseen = u.arrived_unseen_at(|| self.step());
            if !unseen {
                u.waker = Some(cx.waker().clone());
            }
            crate::socket::wait_on("UdpSocket recv", u.local, u.peer.unwrap_or(u.local));
            drop(st);
            if unseen {
                // A datagram came during this step: the driver's next turn
                // reports it, after the tasks ready now (`yield_now`'s wait).
                self.wait_for_the_drivers_turn(cx.waker());
            }
            return Poll::Pending;
        };
        // An IPv6 socket sees an IPv4 sender in its mapped form, as a
        // dual-stack socket does on Linux.
        let from = match (u.local, from) {
            (SocketAddr::V6(_), SocketAddr::V4(v4)) => {
                SocketAddr::new(v4.ip().to_ipv6_mapped().into(), v4.port())
            }
            _ => from,
        };
        let n = buf.len().min(data.len());
        buf[..n].copy_from_slice(&data[..n]);
        Poll::Ready(Ok((n, from)))
    }

    /// Whether a datagram is waiting and tokio's driver has reported it
    /// (see `UdpState::sees`).
    pub fn udp_read_ready(&self, id: SocketId) -> bool {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Udp(u)) => {
                !u.queue.is_empty()
                    && u.read_cleared_at != Some(u.arrivals)
                    && u.sees(|| self.step())
            }
            _ => true,
        }
    }

    /// Clears read readiness until the next datagram (`try_io`).
    pub fn udp_clear_read(&self, id: SocketId) {
        if let Some(Socket::Udp(u)) = self.state.borrow_mut().get_mut(id) {
            u.read_cleared_at = Some(u.arrivals);
        }
    }

    /// Registers for the next datagram; for one that came during this
    /// step, for the driver's next turn, which reports it.
    pub fn udp_register_read(&self, id: SocketId, waker: &Waker) {
        let unseen = match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Udp(u)) if u.arrived_unseen_at(|| self.step()) => true,
            Some(Socket::Udp(u)) => {
                u.waker = Some(waker.clone());
                false
            }
            _ => false,
        };
        if unseen {
            self.wait_for_the_drivers_turn(waker);
        }
    }

    /// The runtime's step now (`Core::steps`): what "during this poll"
    /// means for what the driver has reported.
    fn step(&self) -> u64 {
        crate::net::with_core(|core| core.steps())
    }

    /// Wakes `waker` at the driver's next turn: after the tasks ready now,
    /// as a `yield_now` waits.
    fn wait_for_the_drivers_turn(&self, waker: &Waker) {
        crate::net::with_core(|core| core.yield_task(waker));
    }

    /// Closes the socket and frees its port.
    pub fn udp_close(&self, id: SocketId) {
        let mut st = self.state.borrow_mut();
        if let Some(Socket::Udp(u)) = st.get(id) {
            let (host, port) = (u.host, u.local.port());
            st.udp_remove(host, port, id.index);
            st.free_slot(id.index);
        }
    }
}

/// The argument of a datagram's delivery event: its flight entry's number
/// and the host it goes to (which `DELIVER_DATAGRAM`'s fetch reads without
/// touching the entry, still out of the cache).
fn delivery_arg(index: u64, to_host: u32) -> u64 {
    assert!(
        index <= u64::from(u32::MAX),
        "a flight entry's number is a u32"
    );
    index | u64::from(to_host) << 32
}

/// The delivery event of a datagram: `arg` is [`delivery_arg`]'s.
static DELIVER_DATAGRAM: sim_runtime::events::Handler = sim_runtime::events::Handler {
    run: |arg| {
        let index = arg & u64::from(u32::MAX);
        Network::deliver_in_flight(index, |st| &mut st.udp_flight, Network::deliver_datagram)
    },
    fetch: |arg| {
        // With thousands of hosts, the receiver's host row and socket have
        // left the cache since its last datagram: fetch them with the
        // entry, a delivery ahead (the socket by the last one's guess).
        crate::net::try_with_net(|net| {
            let Ok(st) = net.state.try_borrow() else {
                return;
            };
            st.udp_flight.prefetch(arg & u64::from(u32::MAX));
            let to_host = (arg >> 32) as usize;
            if let Some(host) = st.hosts.get(to_host) {
                sim_runtime::prefetch::value(host);
            }
            let guess = st.udp_receiver_guess.get(to_host).copied();
            if let Some(slot) = guess.and_then(|slot| st.sockets.get(slot as usize)) {
                sim_runtime::prefetch::value(slot);
            }
        });
    },
};
