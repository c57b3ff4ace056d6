//! What the trace records: the kinds of events, their labels, and the
//! network messages a label can carry.

use super::digest::payload_digest;
use std::net::SocketAddr;

/// The kind of a harness event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    /// A task was created. Label: `name@file:line:col`.
    Spawn = 1,
    /// The scheduler chose a task and polled it.
    Poll = 2,
    /// A task was queued to run by a wake.
    Wake = 3,
    /// A task's future returned `Ready` (or panicked).
    Complete = 4,
    /// A task was cancelled (aborted, or dropped with its runtime).
    Cancel = 5,
    /// A timer was registered. Label: its id and deadline in ns.
    TimerSet = 6,
    /// A timer fired. Label: its id.
    TimerFire = 7,
    /// The run began. Label: the seed.
    Start = 9,
    /// The root future completed and the run ended.
    End = 10,
    /// An event of a subsystem above the runtime (network, filesystem).
    /// Label: what happened.
    Note = 12,
}

impl EventKind {
    /// The kind with the code `code` (its `repr(u8)` value).
    pub fn from_code(code: u8) -> Option<EventKind> {
        Some(match code {
            1 => EventKind::Spawn,
            2 => EventKind::Poll,
            3 => EventKind::Wake,
            4 => EventKind::Complete,
            5 => EventKind::Cancel,
            6 => EventKind::TimerSet,
            7 => EventKind::TimerFire,
            9 => EventKind::Start,
            10 => EventKind::End,
            12 => EventKind::Note,
            _ => return None,
        })
    }

    /// The word used for this kind in a trace file.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Spawn => "spawn",
            EventKind::Poll => "poll",
            EventKind::Wake => "wake",
            EventKind::Complete => "complete",
            EventKind::Cancel => "cancel",
            EventKind::TimerSet => "timer-set",
            EventKind::TimerFire => "timer-fire",
            EventKind::Start => "start",
            EventKind::End => "end",
            EventKind::Note => "note",
        }
    }
}

/// The label of an event: kept as parts, so that hashing needs no
/// formatting and the text form is built only when a file is written.
#[derive(Clone, Copy, Debug)]
pub enum Label<'a> {
    /// No label (written as `-`).
    None,
    /// Free text.
    Str(&'a str),
    /// A number (a timer id, a time in ns).
    Num(u64),
    /// A message of the network (see [`Message`]): its parts are hashed
    /// as they are, and its text is built only for a file or a report.
    Msg(&'a Message<'a>),
    /// A timer's id and deadline (written as `timer=<id> at=<ns>`).
    Timer {
        /// The timer's id (its event sequence number).
        id: u64,
        /// Its deadline in ns of virtual time.
        at_ns: u64,
    },
}

/// A network event about one message, kept as parts: the hash covers them
/// in binary, so sending a message formats nothing. Its text is
/// `<verb> #<msg>`, then ` <src>><dst>` when it has the addresses (a
/// simulated host's address as `name:port`, see [`super::Trace::name_address`]),
/// then ` len=<bytes> digest=<hex>` when it has a payload; a file's line also
/// shows the payload's first `SIM_TRACE_BYTES` bytes (default 32), escaped:
/// `data="..."`.
#[derive(Clone, Copy, Debug)]
pub struct Message<'a> {
    /// What happened to the message (`send`, `deliver udp`).
    pub verb: &'static str,
    /// The message's number in the run (it pairs a send with its delivery).
    pub msg: u64,
    /// Source and destination, when the event names them.
    pub ends: Option<(SocketAddr, SocketAddr)>,
    /// The payload, when the event carries it.
    pub data: Option<&'a [u8]>,
    /// The least latency of the link a send crosses, when the event is a
    /// send: not hashed, for failure reports (how late a delivery was).
    pub least_ns: Option<u64>,
}

impl Message<'_> {
    /// The payload's length and digest ([`payload_digest`]), when it has
    /// one.
    #[inline]
    pub(crate) fn payload(&self) -> Option<(u32, u32)> {
        self.data.map(|d| (d.len() as u32, payload_digest(d)))
    }
}
