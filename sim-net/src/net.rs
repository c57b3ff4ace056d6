//! The network of one simulation: hosts, sockets, links, and the faults a
//! test can inject. It lives in the runtime as an extension (one per
//! simulation) and schedules every delivery on the runtime's event queue.

use crate::flight::Flight;
use crate::link::{LinkConfig, LinkMode};
pub use crate::state::{ConnectPolicy, HostId, Network, SocketId};
use crate::state::{NetState, Parked, Socket, EPHEMERAL_FIRST, FIRST_ADDR};
use sim_runtime::decision;
use sim_runtime::rng::Rng;
use sim_runtime::trace::Message;
use sim_runtime::{Core, EventKind, Label};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

/// Runs `f` on the current simulation's network (created on first use).
///
/// # Panics
/// Outside a runtime, with tokio's message.
#[track_caller]
pub fn with_net<R>(f: impl FnOnce(&Rc<Network>) -> R) -> R {
    let net = sim_runtime::context::with_current(|core| {
        assert!(
            core.io_enabled(),
            "A Tokio 1.x context was found, but IO is disabled. Call `enable_io` on the runtime \
             builder to enable IO."
        );
        core.extension(|| Network::new(core))
    });
    match net {
        Some(net) => f(&net),
        None => sim_runtime::context::no_runtime(),
    }
}

/// As [`with_net`], or `None` outside a runtime (for destructors).
#[inline]
pub fn try_with_net<R>(f: impl FnOnce(&Rc<Network>) -> R) -> Option<R> {
    let net = sim_runtime::context::with_current(|core| core.extension(|| Network::new(core)))?;
    Some(f(&net))
}

/// The network of the simulation running on this thread, for a call on a
/// socket that already exists: the current runtime's, or outside any
/// runtime's context (a socket used or dropped after `block_on` returned,
/// as tokio allows) the thread's live simulation.
///
/// # Panics
/// With no simulation alive on the thread, with tokio's message.
pub fn with_socket_net<R>(f: impl FnOnce(&Rc<Network>) -> R) -> R {
    match try_with_socket_net(f) {
        Some(r) => r,
        None => sim_runtime::context::no_runtime(),
    }
}

/// As [`with_socket_net`]; `None` with no simulation alive on the thread.
pub fn try_with_socket_net<R>(f: impl FnOnce(&Rc<Network>) -> R) -> Option<R> {
    if sim_runtime::context::current_id().is_some() {
        return try_with_net(f);
    }
    let core = sim_runtime::context::alive()
        .into_iter()
        .find(|core| !core.is_shut_down())?;
    let _enter = sim_runtime::context::Enter::new(core.clone());
    let net = core.extension(|| Network::new(&core));
    Some(f(&net))
}

/// tokio's error for I/O on a resource whose runtime is shutting down or
/// gone (`tokio::runtime::is_rt_shutdown_err` recognizes it).
pub const SHUTDOWN_MESSAGE: &str = "A Tokio 1.x context was found, but it is being shutdown.";

/// What a socket call answers when its runtime is gone (shut down,
/// dropped, or not reachable from this thread): tokio's shutdown error.
pub trait Gone {
    /// The answer.
    fn gone() -> Self;
}

fn shutdown_error() -> io::Error {
    io::Error::other(SHUTDOWN_MESSAGE)
}

impl<T> Gone for io::Result<T> {
    fn gone() -> Self {
        Err(shutdown_error())
    }
}

impl<T> Gone for std::task::Poll<io::Result<T>> {
    fn gone() -> Self {
        std::task::Poll::Ready(Err(shutdown_error()))
    }
}

impl<T> Gone for Option<T> {
    fn gone() -> Self {
        None
    }
}

impl Gone for () {
    fn gone() -> Self {}
}

/// Runs `f` on the network that holds socket `id`: the current runtime's,
/// or the runtime of `id` alive on this thread (a socket used outside its
/// runtime's context, as tokio allows while the runtime lives). When that
/// runtime is shut down or gone, `f` does not run and the answer is
/// tokio's shutdown error ([`Gone`]).
pub fn with_socket<R: Gone>(id: SocketId, f: impl FnOnce(&Rc<Network>) -> R) -> R {
    socket_call(id, f, R::gone)
}

