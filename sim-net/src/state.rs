//! The network's shared state: hosts, the socket slab, links, the scripted
//! controls in force and the signal registrations. The network's core
//! (`net.rs`) and every protocol file (`tcp/`, `udp.rs`, `unix.rs`,
//! `control.rs`, `signal.rs`) work on it; it imports none of them.

use crate::flight::Flight;
use crate::link::{LinkConfig, LinkMode};
use crate::ports::PortMap;
pub use crate::socket::SocketId;
use crate::socket::{Datagram, Segment, TcpEnd, TcpListenerState, UdpState, UnixDatagramState};
use sim_runtime::rng::Rng;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::task::Waker;
use std::time::Duration;

/// A host of the simulation; `HostId(0)` is the implicit host `main`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

/// How a host answers connection attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ConnectPolicy {
    /// As its listeners say: accepted, or refused where none listens.
    #[default]
    Normal,
    /// Every connection attempt is refused (an RST comes back).
    Refuse,
    /// Connection attempts vanish: the client waits until its own timeout.
    BlackHole,
}

/// The first port handed out for ephemeral binds (the IANA dynamic range).
pub(crate) const EPHEMERAL_FIRST: u16 = 49152;

// A delivery reads a host it has not touched for a while: the fields it
// reads (`alive`, the UDP ports) come first, in the host's first cache
// line; names and the rarer tables follow.
#[repr(C, align(64))]
pub(crate) struct Host {
    pub(crate) alive: bool,
    /// Down because its process exited, not because it crashed: the
    /// machine is up, and its kernel answers with RSTs.
    pub(crate) exited: bool,
    pub(crate) next_port: u16,
    pub(crate) incarnation: u32,
    pub(crate) addr: Ipv4Addr,
    /// Whether some UDP port holds more than one socket (`udp_more` is
    /// not empty): kept here, in the first line, so that a delivery to a
    /// host whose ports hold one socket each reads no other line.
    pub(crate) udp_shared: bool,
    pub(crate) udp_ports: PortMap,
    pub(crate) tcp_ports: crate::port_holders::PortHolders,
    /// A UDP port's sockets after its first (which `udp_ports` keeps):
    /// others bound to addresses that do not overlap the first's.
    pub(crate) udp_more: crate::port_holders::PortHolders,
    pub(crate) name: String,
    /// Unix socket paths bound on the host: its own namespace.
    pub(crate) unix_paths: BTreeMap<std::path::PathBuf, u32>,
    /// Paths of Unix listeners that were dropped: their socket files.
    pub(crate) unix_stale: std::collections::BTreeSet<std::path::PathBuf>,
    pub(crate) policy: ConnectPolicy,
}

pub(crate) enum Socket {
    Listener(TcpListenerState),
    Tcp(TcpEnd),
    Udp(UdpState),
    UnixDatagram(UnixDatagramState),
}

pub(crate) struct Slot {
    pub(crate) generation: u32,
    pub(crate) socket: Option<Socket>,
    /// The runtime (scope of the simulation) that made the socket: once
    /// it shuts down, the socket's calls fail with tokio's shutdown error.
    pub(crate) scope: u16,
}

/// Something waiting on a link that is partitioned or held.
pub(crate) enum Parked {
    Tcp(Segment),
    Udp(Datagram),
}

/// A link that differs from the default: its own configuration, a fault,
/// or segments waiting on it. A link that is up with the default
/// configuration has no entry (so sending looks up an empty map in a run
/// without faults, however many hosts talk).
pub(crate) struct Link {
    /// `None`: the network's default configuration, as it is now.
    pub(crate) config: Option<LinkConfig>,
    pub(crate) mode: LinkMode,
    pub(crate) parked: VecDeque<Parked>,
}

