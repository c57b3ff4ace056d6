//! What the socket slab holds and what travels between sockets: the
//! states of TCP connections and listeners, of UDP and Unix datagram
//! sockets, and the segments and datagrams in flight.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::task::Waker;

/// A socket of the network: the runtime whose network holds it, a slab
/// index and its generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SocketId {
    /// The id of the runtime (core) whose network holds it: a socket used
    /// from another runtime, or after its own shut down, is found gone.
    pub(crate) net: u16,
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl SocketId {
    /// The id of the runtime whose network holds the socket.
    pub fn runtime_id(&self) -> u16 {
        self.net
    }
}

// ----- TCP (and Unix streams, which are TCP ends without a network) -----------

/// The most bytes a connection holds in flight plus unread, per direction.
pub const WINDOW_BYTES: usize = 64 * 1024;

/// Connections waiting for `accept`, when the listener gives no number.
pub const BACKLOG_DEFAULT: usize = 1024;

pub(crate) struct TcpListenerState {
    pub(crate) host: u32,
    pub(crate) local: SocketAddr,
    /// Set for a Unix listener: its path in the host's namespace.
    pub(crate) path: Option<std::path::PathBuf>,
    pub(crate) backlog: VecDeque<(SocketId, SocketAddr)>,
    /// Connections that reached the backlog so far (`watch.rs`).
    pub(crate) arrivals: u64,
    /// An `AsyncFd` watching the listener (`watch.rs`).
    pub(crate) fd_watch_read: Option<Waker>,
    pub(crate) backlog_max: usize,
    /// Every task waiting to accept: all are woken by a connection, as in
    /// tokio (one takes it, the others wait again).
    pub(crate) wakers: Vec<Waker>,
    /// Paused (a scripted control): connections still complete into the
    /// backlog, but `accept` waits.
    pub(crate) paused: bool,
}

/// Where a connection is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// A SYN is out.
    Connecting,
    /// Connected.
    Established,
    /// The connect failed.
    Failed(io::ErrorKind),
}

pub(crate) struct TcpEnd {
    pub(crate) host: u32,
    pub(crate) local: SocketAddr,
    pub(crate) peer: SocketAddr,
    pub(crate) peer_id: Option<SocketId>,
    pub(crate) phase: Phase,
    pub(crate) recv: VecDeque<u8>,
    pub(crate) fin_received: bool,
    pub(crate) reset: bool,
    /// The reset's error was reported already: Linux keeps one pending
    /// error per socket, which the first read, write or `SO_ERROR` takes
    /// (see [`TcpEnd::take_reset_error`]).
    pub(crate) reset_reported: bool,
    /// Bytes sent and not yet in the peer's receive buffer.
    pub(crate) in_flight: usize,
    pub(crate) write_shut: bool,
    /// Closed by the application: a tombstone that answers with RST.
    pub(crate) closed: bool,
    /// The time the last segment from this end arrives: later ones arrive
    /// no earlier, so a connection never reorders.
    pub(crate) last_arrival_ns: u64,
    pub(crate) read_waker: Option<Waker>,
    pub(crate) write_waker: Option<Waker>,
    /// An `AsyncFd` watching the descriptor (`tcp/watch.rs`): woken by
    /// the read events and the write events, apart from the reader and
    /// the writer.
    pub(crate) fd_watch_read: Option<Waker>,
    pub(crate) fd_watch_write: Option<Waker>,
    pub(crate) nodelay: bool,
    pub(crate) ttl: u32,
    pub(crate) linger: Option<std::time::Duration>,
    /// Set for a Unix stream: the local and peer paths (`None`: unnamed).
    pub(crate) unix: Option<(Option<std::path::PathBuf>, Option<std::path::PathBuf>)>,
    /// While connecting: the pending SYN retransmission timer.
    pub(crate) syn_timer: Option<sim_runtime::EventKey>,
    /// Under a read throttle: the earliest true time of the next read.
    pub(crate) read_next_ns: u64,
    /// Under a read throttle: the time a wake is armed for (0: none).
    pub(crate) read_wake_ns: u64,
    /// Read events (data, FIN, RST) and write events (the window opened,
    /// RST) so far: the edges a readiness that `try_io` cleared waits for.
    pub(crate) read_events: u64,
    pub(crate) write_events: u64,
    /// The event count at which `try_io` cleared read or write readiness:
    /// not ready again until the count moves.
    pub(crate) read_cleared_at: Option<u64>,
    pub(crate) write_cleared_at: Option<u64>,
    /// Nagle's algorithm and delayed ACKs (`tcp/ack.rs`).
    pub(crate) ack: Box<AckState>,
}