/// Closes socket `id` (a drop): as [`try_with_socket`], also after its
/// runtime shut down, while the simulation lives (a runtime's shutdown
/// drops its tasks, and the sockets they held close, as their descriptors
/// do on tokio).
pub fn release_socket<R>(id: SocketId, f: impl FnOnce(&Rc<Network>) -> R) -> Option<R> {
    let core = if sim_runtime::context::current_id() == Some(id.net) {
        None
    } else {
        Some(sim_runtime::context::lookup(id.net).filter(|core| !core.is_shut_down())?)
    };
    let _enter = core.map(sim_runtime::context::Enter::new);
    try_with_net(f)
}

/// As [`with_socket`]; `None` when the socket's runtime is gone.
pub fn try_with_socket<R>(id: SocketId, f: impl FnOnce(&Rc<Network>) -> R) -> Option<R> {
    socket_call(id, |net| Some(f(net)), || None)
}

/// `f` on the network of socket `id`, or `gone()` when the socket's
/// runtime is gone. Returns `f`'s value as it is, not in an `Option` to
/// unwrap: the copy out of one cost a stall on each call (a socket
/// address's bytes moved at an odd offset, which the CPU could not
/// forward from the stores that wrote them).
#[inline]
fn socket_call<R>(id: SocketId, f: impl FnOnce(&Rc<Network>) -> R, gone: impl FnOnce() -> R) -> R {
    let core = if sim_runtime::context::current_id() == Some(id.net) {
        None
    } else {
        match sim_runtime::context::lookup(id.net).filter(|core| !core.is_shut_down()) {
            Some(core) => Some(core),
            None => return gone(),
        }
    };
    let _enter = core.clone().map(sim_runtime::context::Enter::new);
    let Some(net) =
        sim_runtime::context::with_current(|core| core.extension(|| Network::new(core)))
    else {
        return gone();
    };
    // A socket of a runtime that was shut down (another runtime of the
    // same simulation may be the current one).
    let scope = net.state.borrow().scope_of(id);
    if scope.is_some_and(|scope| with_core(|core| core.scope_shut_down(scope))) {
        return gone();
    }
    f(&net)
}

/// The least latency a message over `from -> to` can have (loopback's is
/// 0): how late a delivery was is counted from it.
pub(crate) fn least_latency_ns(from: u32, to: u32, config: &crate::LinkConfig) -> u64 {
    if from == to {
        0
    } else {
        config.latency_min.as_nanos().min(u128::from(u64::MAX)) as u64
    }
}

#[inline]
pub(crate) fn with_core<R>(f: impl FnOnce(&Core) -> R) -> R {
    sim_runtime::context::with_current(f).expect("the network is used inside its runtime")
}

impl Network {
    fn new(core: &Core) -> Network {
        // libc's getaddrinfo (the standard library's resolver) answers with
        // the simulation's hosts during runs.
        sim_os::interpose::set_resolver(|name| try_with_net(|net| net.resolve(name)));
        // A signal the process sends itself goes to the current host when
        // it can take it: a handler is registered, or it is a harness host
        // (the implicit host of a plain test leaves it to the real process).
        sim_os::interpose::set_signaller(|sig| {
            try_with_net(|net| {
                let host = net.current_host();
                if host.0 == 0 && !net.signal_handled(host, sig) {
                    return false;
                }
                net.signal(host, sig);
                true
            })
            .unwrap_or(false)
        });
        let mut state = NetState {
            net: core.id(),
            hosts: Vec::new(),
            names: BTreeMap::new(),
            failing_names: std::collections::BTreeSet::new(),
            links: BTreeMap::new(),
            default_link: LinkConfig::default(),
            sockets: Vec::new(),
            free: Vec::new(),
            rng: Rng::new(core.config().seed, 3),
            controls: Default::default(),
            next_msg: 0,
            loopback_latency_max_ns: 0,
            loopback_udp_drop_rate: 0.0,
            segment_bytes_max: 0,
            udp_flight: Default::default(),
            tcp_flight: Default::default(),
            udp_receiver_guess: Vec::new(),
        };
        let main = state.add_host("main");
        core.name_address(IpAddr::V4(state.hosts[main.0 as usize].addr), "main");
        Network {
            state: RefCell::new(state),
            signals: RefCell::new(crate::state::Signals::default()),
        }
    }