pub(crate) struct NetState {
    /// The runtime (core) id of this network, in every `SocketId`.
    pub(crate) net: u16,
    pub(crate) hosts: Vec<Host>,
    pub(crate) names: BTreeMap<String, u32>,
    /// Names whose resolution fails (a scripted DNS fault).
    pub(crate) failing_names: std::collections::BTreeSet<String>,
    pub(crate) links: BTreeMap<(u32, u32), Link>,
    pub(crate) default_link: LinkConfig,
    pub(crate) sockets: Vec<Slot>,
    pub(crate) free: Vec<u32>,
    pub(crate) rng: Rng,
    /// Scripted controls in force (see `control.rs`).
    pub(crate) controls: Controls,
    /// The last message number handed out (`Network::next_msg`).
    pub(crate) next_msg: u64,
    /// The most latency a host's loopback has, in ns (0: immediate, as on
    /// a real machine; `Network::set_loopback` draws it for a swarm).
    pub(crate) loopback_latency_max_ns: u64,
    /// The chance a loopback datagram is dropped (a swarm draws it).
    pub(crate) loopback_udp_drop_rate: f64,
    /// The largest TCP segment a write is cut into, in bytes (0: writes
    /// leave whole, up to the 16 KiB segment); with a limit, each segment's
    /// size is drawn in `1..=limit`, so a frame arrives in pieces.
    pub(crate) segment_bytes_max: usize,
    /// Datagrams and segments sent and not yet delivered (`flight.rs`).
    pub(crate) udp_flight: Flight<Datagram>,
    pub(crate) tcp_flight: Flight<Segment>,
    /// By host (one each, from `add_host`), the socket slot its last
    /// datagram went to (`u32::MAX`: none yet): a guess, fetched with the
    /// host a delivery event before the next delivery to it (see
    /// `udp::DELIVER_DATAGRAM`). A wrong guess costs a wasted fetch, never
    /// a wrong delivery.
    pub(crate) udp_receiver_guess: Vec<u32>,
}

/// The network of one simulation.
pub struct Network {
    pub(crate) state: RefCell<NetState>,
    pub(crate) signals: RefCell<Signals>,
}

impl Drop for Network {
    /// The network ends with its runtime: whoever waits on one of its
    /// sockets (a task of another runtime, a future polled by hand) is
    /// woken, and its next call fails with tokio's shutdown error, as
    /// tokio's I/O driver wakes its resources when it shuts down.
    fn drop(&mut self) {
        let mut woken = Vec::new();
        for slot in self.state.get_mut().sockets.iter_mut() {
            match slot.socket.as_mut() {
                Some(Socket::Listener(l)) => {
                    woken.append(&mut l.wakers);
                    woken.extend(l.fd_watch_read.take());
                }
                Some(Socket::Tcp(end)) => {
                    woken.extend(end.read_waker.take());
                    woken.extend(end.write_waker.take());
                    woken.extend(end.fd_watch_read.take());
                    woken.extend(end.fd_watch_write.take());
                }
                Some(Socket::Udp(u)) => {
                    woken.extend(u.waker.take());
                    woken.extend(u.fd_watch_read.take());
                }
                Some(Socket::UnixDatagram(d)) => {
                    woken.extend(d.read_waker.take());
                    woken.append(&mut d.send_wakers);
                }
                None => {}
            }
        }
        woken.into_iter().for_each(Waker::wake);
    }
}

/// The first synthetic address: hosts get `10.0.0.1`, `10.0.0.2`, ...
pub(crate) const FIRST_ADDR: u32 = u32::from_be_bytes([10, 0, 0, 1]);

/// More hosts than this would run out of the `10.0.0.0/16` block we use.
pub(crate) const HOSTS_MAX: usize = 65_000;

impl NetState {
    pub(crate) fn add_host(&mut self, name: &str) -> HostId {
        assert!(
            !self.names.contains_key(name),
            "sim: a host named {name:?} already exists"
        );
        assert!(self.hosts.len() < HOSTS_MAX, "sim: too many hosts");
        let addr = Ipv4Addr::from(FIRST_ADDR + self.hosts.len() as u32);
        self.hosts.push(Host {
            name: name.to_string(),
            addr,
            alive: true,
            udp_shared: false,
            incarnation: 0,
            next_port: EPHEMERAL_FIRST,
            tcp_ports: crate::port_holders::PortHolders::default(),
            udp_more: crate::port_holders::PortHolders::default(),
            udp_ports: PortMap::default(),
            unix_paths: BTreeMap::new(),
            unix_stale: std::collections::BTreeSet::new(),
            policy: ConnectPolicy::Normal,
            exited: false,
        });
        self.udp_receiver_guess.push(u32::MAX);
        let id = self.hosts.len() as u32 - 1;
        self.names.insert(name.to_string(), id);
        HostId(id)
    }

    pub(crate) fn link_mut(&mut self, from: u32, to: u32) -> &mut Link {
        self.links.entry((from, to)).or_insert_with(|| Link {
            config: None,
            mode: LinkMode::Up,
            parked: VecDeque::new(),
        })
    }

