//! TCP: listeners and connections.
//!
//! A connection is two endpoints. Bytes written on one become a segment
//! that crosses the link (seeded latency, never reordered within a
//! connection) and lands in the other's receive buffer. A writer may have at
//! most `WINDOW_BYTES` in flight or unread at the peer, so a slow reader
//! pushes back. Shutting the write side sends a FIN after the data. Closing
//! with unread data, or sending to a socket that is gone, brings an RST.
//!
//! Connecting costs a round trip: a SYN, then a SYN-ACK (`handshake.rs`,
//! with Linux's SYN retransmissions). A listener completes connections into
//! its backlog before `accept` is called, as the kernel does. Nagle's
//! algorithm and delayed ACKs are `ack.rs`.

use crate::link::LinkMode;
use crate::socket::{add_waker, wait_on, Segment, SegmentKind, TcpEnd, TcpListenerState};
pub use crate::socket::{Phase, BACKLOG_DEFAULT, WINDOW_BYTES};
use crate::state::Throttle;
use crate::state::{source_ip, HostId, NetState, Network, Parked, Socket, SocketId};
use sim_runtime::decision;
use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

mod ack;
mod close;
mod handshake;
mod segment;

pub use ack::{DELAYED_ACK_NS, MSS_LOOPBACK_BYTES, QUICK_ACKS};
pub use handshake::{SYN_RETRIES_MAX, SYN_RTO_INITIAL_NS};

/// The largest segment: a bigger write is split.
const SEGMENT_BYTES: usize = 16 * 1024;

/// The largest segment across a link: Ethernet's MSS (1500-byte MTU, less
/// the IP and TCP headers).
pub const MSS_BYTES: usize = 1_460;

fn not_connected() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "Transport endpoint is not connected",
    )
}

impl Network {
    /// An ephemeral port for a TCP socket of the current host bound to
    /// `ip` with port 0: the OS picks it at bind time.
    ///
    /// # Errors
    /// `AddrNotAvailable` for an address not of the host; `AddrInUse` when
    /// every ephemeral port is taken.
    pub fn tcp_pick_port(&self, ip: std::net::IpAddr) -> io::Result<u16> {
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        st.check_bind_ip(host, ip)?;
        st.ephemeral_port(host, true)
    }