/// One end's counts of both streams of its connection, in bytes, and what
/// Nagle's algorithm and the delayed ACK keep (see `tcp/ack.rs`).
#[derive(Default)]
pub(crate) struct AckState {
    /// Bytes of this end's stream sent so far (`SND.NXT`).
    pub(crate) sent: u64,
    /// How many of them the peer acknowledged (`SND.UNA`).
    pub(crate) acked: u64,
    /// Where the last small segment (less than an MSS) sent ended: until
    /// the peer acknowledges it, Nagle holds the next small one back.
    pub(crate) small_end: u64,
    /// Written bytes Nagle holds back (less than an MSS).
    pub(crate) held: Vec<u8>,
    /// Bytes of the peer's stream received (`RCV.NXT`).
    pub(crate) received: u64,
    /// How many of them this end acknowledged.
    pub(crate) received_acked: u64,
    /// When the ACK owed is due, if one is owed (`tcp/ack.rs`).
    pub(crate) delack_due_ns: Option<u64>,
    /// Whether the delayed ACK's event is pending: it may be due before
    /// `delack_due_ns` (then it schedules the next) or find nothing owed.
    /// It is never cancelled, so its key is not kept.
    pub(crate) delack_pending: bool,
    /// Quick ACKs used (Linux acknowledges a connection's first segments
    /// at once).
    pub(crate) quick_acks_used: u32,
    /// Linux's "ping-pong" mode: this end answered data with data, so its
    /// ACKs wait to ride on its replies.
    pub(crate) interactive: bool,
    /// When data last arrived (0: never): data sent within
    /// `DELAYED_ACK_NS` of it is an answer.
    pub(crate) received_at_ns: u64,
}

impl TcpEnd {
    pub(crate) fn new(host: u32, local: SocketAddr, peer: SocketAddr, phase: Phase) -> TcpEnd {
        TcpEnd {
            host,
            local,
            peer,
            peer_id: None,
            phase,
            recv: VecDeque::new(),
            fin_received: false,
            reset: false,
            reset_reported: false,
            in_flight: 0,
            write_shut: false,
            closed: false,
            last_arrival_ns: 0,
            read_waker: None,
            write_waker: None,
            fd_watch_read: None,
            fd_watch_write: None,
            nodelay: false,
            ttl: 64,
            linger: None,
            unix: None,
            syn_timer: None,
            read_next_ns: 0,
            read_wake_ns: 0,
            read_events: 0,
            write_events: 0,
            read_cleared_at: None,
            write_cleared_at: None,
            ack: Box::default(),
        }
    }

    /// The reset's error, to the first read, write or `SO_ERROR` that
    /// asks (after it, reads find the end of the stream and writes a
    /// broken pipe, as on Linux): `ECONNRESET`, or `EPIPE` when the peer's
    /// FIN came before its RST.
    pub(crate) fn take_reset_error(&mut self) -> Option<io::Error> {
        if !self.reset || self.reset_reported {
            return None;
        }
        self.reset_reported = true;
        let errno = match self.fin_received {
            true => libc::EPIPE,
            false => libc::ECONNRESET,
        };
        Some(io::Error::from_raw_os_error(errno))
    }

    pub(crate) fn wake_all(&mut self) {
        self.read_event();
        self.write_event();
    }