    pub(crate) fn insert(&mut self, socket: Socket) -> SocketId {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                self.sockets.push(Slot {
                    generation: 0,
                    socket: None,
                    scope: 0,
                });
                self.sockets.len() as u32 - 1
            }
        };
        let slot = &mut self.sockets[index as usize];
        debug_assert!(slot.socket.is_none(), "a free slot is empty");
        slot.socket = Some(socket);
        slot.scope = sim_runtime::context::with_current(|core| core.current_scope()).unwrap_or(0);
        SocketId {
            net: self.net,
            index,
            generation: slot.generation,
        }
    }

    /// The runtime scope that made socket `id` (see [`Slot::scope`]).
    #[inline]
    pub(crate) fn scope_of(&self, id: SocketId) -> Option<u16> {
        self.get(id)?;
        Some(self.sockets[id.index as usize].scope)
    }

    /// Makes `id` a socket of `scope` (an accepted connection is its
    /// listener's runtime's, whichever runtime ran the handshake).
    pub(crate) fn set_scope(&mut self, id: SocketId, scope: u16) {
        if self.get(id).is_some() {
            self.sockets[id.index as usize].scope = scope;
        }
    }

    #[inline]
    pub(crate) fn get(&self, id: SocketId) -> Option<&Socket> {
        if id.net != self.net {
            return None;
        }
        self.sockets
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.socket.as_ref())
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, id: SocketId) -> Option<&mut Socket> {
        if id.net != self.net {
            return None;
        }
        self.sockets
            .get_mut(id.index as usize)
            .filter(|s| s.generation == id.generation)
            .and_then(|s| s.socket.as_mut())
    }

    pub(crate) fn free_slot(&mut self, index: u32) {
        let slot = &mut self.sockets[index as usize];
        if slot.socket.take().is_some() {
            slot.generation = slot.generation.wrapping_add(1);
            self.free.push(index);
        }
    }

    /// A free ephemeral port of `host` for `ports`, deterministic: the next
    /// one after the last handed out, skipping ports in use.
    pub(crate) fn ephemeral_port(&mut self, host: u32, tcp: bool) -> io::Result<u16> {
        let h = &mut self.hosts[host as usize];
        let span = u32::from(u16::MAX - EPHEMERAL_FIRST) + 1;
        // Bounded by the size of the range.
        for _ in 0..span {
            let port = h.next_port;
            h.next_port = if port == u16::MAX {
                EPHEMERAL_FIRST
            } else {
                port + 1
            };
            let used = if tcp {
                h.tcp_ports.contains(port)
            } else {
                h.udp_ports.contains_key(&port)
            };
            if !used {
                return Ok(port);
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            "sim: every ephemeral port of the host is in use",
        ))
    }

    /// The local address of the socket at slab `index`: a TCP listener or
    /// connection, or a UDP socket.
    fn local_of(&self, index: u32) -> Option<SocketAddr> {
        match self.sockets.get(index as usize)?.socket.as_ref()? {
            Socket::Listener(l) => Some(l.local),
            Socket::Tcp(end) => Some(end.local),
            Socket::Udp(u) => Some(u.local),
            Socket::UnixDatagram(_) => None,
        }
    }

    /// Whether binding `local` conflicts with one of `holders`, the
    /// sockets bound to its port (see `port_holders::overlap`).
    fn bind_conflict(&self, mut holders: impl Iterator<Item = u32>, local: SocketAddr) -> bool {
        holders.any(|index| {
            self.local_of(index)
                .is_some_and(|bound| crate::port_holders::overlap(bound.ip(), local.ip()))
        })
    }

    /// Which of `holders` (in bind order) a connection or datagram to
    /// `dst` reaches: the one bound to `dst`'s own address, else to an
    /// unspecified address that covers it, else to another loopback
    /// address (see `port_holders::match_rank`); the first bound among
    /// equals.
    fn reached(&self, holders: impl Iterator<Item = u32>, dst: SocketAddr) -> Option<u32> {
        holders
            .filter_map(|index| {
                let bound = self.local_of(index)?;
                crate::port_holders::match_rank(bound.ip(), dst.ip()).map(|rank| (rank, index))
            })
            .fold(None, |best: Option<(u8, u32)>, (rank, index)| match best {
                Some((top, _)) if top >= rank => best,
                _ => Some((rank, index)),
            })
            .map(|(_, index)| index)
    }

    /// Whether binding `local` on `host` conflicts with a TCP socket bound
    /// there already.
    pub(crate) fn tcp_bind_conflict(&self, host: u32, local: SocketAddr) -> bool {
        let holders = self.hosts[host as usize].tcp_ports.holders(local.port());
        self.bind_conflict(holders.iter().copied(), local)
    }

    /// The slab indexes of `host`'s TCP listeners on `port`, in bind order.
    pub(crate) fn tcp_listeners(&self, host: u32, port: u16) -> impl Iterator<Item = u32> + '_ {
        self.hosts[host as usize]
            .tcp_ports
            .holders(port)
            .iter()
            .copied()
            .filter(|&index| {
                matches!(
                    self.sockets[index as usize].socket,
                    Some(Socket::Listener(_))
                )
            })
    }

    /// The listener of `host` a connection to `dst` reaches.
    pub(crate) fn tcp_listener_for(&self, host: u32, dst: SocketAddr) -> Option<u32> {
        self.reached(self.tcp_listeners(host, dst.port()), dst)
    }

    /// The UDP sockets of `host` bound to `port`: the first, then the
    /// others.
    fn udp_holders(&self, host: u32, port: u16) -> impl Iterator<Item = u32> + '_ {
        let h = &self.hosts[host as usize];
        h.udp_ports
            .get(&port)
            .copied()
            .into_iter()
            .chain(h.udp_more.holders(port).iter().copied())
    }

    /// Whether binding `local` on `host` conflicts with a UDP socket bound
    /// there already.
    pub(crate) fn udp_bind_conflict(&self, host: u32, local: SocketAddr) -> bool {
        self.bind_conflict(self.udp_holders(host, local.port()), local)
    }

    /// The UDP socket of `host` a datagram to `dst` reaches: with one
    /// socket on the port (the usual case, one lookup), that one, whatever
    /// its address; otherwise as `reached` picks.
    #[inline]
    pub(crate) fn udp_socket_for(&self, host: u32, dst: SocketAddr) -> Option<u32> {
        let h = &self.hosts[host as usize];
        let first = h.udp_ports.get(&dst.port()).copied()?;
        if !h.udp_shared || h.udp_more.holders(dst.port()).is_empty() {
            return Some(first);
        }
        self.reached(self.udp_holders(host, dst.port()), dst)
    }

    /// Binds the UDP socket at `index` to `port` on `host`: the port's
    /// first socket, or one more.
    pub(crate) fn udp_add(&mut self, host: u32, port: u16, index: u32) {
        let h = &mut self.hosts[host as usize];
        if h.udp_ports.contains_key(&port) {
            h.udp_more.add(port, index);
            h.udp_shared = true;
        } else {
            h.udp_ports.insert(port, index);
        }
    }

    /// Unbinds the UDP socket at `index` from `port` on `host`; the next
    /// socket on the port, if any, becomes its first.
    pub(crate) fn udp_remove(&mut self, host: u32, port: u16, index: u32) {
        let h = &mut self.hosts[host as usize];
        if h.udp_ports.get(&port) != Some(&index) {
            h.udp_more.remove(port, index);
        } else {
            h.udp_ports.remove(&port);
            if let Some(&next) = h.udp_more.holders(port).first() {
                h.udp_more.remove(port, next);
                h.udp_ports.insert(port, next);
            }
        }
        h.udp_shared = !h.udp_more.is_empty();
    }

    /// Checks that `ip` can be bound on `host`.
    pub(crate) fn check_bind_ip(&self, host: u32, ip: IpAddr) -> io::Result<()> {
        let own = match ip {
            IpAddr::V4(v4) => v4 == self.hosts[host as usize].addr,
            IpAddr::V6(_) => false,
        };
        if ip.is_loopback() || ip.is_unspecified() || own {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::AddrNotAvailable,
                format!(
                    "Cannot assign requested address: {ip} is not an address of host {:?}",
                    self.hosts[host as usize].name
                ),
            ))
        }
    }
}

