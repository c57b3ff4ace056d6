//! One note of the story, kept as parts until a report formats it.

use std::net::SocketAddr;

/// How many bytes of a payload a report shows.
pub(crate) const HEAD_BYTES: usize = 40;

/// The task of a note made by a callback of the simulation (a delivery,
/// a fault, a disk outcome), not by a task.
pub const BY_CALLBACK: u64 = u64::MAX;

/// A note: when, on which host, by which task, and what it said.
#[derive(Clone)]
pub(crate) struct Entry {
    /// Its number among the run's notes.
    pub(crate) seq: u64,
    pub(crate) at_ns: u64,
    pub(crate) node: u32,
    /// The task that made it, or [`BY_CALLBACK`].
    pub(crate) task: u64,
    pub(crate) what: What,
}

/// What a note said.
#[derive(Clone)]
pub(crate) enum What {
    Text(Box<str>),
    /// A fault (the hosts it touched are kept apart, see `Story`).
    Fault(Box<str>),
    /// A message sent (or another event of one, by its verb): its parts
    /// are kept by number (see `messages`).
    Send {
        verb: &'static str,
        msg: u64,
    },
    /// A message delivered.
    Delivered(Delivery),
}

/// Where a sent message is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flight {
    /// Held by a cut or held link since `held_ns`.
    Held,
    /// On its way (perhaps sent again after a hold).
    Sent,
}

/// A message as its send saw it.
#[derive(Clone, Copy)]
pub(crate) struct Sent {
    pub(crate) verb: &'static str,
    pub(crate) msg: u64,
    pub(crate) ends: Option<(SocketAddr, SocketAddr)>,
    pub(crate) len: u32,
    pub(crate) head: [u8; HEAD_BYTES],
    pub(crate) head_len: u8,
    /// When it was first written: held by a link, or sent.
    pub(crate) first_ns: u64,
    /// When a link first held it, if one did.
    pub(crate) held_ns: Option<u64>,
    pub(crate) flight: Flight,
    /// The link's least latency when it was sent.
    pub(crate) least_ns: Option<u64>,
    /// How many copies the network sends (2 for a duplicated datagram),
    /// and how many were delivered.
    pub(crate) copies: u8,
    pub(crate) delivered: u8,
    /// The note number of its first delivery.
    pub(crate) delivered_seq: Option<u64>,
}

impl Sent {
    pub(crate) fn new(verb: &'static str, msg: u64, at_ns: u64) -> Sent {
        Sent {
            verb,
            msg,
            ends: None,
            len: 0,
            head: [0; HEAD_BYTES],
            head_len: 0,
            first_ns: at_ns,
            held_ns: None,
            flight: Flight::Sent,
            least_ns: None,
            copies: 1,
            delivered: 0,
            delivered_seq: None,
        }
    }

    /// Keeps the payload's length and first bytes (a report shows no
    /// digest: the data says more).
    pub(crate) fn set_payload(&mut self, data: &[u8]) {
        self.len = data.len() as u32;
        let shown = data.len().min(HEAD_BYTES);
        self.head[..shown].copy_from_slice(&data[..shown]);
        self.head_len = shown as u8;
    }

    pub(crate) fn head(&self) -> &[u8] {
        &self.head[..self.head_len as usize]
    }
}

/// A delivery: which message, and which copy (what it arrived after is
/// found when a report is written).
#[derive(Clone, Copy)]
pub(crate) struct Delivery {
    pub(crate) verb: &'static str,
    pub(crate) msg: u64,
    /// Which copy this is (2: the duplicate).
    pub(crate) copy: u8,
}