    /// Registers a host; returns its id. Names are unique.
    ///
    /// # Panics
    /// When the name is taken or there are too many hosts.
    #[track_caller]
    pub fn add_host(&self, name: &str) -> HostId {
        let (id, ip) = {
            let mut st = self.state.borrow_mut();
            let id = st.add_host(name);
            (id, st.hosts[id.0 as usize].addr)
        };
        with_core(|core| {
            core.set_node_name(id.0, name);
            core.name_address(IpAddr::V4(ip), name);
        });
        id
    }

    /// The host of the running task.
    pub fn current_host(&self) -> HostId {
        HostId(with_core(|core| core.current_node()))
    }

    /// A host by name.
    pub fn host_id(&self, name: &str) -> Option<HostId> {
        self.state.borrow().names.get(name).map(|i| HostId(*i))
    }

    /// How many hosts there are (host 0, the implicit `main`, included).
    pub fn host_count(&self) -> u32 {
        self.state.borrow().hosts.len() as u32
    }

    /// A host's name.
    pub fn host_name(&self, host: HostId) -> String {
        self.state.borrow().hosts[host.0 as usize].name.clone()
    }

    /// A host's address.
    pub fn host_addr(&self, host: HostId) -> Ipv4Addr {
        self.state.borrow().hosts[host.0 as usize].addr
    }

    /// Whether a host is up.
    pub fn is_alive(&self, host: HostId) -> bool {
        self.state.borrow().hosts[host.0 as usize].alive
    }

    /// Sets the default link configuration (for links without their own).
    pub fn set_default_link(&self, config: LinkConfig) {
        config.validate();
        self.state.borrow_mut().default_link = config;
    }

    /// Sets the configuration of the directed link `from -> to`.
    pub fn set_link(&self, from: HostId, to: HostId, config: LinkConfig) {
        config.validate();
        let mut st = self.state.borrow_mut();
        st.link_mut(from.0, to.0).config = Some(config);
    }

    /// Sets how `host` answers connection attempts.
    pub fn set_connect_policy(&self, host: HostId, policy: ConnectPolicy) {
        self.state.borrow_mut().hosts[host.0 as usize].policy = policy;
        self.note_fault(
            &[host],
            &format!("policy {} {:?}", self.host_name(host), policy),
        );
    }