/// The address a host uses to reach `dst`: loopback for its own loopback,
/// its synthetic address otherwise.
pub(crate) fn source_ip(st: &NetState, host: u32, dst: IpAddr) -> IpAddr {
    if dst.is_loopback() {
        dst
    } else {
        IpAddr::V4(st.hosts[host as usize].addr)
    }
}

// ----- scripted controls -----------------------------------------------------

/// The two ends of a connection, as a predicate sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnEnds {
    /// The host that sends (or, for [`Network::reset_now`], one end).
    pub from: HostId,
    /// The host at the other end.
    pub to: HostId,
    /// The sender's address.
    pub src: SocketAddr,
    /// The receiver's address.
    pub dst: SocketAddr,
}

/// A predicate over a connection's ends and the bytes of one send (empty
/// for [`Network::reset_now`]).
pub type ConnPredicate = Rc<dyn Fn(&ConnEnds, &[u8]) -> bool>;

/// A name resolved over several hosts in turn.
pub(crate) struct Route {
    pub(crate) hosts: Vec<HostId>,
    pub(crate) next: usize,
}

/// The scripted controls in force.
#[derive(Default)]
pub(crate) struct Controls {
    /// `(from, to)` -> bytes that may still pass before the link holds.
    pub(crate) hold_after: BTreeMap<(u32, u32), u64>,
    /// Standing reset rules, by name, in the order they were set.
    pub(crate) reset_rules: Vec<(String, ConnPredicate)>,
    /// `(host, port)`s whose connections complete and are never answered.
    pub(crate) silent: BTreeSet<(u32, u16)>,
    /// Host -> the most bytes per second its TCP reads get.
    pub(crate) read_rate: BTreeMap<u32, u64>,
    /// Name -> how long its resolution takes.
    pub(crate) dns_delay: BTreeMap<String, Duration>,
    /// Name -> the hosts it resolves to, one per resolution.
    pub(crate) routes: BTreeMap<String, Route>,
}