    /// Something a reader waits for happened: counted, and the reader woken.
    pub(crate) fn read_event(&mut self) {
        self.read_events += 1;
        if let Some(w) = self.read_waker.take() {
            w.wake();
        }
        if let Some(w) = self.fd_watch_read.take() {
            w.wake();
        }
    }

    /// Something a writer waits for happened: counted, and the writer woken.
    pub(crate) fn write_event(&mut self) {
        self.write_events += 1;
        if let Some(w) = self.write_waker.take() {
            w.wake();
        }
        if let Some(w) = self.fd_watch_write.take() {
            w.wake();
        }
    }
}

pub(crate) enum SegmentKind {
    /// A connection request; `attempt` 0 is the first, then Linux's
    /// retransmissions (see `tcp/handshake.rs`).
    Syn {
        listener_addr: SocketAddr,
        attempt: u32,
    },
    SynAck,
    /// Bytes, with the network's message number (the trace pairs a send
    /// with its delivery by it).
    /// `ack`: the sender's count of the receiver's stream it received,
    /// an acknowledgement riding on the data.
    Data {
        msg: u64,
        bytes: crate::payload::Payload,
        ack: u64,
    },
    /// An acknowledgement alone: the sender received `upto` bytes of the
    /// receiver's stream.
    Ack {
        upto: u64,
    },
    Fin,
    Rst,
}

pub(crate) struct Segment {
    pub(crate) from_host: u32,
    pub(crate) to_host: u32,
    /// The sending endpoint (the client's, for a SYN).
    pub(crate) from: SocketId,
    /// The receiving endpoint (none yet for a SYN).
    pub(crate) to: Option<SocketId>,
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) kind: SegmentKind,
}

impl Segment {
    /// ` #<msg>` for data, nothing for control segments.
    pub(crate) fn msg_tag(&self) -> String {
        match self.kind {
            SegmentKind::Data { msg, .. } => format!(" #{msg}"),
            _ => String::new(),
        }
    }

    pub(crate) fn word(&self) -> &'static str {
        match self.kind {
            SegmentKind::Syn { .. } => "syn",
            SegmentKind::SynAck => "syn-ack",
            SegmentKind::Data { .. } => "data",
            SegmentKind::Ack { .. } => "ack",
            SegmentKind::Fin => "fin",
            SegmentKind::Rst => "rst",
        }
    }
}

/// Adds `waker` to `wakers` unless a waker of the same task is there.
pub(crate) fn add_waker(wakers: &mut Vec<Waker>, waker: &Waker) {
    match wakers.iter_mut().find(|w| w.will_wake(waker)) {
        Some(w) => w.clone_from(waker),
        None => wakers.push(waker.clone()),
    }
}

/// Notes what the running task waits on, a socket (see
/// `sim_runtime::WaitNote`).
pub(crate) fn wait_on(what: &'static str, local: SocketAddr, peer: SocketAddr) {
    let noted = sim_runtime::context::with_current(|core| {
        core.note_wait(sim_runtime::WaitNote {
            what,
            detail: sim_runtime::WaitDetail::Conn { local, peer },
            site: None,
        })
    });
    if noted.is_none() {
        sim_runtime::context::pending_outside_runtime();
    }
}

// ----- UDP ---------------------------------------------------------------------

/// Datagrams a socket holds unread before new ones are dropped (a full
/// receive buffer).
pub const QUEUE_MAX: usize = 1024;

/// The largest datagram (IPv4 UDP payload).
pub const DATAGRAM_MAX: usize = 65_507;