    /// Resolves a host name (or a literal address) to addresses, as a
    /// resolver would. `localhost` is the caller's own host.
    ///
    /// # Errors
    /// `NotFound`-like, as a real resolver: the message names the host.
    pub fn resolve(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        if let Ok(ip) = name.parse::<IpAddr>() {
            return Ok(vec![ip]);
        }
        if name == "localhost" {
            return Ok(vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        }
        if self.state.borrow().failing_names.contains(name) {
            return Err(io::Error::other(format!(
                "failed to lookup address information: Temporary failure in name resolution \
                 (the simulation's DNS fails {name:?})"
            )));
        }
        if let Some(ip) = self.resolve_route(name) {
            return Ok(vec![ip]);
        }
        let st = self.state.borrow();
        match st.names.get(name).map(|i| &st.hosts[*i as usize]) {
            Some(host) => Ok(vec![IpAddr::V4(host.addr)]),
            None => Err(io::Error::other(format!(
                "failed to lookup address information: Name or service not known ({name:?} is \
                 not a host of this simulation)"
            ))),
        }
    }

    /// Makes the resolution of `name` fail (`failing`) or work again.
    pub fn set_name_failing(&self, name: &str, failing: bool) {
        {
            let mut st = self.state.borrow_mut();
            if failing {
                st.failing_names.insert(name.to_string());
            } else {
                st.failing_names.remove(name);
            }
        }
        self.note(&format!(
            "dns {name} {}",
            if failing { "fails" } else { "resolves" }
        ));
    }

    /// The next message number (for trace lines that pair a send with its
    /// delivery).
    pub(crate) fn next_msg(&self) -> u64 {
        let mut st = self.state.borrow_mut();
        st.next_msg += 1;
        st.next_msg
    }

    /// Records a network event about `data` in the trace: the text is
    /// hashed, the file also shows the payload's first bytes.
    /// Records a message's event in the trace: nothing is formatted
    /// unless a trace file is written (see [`sim_runtime::trace::Message`]).
    pub(crate) fn note_message(
        &self,
        verb: &'static str,
        msg: u64,
        ends: Option<(SocketAddr, SocketAddr)>,
        data: Option<&[u8]>,
    ) {
        self.note_message_over(verb, msg, ends, data, None);
    }

    /// [`Network::note_message`] for a send over a link whose least
    /// latency is `least_ns` (a failure report says how late it came).
    pub(crate) fn note_message_over(
        &self,
        verb: &'static str,
        msg: u64,
        ends: Option<(SocketAddr, SocketAddr)>,
        data: Option<&[u8]>,
        least_ns: Option<u64>,
    ) {
        let message = Message {
            verb,
            msg,
            ends,
            data,
            least_ns,
        };
        with_core(|core| core.trace(EventKind::Note, core.current_task(), Label::Msg(&message)));
    }

    /// Records a fault in the trace (`partition a->b`), with the hosts it
    /// touched: a failure report names the last faults of the failing
    /// host and its peers, however long before.
    pub fn note_fault(&self, hosts: &[HostId], label: &str) {
        let nodes: Vec<u32> = hosts.iter().map(|h| h.0).collect();
        with_core(|core| core.note_fault(&nodes, label));
    }

    /// Records a network event in the trace.
    pub fn note(&self, label: &str) {
        with_core(|core| core.trace(EventKind::Note, core.current_task(), Label::Str(label)));
    }

    // ----- faults ----------------------------------------------------------

    fn set_mode(self: &Rc<Self>, from: HostId, to: HostId, mode: LinkMode) {
        let released = {
            let mut st = self.state.borrow_mut();
            let link = st.link_mut(from.0, to.0);
            link.mode = mode;
            if mode == LinkMode::Up {
                let released = std::mem::take(&mut link.parked);
                // Back to the default: the link needs no entry.
                if link.config.is_none() {
                    st.links.remove(&(from.0, to.0));
                }
                released
            } else {
                VecDeque::new()
            }
        };
        // What waited flows again, in order, each with a fresh latency.
        for parked in released {
            match parked {
                Parked::Tcp(segment) => self.send_segment(segment),
                Parked::Udp(datagram) => self.send_datagram(datagram),
            }
        }
    }

    /// Heals every cut or held link whose two ends `among` accepts, in link
    /// order; links that are up are left alone (no trace note), so this
    /// costs the links that exist, not every pair of hosts.
    pub fn heal_all(self: &Rc<Self>, among: impl Fn(HostId) -> bool) {
        let down: Vec<(u32, u32)> = self
            .state
            .borrow()
            .links
            .iter()
            .filter(|(_, link)| link.mode != LinkMode::Up)
            .map(|(&pair, _)| pair)
            .filter(|&(from, to)| among(HostId(from)) && among(HostId(to)))
            .collect();
        for (from, to) in down {
            self.heal_one_way(HostId(from), HostId(to));
        }
    }

    /// Cuts `from -> to`: datagrams are lost, TCP segments wait.
    pub fn partition_one_way(self: &Rc<Self>, from: HostId, to: HostId) {
        self.note_fault(
            &[from, to],
            &format!("partition {}->{}", self.host_name(from), self.host_name(to)),
        );
        self.set_mode(from, to, LinkMode::Partitioned);
    }

    /// Cuts both directions between `a` and `b`.
    pub fn partition(self: &Rc<Self>, a: HostId, b: HostId) {
        self.partition_one_way(a, b);
        self.partition_one_way(b, a);
    }

    /// Restores `from -> to`; waiting segments flow again.
    pub fn heal_one_way(self: &Rc<Self>, from: HostId, to: HostId) {
        self.note_fault(
            &[from, to],
            &format!("heal {}->{}", self.host_name(from), self.host_name(to)),
        );
        self.set_mode(from, to, LinkMode::Up);
    }

    /// Restores both directions between `a` and `b`.
    pub fn heal(self: &Rc<Self>, a: HostId, b: HostId) {
        self.heal_one_way(a, b);
        self.heal_one_way(b, a);
    }

    /// Holds everything on `from -> to` until [`Network::release`].
    pub fn hold(self: &Rc<Self>, from: HostId, to: HostId) {
        self.note_fault(
            &[from, to],
            &format!("hold {}->{}", self.host_name(from), self.host_name(to)),
        );
        self.set_mode(from, to, LinkMode::Held);
    }

    /// Releases a held link: what waited arrives intact, in order.
    pub fn release(self: &Rc<Self>, from: HostId, to: HostId) {
        self.note_fault(
            &[from, to],
            &format!("release {}->{}", self.host_name(from), self.host_name(to)),
        );
        self.set_mode(from, to, LinkMode::Up);
    }

    /// Crashes a host: its tasks are dropped at once, and its sockets
    /// vanish without FIN or RST. Peers learn only from their timeouts, or
    /// from an RST when they next send after a restart.
    pub fn crash(self: &Rc<Self>, host: HostId) {
        self.note_fault(&[host], &format!("crash {}", self.host_name(host)));
        self.take_down(host);
    }

    /// A host's process exits (its main task returned): its connections
    /// close as the kernel closes them (a FIN, or an RST over unread
    /// data), its listeners go, then its tasks are dropped. It stays down
    /// until a restart.
    pub fn exit(self: &Rc<Self>, host: HostId) {
        if !self.is_alive(host) {
            return;
        }
        self.note_fault(&[host], &format!("exit {}", self.host_name(host)));
        let open: Vec<SocketId> = {
            let st = self.state.borrow();
            st.sockets
                .iter()
                .enumerate()
                .filter_map(|(index, slot)| {
                    let owned = match &slot.socket {
                        Some(Socket::Tcp(end)) => end.host == host.0 && !end.closed,
                        Some(Socket::Listener(l)) => l.host == host.0,
                        _ => false,
                    };
                    owned.then_some(SocketId {
                        net: st.net,
                        index: index as u32,
                        generation: slot.generation,
                    })
                })
                .collect()
        };
        for id in open {
            self.tcp_close(id);
        }
        self.take_down(host);
        self.state.borrow_mut().hosts[host.0 as usize].exited = true;
    }

    /// What a crash and an exit share: the host is down, its sockets and
    /// tasks gone.
    fn take_down(self: &Rc<Self>, host: HostId) {
        {
            let mut st = self.state.borrow_mut();
            let h = &mut st.hosts[host.0 as usize];
            h.alive = false;
            h.exited = false;
            h.incarnation += 1;
            h.tcp_ports.clear();
            h.udp_ports.clear();
            h.udp_more.clear();
            h.udp_shared = false;
            h.unix_paths.clear();
            h.next_port = EPHEMERAL_FIRST;
            // Every socket of the host goes, silently.
            for index in 0..st.sockets.len() {
                let owned = match &st.sockets[index].socket {
                    Some(Socket::Tcp(end)) => end.host == host.0,
                    Some(Socket::Listener(l)) => l.host == host.0,
                    Some(Socket::Udp(u)) => u.host == host.0,
                    Some(Socket::UnixDatagram(u)) => u.host == host.0,
                    None => false,
                };
                if owned {
                    st.free_slot(index as u32);
                }
            }
        }
        // The process's signal handlers go with it.
        self.signals.borrow_mut().forget_host(host.0);
        with_core(|core| core.crash_node(host.0));
    }

    /// Brings a crashed host back with the same address and no sockets;
    /// the caller starts its tasks again.
    pub fn revive(self: &Rc<Self>, host: HostId) {
        self.note_fault(&[host], &format!("restart {}", self.host_name(host)));
        let mut st = self.state.borrow_mut();
        st.hosts[host.0 as usize].alive = true;
        st.hosts[host.0 as usize].exited = false;
    }

    // ----- links and latency ---------------------------------------------

    /// The host that owns `ip` as seen from `from` (loopback and the
    /// unspecified address are `from` itself).
    pub(crate) fn host_of_ip(&self, from: HostId, ip: IpAddr) -> Option<HostId> {
        if ip.is_loopback() || ip.is_unspecified() {
            return Some(from);
        }
        // Addresses are handed out in order from FIRST_ADDR: the host is
        // found by arithmetic, whatever the number of hosts.
        let IpAddr::V4(v4) = ip else { return None };
        let index = u32::from(v4).checked_sub(FIRST_ADDR)?;
        let known = (index as usize) < self.state.borrow().hosts.len();
        known.then_some(HostId(index))
    }

    /// A latency draw for `from -> to`, and whether the link is up.
    /// `what`: what the draw is for, said to the shrinker (`draws.rs`).
    pub(crate) fn link_draw(
        &self,
        from: u32,
        to: u32,
        what: impl FnOnce() -> String,
    ) -> (u64, LinkMode, LinkConfig) {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let (config, mode) = match st.links.get(&(from, to)) {
            Some(link) => (link.config.unwrap_or(st.default_link), link.mode),
            None => (st.default_link, LinkMode::Up),
        };
        let min = config.latency_min.as_nanos() as u64;
        let max = config.latency_max.as_nanos() as u64;
        let latency = if from == to {
            // Loopback is immediate, as on a real machine, unless a swarm
            // gave it a latency (what one host's tests need to meet a
            // frame in pieces).
            match st.loopback_latency_max_ns {
                0 => 0,
                max => {
                    crate::draws::drew("net loopback latency", what);
                    decision::below(|| "net loopback latency".into(), &mut st.rng, max + 1)
                }
            }
        } else {
            crate::draws::drew("net latency", what);
            min + decision::below(|| "net latency".into(), &mut st.rng, max - min + 1)
        };
        let mut config = config;
        if from == to {
            // A swarm's loopback drops datagrams too (a full socket buffer,
            // as a loaded machine's does).
            config.udp_drop_rate = config.udp_drop_rate.max(st.loopback_udp_drop_rate);
        }
        (latency, mode, config)
    }

    pub(crate) fn park(&self, from: u32, to: u32, parked: Parked) {
        self.state
            .borrow_mut()
            .link_mut(from, to)
            .parked
            .push_back(parked);
    }

    /// A uniform draw in `[0, 1)` from the network's stream.
    /// `what`: what the draw is for, said to the shrinker (`draws.rs`).
    pub(crate) fn chance(&self, what: impl FnOnce() -> String) -> f64 {
        crate::draws::drew("net chance", what);
        let mut st = self.state.borrow_mut();
        decision::unit(|| "net chance".into(), &mut st.rng)
    }

    /// Gives every host's loopback a latency drawn in `0..=latency_max`
    /// per segment, and cuts every TCP write into segments of
    /// `1..=segment_bytes_max` bytes (`0`: writes leave whole). A swarm for
    /// one-host tests sets it; by default loopback is immediate and writes
    /// leave whole.
    pub fn set_loopback(&self, latency_max: Duration, segment_bytes_max: usize) {
        self.set_loopback_faults(LoopbackFaults {
            latency_max,
            segment_bytes_max,
            udp_drop_rate: 0.0,
        });
    }

    /// What a host's loopback suffers (a one-host swarm draws it).
    pub fn set_loopback_faults(&self, faults: LoopbackFaults) {
        let latency_max = faults.latency_max;
        let latency_max_ns = latency_max.as_nanos().min(u128::from(u64::MAX / 2)) as u64;
        assert!(
            (0.0..=1.0).contains(&faults.udp_drop_rate),
            "sim: a loopback UDP drop rate is a probability, not {}",
            faults.udp_drop_rate
        );
        self.note(&format!(
            "loopback latency 0-{latency_max:?}, segments {}, UDP drops {:.4}",
            match faults.segment_bytes_max {
                0 => "whole".to_string(),
                n => format!("1-{n} bytes"),
            },
            faults.udp_drop_rate
        ));
        let mut st = self.state.borrow_mut();
        st.loopback_latency_max_ns = latency_max_ns;
        st.segment_bytes_max = faults.segment_bytes_max;
        st.loopback_udp_drop_rate = faults.udp_drop_rate;
    }

    /// Schedules `f` on the event queue at `at_ns`.
    pub(crate) fn schedule(
        &self,
        at_ns: u64,
        label: &'static str,
        f: Box<dyn FnOnce()>,
    ) -> sim_runtime::EventKey {
        with_core(|core| core.schedule(at_ns, label, f))
    }

    /// Schedules `handler`'s run of `arg` at `at_ns`, with nothing
    /// allocated (a message's delivery: `arg` is its entry in flight).
    pub(crate) fn schedule_with(
        &self,
        at_ns: u64,
        label: &'static str,
        handler: &'static sim_runtime::events::Handler,
        arg: u64,
    ) -> sim_runtime::EventKey {
        with_core(|core| core.schedule_with(at_ns, label, handler, arg))
    }

    /// A message's delivery event: takes entry `index` of the flight table
    /// `table` picks and hands it to `deliver` (nothing, when the network
    /// is gone).
    pub(crate) fn deliver_in_flight<T>(
        index: u64,
        table: impl FnOnce(&mut NetState) -> &mut Flight<T>,
        deliver: impl FnOnce(&Rc<Network>, T),
    ) {
        try_with_net(|net| {
            let message = table(&mut net.state.borrow_mut()).take(index);
            if let Some(message) = message {
                deliver(net, message);
            }
        });
    }

    /// Fetches entry `index` of the flight table `table` picks: its
    /// delivery is the next event.
    pub(crate) fn fetch_in_flight<T>(index: u64, table: impl FnOnce(&NetState) -> &Flight<T>) {
        try_with_net(|net| {
            if let Ok(st) = net.state.try_borrow() {
                table(&st).prefetch(index);
            }
        });
    }

    /// Cancels a scheduled event (one that already ran is left alone).
    pub(crate) fn cancel(&self, key: sim_runtime::EventKey) {
        with_core(|core| core.event_cancel(key));
    }

    pub(crate) fn now_ns(&self) -> u64 {
        with_core(|core| core.now_ns())
    }

    /// Runs `f` after `delay` of virtual time (for the harness's faults).
    pub fn after(&self, delay: Duration, label: &'static str, f: Box<dyn FnOnce()>) {
        let at = self.now_ns() + delay.as_nanos() as u64;
        self.schedule(at, label, f);
    }
}

/// What a host's loopback suffers ([`Network::set_loopback_faults`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoopbackFaults {
    /// Each segment or datagram takes `0..=latency_max` (zero: immediate,
    /// as on a real machine).
    pub latency_max: Duration,
    /// A TCP write leaves in segments of `1..=segment_bytes_max` bytes (0:
    /// whole, up to the 16 KiB segment).
    pub segment_bytes_max: usize,
    /// Each datagram is dropped with this probability.
    pub udp_drop_rate: f64,
}

impl Network {
    /// A socket address for the trace: `host:port` for a simulated host's
    /// address, as it is otherwise (loopback, a literal elsewhere). The
    /// trace keeps the names (`Core::name_address`, given as hosts are
    /// added), for its messages' text too.
    pub(crate) fn describe(&self, addr: &SocketAddr) -> String {
        with_core(|core| core.describe_address(addr))
    }
}