    /// Binds a listening socket on the current host.
    ///
    /// # Errors
    /// `AddrInUse` for a taken port; `AddrNotAvailable` for an address that
    /// is not the host's.
    pub fn tcp_listen(&self, addr: SocketAddr, backlog: usize) -> io::Result<SocketId> {
        let host = self.current_host().0;
        let mut st = self.state.borrow_mut();
        st.check_bind_ip(host, addr.ip())?;
        let port = if addr.port() == 0 {
            st.ephemeral_port(host, true)?
        } else {
            addr.port()
        };
        let local = SocketAddr::new(addr.ip(), port);
        if st.tcp_bind_conflict(host, local) {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "Address already in use: {local} on host {:?}",
                    st.hosts[host as usize].name
                ),
            ));
        }
        let id = st.insert(Socket::Listener(TcpListenerState {
            host,
            local,
            path: None,
            backlog: VecDeque::new(),
            backlog_max: backlog.max(1),
            wakers: Vec::new(),
            paused: false,
            arrivals: 0,
            fd_watch_read: None,
        }));
        st.hosts[host as usize].tcp_ports.add(port, id.index);
        drop(st);
        crate::std_net::note_listening(port, true);
        self.note(&format!("tcp-listen {}", self.describe(&local)));
        Ok(id)
    }

    /// The address a listener or connection is bound to.
    ///
    /// # Errors
    /// When the socket is gone.
    pub fn tcp_local_addr(&self, id: SocketId) -> io::Result<SocketAddr> {
        match self.state.borrow().get(id) {
            Some(Socket::Listener(l)) => Ok(l.local),
            Some(Socket::Tcp(end)) => Ok(end.local),
            _ => Err(not_connected()),
        }
    }

    /// The address a connection is connected to.
    ///
    /// # Errors
    /// When the socket is gone or not connected.
    pub fn tcp_peer_addr(&self, id: SocketId) -> io::Result<SocketAddr> {
        match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) if end.phase == Phase::Established => Ok(end.peer),
            _ => Err(not_connected()),
        }
    }

    /// Whether `host` has a TCP listener on `port`.
    pub fn tcp_is_listening(&self, host: HostId, port: u16) -> bool {
        self.state
            .borrow()
            .tcp_listeners(host.0, port)
            .next()
            .is_some()
    }

    /// Pauses or resumes the TCP listener of `host` on `port`: while paused,
    /// connections complete into its backlog (up to its size) but `accept`
    /// waits, as with a server too busy to accept. Returns false when the
    /// host has no listener there.
    pub fn tcp_pause_listener(&self, host: HostId, port: u16, paused: bool) -> bool {
        let waker = {
            let mut st = self.state.borrow_mut();
            let listeners: Vec<u32> = st.tcp_listeners(host.0, port).collect();
            if listeners.is_empty() {
                return false;
            }
            // Every listener on the port (one per address bound there).
            let mut wakers = Vec::new();
            for index in listeners {
                if let Some(Socket::Listener(listener)) = st.sockets[index as usize].socket.as_mut()
                {
                    listener.paused = paused;
                    if !paused {
                        wakers.append(&mut listener.wakers);
                    }
                }
            }
            wakers
        };
        self.note(&format!(
            "tcp-listener {}:{port} {}",
            self.host_name(host),
            if paused { "paused" } else { "resumed" }
        ));
        for waker in waker {
            waker.wake();
        }
        true
    }

    /// Whether a listener has a connection to accept; if not, `waker` (if
    /// any) is woken when one comes.
    pub fn tcp_accept_ready(&self, id: SocketId, waker: Option<&Waker>) -> bool {
        let mut st = self.state.borrow_mut();
        let Some(Socket::Listener(listener)) = st.get_mut(id) else {
            return true;
        };
        if !listener.paused && !listener.backlog.is_empty() {
            return true;
        }
        if let Some(waker) = waker {
            add_waker(&mut listener.wakers, waker);
        }
        false
    }

    /// Takes an established connection from a listener's backlog.
    pub fn tcp_poll_accept(
        &self,
        id: SocketId,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(SocketId, SocketAddr)>> {
        let mut st = self.state.borrow_mut();
        let Some(Socket::Listener(listener)) = st.get_mut(id) else {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "sim: not a listening socket",
            )));
        };
        if listener.paused {
            add_waker(&mut listener.wakers, cx.waker());
            wait_on("TcpListener::accept", listener.local, listener.local);
            return Poll::Pending;
        }
        match listener.backlog.pop_front() {
            Some(accepted) => {
                drop(st);
                self.note(&format!("tcp-accept {}", self.describe(&accepted.1)));
                Poll::Ready(Ok(accepted))
            }
            None => {
                add_waker(&mut listener.wakers, cx.waker());
                wait_on("TcpListener::accept", listener.local, listener.local);
                Poll::Pending
            }
        }
    }

    /// Starts connecting from the current host (a SYN goes out); poll the
    /// result with [`Network::tcp_poll_connect`].
    ///
    /// # Errors
    /// `ConnectionRefused` at once for an address no host has.
    pub fn tcp_connect(
        self: &Rc<Self>,
        dst: SocketAddr,
        bind: Option<SocketAddr>,
    ) -> io::Result<SocketId> {
        let host = self.current_host();
        let Some(to_host) = self.host_of_ip(host, dst.ip()) else {
            // No host has the address: nothing answers. A real network would
            // time out; a refusal names the mistake sooner.
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!(
                    "Connection refused: no simulated host has the address {}",
                    dst.ip()
                ),
            ));
        };
        let dst = if to_host == host && !self.tcp_is_listening(host, dst.port()) {
            // A real listener of this process made before any runtime joins
            // the simulation when the simulation first connects to it.
            let core = crate::net::with_core(|core| core.id());
            SocketAddr::new(dst.ip(), crate::std_net::connect_port(core, dst.port()))
        } else {
            dst
        };
        let (id, local) = {
            let mut st = self.state.borrow_mut();
            let ip = match bind {
                Some(b) if !b.ip().is_unspecified() => {
                    st.check_bind_ip(host.0, b.ip())?;
                    b.ip()
                }
                _ => source_ip(&st, host.0, dst.ip()),
            };
            let port = match bind {
                Some(b) if b.port() != 0 => b.port(),
                _ => st.ephemeral_port(host.0, true)?,
            };
            let local = SocketAddr::new(ip, port);
            let end = TcpEnd::new(host.0, local, dst, Phase::Connecting);
            let id = st.insert(Socket::Tcp(end));
            // The port is taken while the connection lives.
            st.hosts[host.0 as usize].tcp_ports.add(port, id.index);
            (id, local)
        };
        self.note(&format!(
            "tcp-connect {}>{}",
            self.describe(&local),
            self.describe(&dst)
        ));
        self.send_segment(Segment {
            from_host: host.0,
            to_host: to_host.0,
            from: id,
            to: None,
            src: local,
            dst,
            kind: SegmentKind::Syn {
                listener_addr: dst,
                attempt: 0,
            },
        });
        self.arm_syn_timer(id, 0);
        Ok(id)
    }

    /// Gives `each` the segments a write of `bytes` leaves as, in order:
    /// across a link, of an Ethernet MSS each (each with its own latency
    /// draw, so a large write arrives in pieces, in order); on loopback,
    /// whole (up to `SEGMENT_BYTES` each); with a swarm's segment limit,
    /// pieces of drawn sizes.
    fn cut_segments(&self, bytes: &[u8], loopback: bool, mut each: impl FnMut(&[u8])) {
        let max = self.state.borrow().segment_bytes_max;
        if max == 0 {
            // Nothing is drawn: no list is made (most writes are one
            // segment, and this is on every write's path).
            let size = if loopback { SEGMENT_BYTES } else { MSS_BYTES };
            bytes.chunks(size).for_each(each);
            return;
        }
        // Every size is drawn before any segment is sent (sending draws
        // latencies from the same stream).
        let mut sizes = Vec::new();
        let mut left = bytes.len();
        // Bounded: each turn takes at least one byte.
        while left > 0 {
            let limit = left.min(max).min(SEGMENT_BYTES) as u64;
            let size = {
                let mut st = self.state.borrow_mut();
                1 + decision::below(|| "net segment".into(), &mut st.rng, limit) as usize
            };
            sizes.push(size);
            left -= size;
        }
        let mut rest = bytes;
        for size in sizes {
            let (segment, after) = rest.split_at(size);
            each(segment);
            rest = after;
        }
    }

    /// Waits for a connection attempt to complete.
    pub fn tcp_poll_connect(&self, id: SocketId, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut st = self.state.borrow_mut();
        match st.get_mut(id) {
            Some(Socket::Tcp(end)) => match end.phase {
                Phase::Established => Poll::Ready(Ok(())),
                Phase::Failed(io::ErrorKind::TimedOut) => {
                    Poll::Ready(Err(io::Error::from_raw_os_error(handshake::ETIMEDOUT)))
                }
                Phase::Failed(kind) => Poll::Ready(Err(refused(kind, end.peer))),
                Phase::Connecting => {
                    end.write_waker = Some(cx.waker().clone());
                    wait_on("TcpStream::connect", end.local, end.peer);
                    Poll::Pending
                }
            },
            _ => Poll::Ready(Err(not_connected())),
        }
    }

    /// Reads received bytes; end of stream after a FIN; after an RST, the
    /// bytes that arrived before it, then `ConnectionReset` once, then the
    /// end of the stream (Linux's order).
    pub fn tcp_poll_read(
        self: &Rc<Self>,
        id: SocketId,
        cx: &mut Context<'_>,
        buf: &mut [u8],
        peek: bool,
    ) -> Poll<io::Result<usize>> {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let throttled = !st.controls.read_rate.is_empty();
        let Some(Socket::Tcp(end)) = st.get_mut(id) else {
            return Poll::Ready(Err(not_connected()));
        };
        if !end.recv.is_empty() {
            let mut n = buf.len().min(end.recv.len());
            // A read throttle (a scripted control) gives this read its turn.
            if !peek && throttled {
                let now_ns = self.now_ns();
                let (host, next) = (end.host, end.read_next_ns);
                match st.controls.read_take(host, now_ns, next, n) {
                    Throttle::Take(allowed) => n = allowed,
                    Throttle::WaitUntil(at) => {
                        let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                            unreachable!("looked up above")
                        };
                        end.read_waker = Some(cx.waker().clone());
                        let arm = end.read_wake_ns != at;
                        end.read_wake_ns = at;
                        if arm {
                            self.wake_reader_at(id, at);
                        }
                        wait_on("TcpStream read (throttled)", end.local, end.peer);
                        return Poll::Pending;
                    }
                }
                let next = st.controls.read_next(host, now_ns, n);
                let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                    unreachable!("looked up above")
                };
                end.read_next_ns = next;
            }
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                unreachable!("looked up above")
            };
            // The receive buffer is a ring: its first `n` bytes are at most
            // two slices, copied whole (the second only when the bytes wrap:
            // a copy of nothing is still a call).
            let (front, back) = end.recv.as_slices();
            let from_front = n.min(front.len());
            buf[..from_front].copy_from_slice(&front[..from_front]);
            if from_front < n {
                buf[from_front..n].copy_from_slice(&back[..n - from_front]);
            }
            if !peek {
                match n == end.recv.len() {
                    // The common case, a read of all there is.
                    true => end.recv.clear(),
                    false => drop(end.recv.drain(..n)),
                }
                // The window opened: the peer's writer may go on.
                if let Some(peer) = end.peer_id {
                    if let Some(Socket::Tcp(peer_end)) = st.get_mut(peer) {
                        peer_end.write_event();
                    }
                }
            }
            return Poll::Ready(Ok(n));
        }
        // The peer's FIN comes before a pending error, as on Linux; a reset
        // reports its error once, then reads find the end of the stream.
        if end.fin_received || buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if end.reset {
            return Poll::Ready(end.take_reset_error().map_or(Ok(0), Err));
        }
        if end.phase != Phase::Established {
            return Poll::Ready(Err(not_connected()));
        }
        // Not readable until the next read event (see `tcp_read_ready`).
        end.read_cleared_at = Some(end.read_events);
        end.read_waker = Some(cx.waker().clone());
        wait_on("TcpStream read", end.local, end.peer);
        Poll::Pending
    }

    /// Whether the connection is readable, as epoll reports it to tokio:
    /// from its first read event (data, the end of stream, a reset) until a
    /// read finds nothing (which clears it), and again from the next event.
    /// A read that took everything leaves it readable, as on Linux: the
    /// next read says `WouldBlock`.
    pub fn tcp_read_ready(&self, id: SocketId) -> bool {
        let st = self.state.borrow();
        match st.get(id) {
            Some(Socket::Tcp(end)) if end.read_cleared_at == Some(end.read_events) => false,
            Some(Socket::Tcp(end)) if !end.recv.is_empty() && !end.reset => {
                // Under a read throttle, data waits for its turn.
                end.read_next_ns == 0
                    || st.controls.read_rate.is_empty()
                    || end.read_next_ns <= self.now_ns()
            }
            Some(Socket::Tcp(end)) => end.reset || end.fin_received || end.read_events > 0,
            _ => true,
        }
    }

    /// `SO_ERROR`: the connection's pending error, once (a reset gives
    /// `ConnectionReset`; a failed connect its error).
    pub fn tcp_take_error(&self, id: SocketId) -> io::Result<Option<io::Error>> {
        let mut st = self.state.borrow_mut();
        let Some(Socket::Tcp(end)) = st.get_mut(id) else {
            return Err(not_connected());
        };
        if let Phase::Failed(kind) = end.phase {
            if !end.reset_reported {
                end.reset_reported = true;
                return Ok(Some(io::Error::from(kind)));
            }
        }
        Ok(end.take_reset_error())
    }

    /// Whether the peer ended its side (a FIN or a reset): epoll's
    /// `EPOLLRDHUP`, tokio's `Ready::READ_CLOSED`.
    pub fn tcp_read_closed(&self, id: SocketId) -> bool {
        match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) => end.fin_received || end.reset,
            _ => true,
        }
    }

    /// Whether the connection can no longer send: a reset, or both sides
    /// ended (epoll's `EPOLLHUP`, tokio's `Ready::WRITE_CLOSED`).
    pub fn tcp_write_closed(&self, id: SocketId) -> bool {
        match self.state.borrow().get(id) {
            Some(Socket::Tcp(end)) => end.reset || (end.write_shut && end.fin_received),
            _ => true,
        }
    }

    /// Registers for a later read readiness.
    pub fn tcp_register_read(&self, id: SocketId, waker: &Waker) {
        let now_ns = self.now_ns();
        let mut st = self.state.borrow_mut();
        if let Some(Socket::Tcp(end)) = st.get_mut(id) {
            end.read_waker = Some(waker.clone());
            // Throttled data waiting for its turn: a wake at the turn.
            let at = end.read_next_ns;
            if !end.recv.is_empty() && at > now_ns && end.read_wake_ns != at {
                end.read_wake_ns = at;
                drop(st);
                self.wake_reader_at(id, at);
            }
        }
    }

    /// Wakes `id`'s reader at true time `at` (a throttled read's turn).
    fn wake_reader_at(&self, id: SocketId, at: u64) {
        self.schedule(
            at,
            "tcp-throttle",
            Box::new(move || {
                crate::net::try_with_net(|net| {
                    let mut st = net.state.borrow_mut();
                    if let Some(Socket::Tcp(end)) = st.get_mut(id) {
                        end.read_wake_ns = 0;
                        end.read_event();
                    }
                });
            }),
        );
    }

    /// How many bytes a write may send now.
    pub(crate) fn window(st: &NetState, end: &TcpEnd) -> usize {
        let unread = end
            .peer_id
            .and_then(|peer| match st.get(peer) {
                Some(Socket::Tcp(p)) => Some(p.recv.len()),
                _ => None,
            })
            .unwrap_or(0);
        WINDOW_BYTES.saturating_sub(end.in_flight + unread)
    }

    /// Whether the connection is writable, as epoll reports it to tokio:
    /// from the connect on, until a write finds the peer's window full
    /// (which clears it), and again from the next write event (the window
    /// opening, a reset). A write that filled the window only in part
    /// leaves it writable, as on Linux: the next write says `WouldBlock`.
    pub fn tcp_write_ready(&self, id: SocketId) -> bool {
        let st = self.state.borrow();
        match st.get(id) {
            Some(Socket::Tcp(end)) => end.write_cleared_at != Some(end.write_events),
            _ => true,
        }
    }

    /// Clears read and/or write readiness (a `try_io` whose closure said
    /// `WouldBlock`): not ready again until the next event of that kind.
    pub fn tcp_clear_ready(&self, id: SocketId, read: bool, write: bool) {
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            if read {
                end.read_cleared_at = Some(end.read_events);
            }
            if write {
                end.write_cleared_at = Some(end.write_events);
            }
        }
    }

    /// Registers for a later write readiness.
    pub fn tcp_register_write(&self, id: SocketId, waker: &Waker) {
        if let Some(Socket::Tcp(end)) = self.state.borrow_mut().get_mut(id) {
            end.write_waker = Some(waker.clone());
        }
    }

    /// Writes as much of `buf` as the window allows.
    pub fn tcp_poll_write(
        self: &Rc<Self>,
        id: SocketId,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let n = {
            let mut st = self.state.borrow_mut();
            let window = match st.get(id) {
                Some(Socket::Tcp(end)) => Self::window(&st, end),
                _ => return Poll::Ready(Err(not_connected())),
            };
            let Some(Socket::Tcp(end)) = st.get_mut(id) else {
                unreachable!("checked above")
            };
            if let Some(error) = end.take_reset_error() {
                return Poll::Ready(Err(error));
            }
            if end.reset || end.write_shut {
                return Poll::Ready(Err(io::Error::from_raw_os_error(libc::EPIPE)));
            }
            if end.phase != Phase::Established {
                return Poll::Ready(Err(not_connected()));
            }
            if buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            if window == 0 {
                // Not writable until the window opens (see `tcp_write_ready`).
                end.write_cleared_at = Some(end.write_events);
                end.write_waker = Some(cx.waker().clone());
                wait_on("TcpStream write (peer's window full)", end.local, end.peer);
                return Poll::Pending;
            }
            let n = buf.len().min(window);
            end.in_flight += n;
            n
        };
        self.send_written(id, &buf[..n]);
        Poll::Ready(Ok(n))
    }

    /// The host a segment from `from_host` to `dst` goes to.
    fn route(&self, from_host: u32, dst: SocketAddr) -> u32 {
        self.host_of_ip(HostId(from_host), dst.ip())
            .map_or(from_host, |h| h.0)
    }

    /// `TCP_NODELAY`: on, Nagle's algorithm holds nothing back, and what it
    /// held leaves now, as on Linux (see `ack.rs`).
    pub fn tcp_set_nodelay(self: &Rc<Self>, id: SocketId, on: bool) -> io::Result<()> {
        self.with_end(id, |end| end.nodelay = on)?;
        if on {
            self.flush_held(id);
        }
        Ok(())
    }

    /// `TCP_NODELAY`.
    pub fn tcp_nodelay(&self, id: SocketId) -> io::Result<bool> {
        self.with_end(id, |end| end.nodelay)
    }

    /// `IP_TTL`.
    pub fn tcp_set_ttl(&self, id: SocketId, ttl: u32) -> io::Result<()> {
        self.with_end(id, |end| end.ttl = ttl)
    }

    /// `IP_TTL`.
    pub fn tcp_ttl(&self, id: SocketId) -> io::Result<u32> {
        self.with_end(id, |end| end.ttl)
    }

    /// `SO_LINGER`. Of zero, a close is abortive: it sends an RST, and the
    /// peer's reads fail with `ConnectionReset`.
    pub fn tcp_set_linger(
        &self,
        id: SocketId,
        linger: Option<std::time::Duration>,
    ) -> io::Result<()> {
        self.with_end(id, |end| end.linger = linger)
    }

    /// `SO_LINGER`.
    pub fn tcp_linger(&self, id: SocketId) -> io::Result<Option<std::time::Duration>> {
        self.with_end(id, |end| end.linger)
    }

    fn with_end<R>(&self, id: SocketId, f: impl FnOnce(&mut TcpEnd) -> R) -> io::Result<R> {
        match self.state.borrow_mut().get_mut(id) {
            Some(Socket::Tcp(end)) => Ok(f(end)),
            _ => Err(not_connected()),
        }
    }
}

/// Whether `ip` means "this host" wherever it is used.
pub fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || ip.is_unspecified()
}

/// A refused connect's error. When a real socket of this process listens on
/// that port (a `std::net::TcpListener`), the refusal says why and counts
/// as an escape: the kernel's network is outside the simulation.
fn refused(kind: io::ErrorKind, peer: SocketAddr) -> io::Error {
    if !sim_os::real_sockets::listened_on(peer.port()) {
        return io::Error::new(
            kind,
            format!("Connection refused: nothing listens on {peer}"),
        );
    }
    let message = format!(
        "sim: escape refused: a connect to {peer} found nothing listening in the simulation, \
         but a real socket of this process (std::net::TcpListener) listens on port {}: the \
         kernel's network is outside the simulation, and no simulated connection reaches it. \
         Listen with tokio::net::TcpListener, so both ends are simulated.",
        peer.port()
    );
    sim_runtime::sweep::note_escape(&message);
    io::Error::new(kind, format!("Connection refused: {message}"))
}