/// What a throttled read may take now: a tenth of a second's worth, or
/// the time it may go on.
pub(crate) enum Throttle {
    /// No throttle, or bytes may be read now: at most this many.
    Take(usize),
    /// Nothing until this true time.
    WaitUntil(u64),
}

impl Controls {
    /// What a read of `wanted` bytes on `host` may take at `now_ns`, when
    /// its last throttled read left `next_ns` as the earliest next one.
    pub(crate) fn read_take(
        &self,
        host: u32,
        now_ns: u64,
        next_ns: u64,
        wanted: usize,
    ) -> Throttle {
        if self.read_rate.is_empty() {
            return Throttle::Take(wanted);
        }
        let Some(&rate) = self.read_rate.get(&host) else {
            return Throttle::Take(wanted);
        };
        if next_ns > now_ns {
            return Throttle::WaitUntil(next_ns);
        }
        // A tenth of a second's worth at a time, at least one byte.
        Throttle::Take(wanted.min((rate / 10).max(1) as usize))
    }

    /// The earliest true time of the next read on `host`, after one of `n`
    /// bytes at `now_ns`.
    pub(crate) fn read_next(&self, host: u32, now_ns: u64, n: usize) -> u64 {
        match self.read_rate.get(&host) {
            Some(&rate) => now_ns + (n as u128 * 1_000_000_000 / rate as u128) as u64,
            None => now_ns,
        }
    }
}

// ----- signals ---------------------------------------------------------------

pub(crate) struct SignalSlot {
    pub(crate) host: u32,
    pub(crate) signum: i32,
    pub(crate) pending: bool,
    pub(crate) waker: Option<Waker>,
}

/// Signal state of the network: registrations and handled signals.
#[derive(Default)]
pub(crate) struct Signals {
    pub(crate) slots: Vec<(u32, Option<SignalSlot>)>,
    pub(crate) free: Vec<u32>,
    pub(crate) handled: BTreeSet<(u32, i32)>,
}

impl Signals {
    pub(crate) fn forget_host(&mut self, host: u32) {
        self.handled.retain(|(h, _)| *h != host);
        for (index, (generation, slot)) in self.slots.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|s| s.host == host) {
                *slot = None;
                *generation = generation.wrapping_add(1);
                self.free.push(index as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Host;
    use std::mem::offset_of;

    /// What a delivery reads of a host it has not touched for a while
    /// (`alive`, `udp_shared`, the inline lanes of the UDP ports) lies in
    /// the host's first cache line.
    #[test]
    fn a_delivery_reads_one_line_of_its_host() {
        assert_eq!(std::mem::align_of::<Host>(), 64);
        assert!(offset_of!(Host, alive) < 64);
        assert!(offset_of!(Host, udp_shared) < 64);
        // The PortMap's length, flag and four inline lanes: 36 bytes.
        assert!(offset_of!(Host, udp_ports) + 36 <= 64);
    }
}