pub(crate) struct UdpState {
    pub(crate) host: u32,
    pub(crate) local: SocketAddr,
    /// The address `local_addr` answers when not `local`: an adopted real
    /// socket's (see `std_net/adopt.rs`).
    pub(crate) shown: Option<SocketAddr>,
    pub(crate) peer: Option<SocketAddr>,
    pub(crate) queue: crate::datagrams::DatagramQueue,
    pub(crate) waker: Option<Waker>,
    pub(crate) broadcast: bool,
    pub(crate) ttl: u32,
    /// A datagram it sent, connected, found no socket: its next receive
    /// fails with `ConnectionRefused`, as the ICMP error makes it on Linux.
    pub(crate) refused: bool,
    /// Datagrams and errors that arrived so far, and the count at which
    /// `try_io` cleared read readiness (see `TcpEnd::read_cleared_at`).
    pub(crate) arrivals: u64,
    pub(crate) read_cleared_at: Option<u64>,
    /// An `AsyncFd` watching the socket (`watch.rs`).
    pub(crate) fd_watch_read: Option<Waker>,
    /// Readable, as tokio's driver last reported it: set at the driver's
    /// turn after a datagram arrived, cleared by a receive that found
    /// nothing (see `UdpState::sees`).
    pub(crate) seen: bool,
    /// The runtime's step (`Core::steps`) at which a datagram came that the
    /// driver has not reported yet.
    pub(crate) unseen_since_step: Option<u64>,
}

impl UdpState {
    /// Whether tokio's driver has reported the socket readable by `step`
    /// (asked only when it matters: it costs a look at the runtime).
    /// Linux has a datagram in the buffer as the send returns, but tokio
    /// learns of it at its driver's next turn: a datagram that arrived
    /// during the current step (a loopback send of no latency, in the very
    /// poll that then receives) is seen from the next one.
    #[inline]
    pub(crate) fn sees(&mut self, step: impl FnOnce() -> u64) -> bool {
        if !self.seen {
            let step = step();
            match self.unseen_since_step {
                Some(since) if since < step => {
                    self.seen = true;
                    self.unseen_since_step = None;
                }
                // Data left after readiness was cleared: reported at the
                // next turn, as epoll would report it again.
                None if !self.queue.is_empty() => self.unseen_since_step = Some(step),
                _ => {}
            }
        }
        self.seen
    }

    /// Whether a datagram came during `step` (asked only when it matters)
    /// that the driver has not reported: a wait for it is a wait for the
    /// driver's next turn.
    #[inline]
    pub(crate) fn arrived_unseen_at(&self, step: impl FnOnce() -> u64) -> bool {
        !self.seen && self.unseen_since_step.is_some_and(|since| since == step())
    }

    /// A datagram or an error arrived during `step` (asked only when it
    /// matters): counted, and its waiters woken.
    pub(crate) fn arrived(&mut self, step: impl FnOnce() -> u64) {
        if !self.seen && self.unseen_since_step.is_none() {
            self.unseen_since_step = Some(step());
        }
        self.arrivals += 1;
        if let Some(w) = self.waker.take() {
            w.wake();
        }
        if let Some(w) = self.fd_watch_read.take() {
            w.wake();
        }
    }
}

impl TcpListenerState {
    /// A connection reached the backlog: counted, and the `AsyncFd`
    /// watching woken (the accepters are the caller's to wake).
    pub(crate) fn arrived(&mut self) {
        self.arrivals += 1;
        if let Some(w) = self.fd_watch_read.take() {
            w.wake();
        }
    }
}

pub(crate) struct Datagram {
    /// The network's message number (copies of a duplicate share it).
    pub(crate) msg: u64,
    pub(crate) from_host: u32,
    pub(crate) to_host: u32,
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) data: crate::payload::Payload,
}

// ----- Unix datagrams -----------------------------------------------------------

/// Datagrams a Unix datagram socket holds before senders wait.
pub const UNIX_QUEUE_MAX: usize = 1024;

pub(crate) struct UnixDatagramState {
    pub(crate) host: u32,
    pub(crate) path: Option<PathBuf>,
    pub(crate) peer: Option<PathBuf>,
    pub(crate) queue: VecDeque<(Vec<u8>, Option<PathBuf>)>,
    pub(crate) read_waker: Option<Waker>,
    pub(crate) send_wakers: Vec<Waker>,
    pub(crate) shut_read: bool,
    pub(crate) shut_write: bool,
    /// Datagrams that arrived so far, and the count at which `try_io`
    /// cleared read readiness.
    pub(crate) arrivals: u64,
    pub(crate) read_cleared_at: Option<u64>,
}
