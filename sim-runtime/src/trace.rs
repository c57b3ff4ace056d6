//! The trace: every harness event of a run, in order, folded into SHA-256.
//!
//! An event is `(sequence number, virtual time, kind, task, label)`. The hash
//! covers a compact binary encoding of each event (kind and label form in a
//! byte, the task and the time since the previous event as LEB128 numbers,
//! then the label's parts; the sequence number is implied by the order), so
//! a run's hash is cheap to keep even when no file is written: a poll or a
//! wake hashes in about 3 bytes.
//!
//! With `SIM_TRACE=<path>` the events are also written as text, one per line:
//!
//! ```text
//! <seq> <ns> <seconds>s <host> <kind> <task>:<task name> <label>
//! 0 0 0.000000000s main spawn 1:worker worker@examples/src/main.rs:12:5
//! 1 0 0.000000000s main poll 0:root -
//! ```
//!
//! Task `0` is the future given to `block_on`; other tasks count up from 1 in
//! spawn order. The host is the task's (`main` for the root future, and for
//! the simulation's own callbacks). A label of `-` means none. Nothing in a
//! line depends on wall time, process ids or addresses, so one seed writes
//! the same file in every process. The hash covers each event's kind, task
//! id, virtual time and label, not the host or task names (they follow from
//! the spawn events) nor the payload bytes a network line shows.
//!
//! With `SIM_TRACE_LOGS`, the service's `tracing` events are lines too,
//! with `-` for the sequence number and `log` for the kind; they are not
//! events and the hash does not cover them (see [`crate::logs`]).
//!
//! Which file a run writes: a run on the process's main thread writes
//! `<path>` itself. A run on any other thread (the test harness runs each
//! test on a thread named after the test) writes `<path>.<thread name>`, with
//! characters other than `[A-Za-z0-9_.-]` turned into `_` (so
//! `tests::echo` becomes `<path>.tests__echo`). When one thread runs several
//! simulations one after another, the second writes `<name>.2`, the third
//! `<name>.3`, and so on. If `<path>` contains `{name}`, the thread's name is
//! put there instead of being appended.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

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
    /// The virtual clock jumped forward. Label: the new time in ns.
    Advance = 8,
    /// The run began. Label: the seed.
    Start = 9,
    /// The root future completed and the run ended.
    End = 10,
    /// A scheduled callback (network or disk event) ran. Label: what it was.
    Callback = 11,
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
            8 => EventKind::Advance,
            9 => EventKind::Start,
            10 => EventKind::End,
            11 => EventKind::Callback,
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
            EventKind::Advance => "advance",
            EventKind::Start => "start",
            EventKind::End => "end",
            EventKind::Callback => "callback",
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
/// simulated host's address as `name:port`, see [`Trace::name_address`]),
/// then ` len=<bytes> fnv=<hex>` when it has a payload; a file's line also
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
}

impl Message<'_> {
    /// The payload's length and FNV-1a digest, when it has one.
    #[inline]
    fn payload(&self) -> Option<(u32, u32)> {
        self.data.map(|d| (d.len() as u32, fnv32(d)))
    }
}

/// How many recent events a failure report shows.
const RECENT_MAX: usize = 16;
/// How many bytes of a recent event's text label a report shows.
const RECENT_LABEL_BYTES: usize = 40;

/// Bytes gathered before they are fed to the hasher: hashing in blocks of a
/// few KiB costs less per event than one `update` call per event.
const HASH_CHUNK_BYTES: usize = 4096;

/// The running trace of one simulation.
pub struct Trace {
    seq: u64,
    /// The previous event's virtual time (the hash encodes deltas).
    last_ns: u64,
    hasher: Sha256,
    pending: Vec<u8>,
    writer: Option<BufWriter<File>>,
    path: Option<PathBuf>,
    line: Vec<u8>,
    /// For the text file only: host names by node, and each task's node
    /// and name by id (task 0, the root future, is on node 0).
    node_names: Vec<String>,
    tasks: Vec<(u32, Box<str>)>,
    /// The chunk of encoded events hashed before `pending`, kept so that
    /// the last events can be decoded for a report (see `recent_lines`):
    /// the two chunks hold at least the last 4 KiB of events, so nothing
    /// is stored per event for reports.
    previous: Vec<u8>,
    /// The sequence number and time before the first event of `previous`
    /// and of `pending` (times are encoded as deltas).
    previous_start: (u64, u64),
    pending_start: (u64, u64),
    /// Host names by address, for messages' text (see [`Message`]).
    addr_names: BTreeMap<IpAddr, Box<str>>,
}

impl Trace {
    /// A trace that hashes, and writes to `path` when one is given.
    ///
    /// # Panics
    /// When the file cannot be created: the message names the path.
    pub fn new(path: Option<PathBuf>) -> Trace {
        let writer = path.as_ref().map(|path| {
            // The simulator's own file: always on the real disk, even
            // under the temporary directory or inside another run.
            let file = crate::files::outside(|| File::create(path)).unwrap_or_else(|error| {
                panic!(
                    "sim: cannot create the trace file {} (from SIM_TRACE): {error}",
                    path.display()
                )
            });
            BufWriter::with_capacity(1 << 16, file)
        });
        Trace {
            seq: 0,
            last_ns: 0,
            hasher: Sha256::new(),
            pending: Vec::with_capacity(HASH_CHUNK_BYTES + 256),
            writer,
            path,
            line: Vec::with_capacity(128),
            node_names: vec!["main".to_string()],
            tasks: vec![(0, "root".into())],
            previous: Vec::with_capacity(HASH_CHUNK_BYTES + 256),
            previous_start: (0, 0),
            pending_start: (0, 0),
            addr_names: BTreeMap::new(),
        }
    }

    /// Names the host at `ip`: a message's text shows its addresses as
    /// `name:port` (the hash covers the address itself).
    pub fn name_address(&mut self, ip: IpAddr, name: &str) {
        self.addr_names.insert(ip, name.into());
    }

    /// `addr` as the trace shows it: `name:port` for a named host's
    /// address (see [`Trace::name_address`]), as it is otherwise.
    pub fn describe_address(&self, addr: &SocketAddr) -> String {
        let mut text = Vec::new();
        push_endpoint(&mut text, &self.addr_names, addr);
        String::from_utf8_lossy(&text).into_owned()
    }

    /// The last events (at most 16), oldest first, one line each:
    /// `#<seq> <seconds>s <kind> task <id> <label>`, decoded from the last
    /// two chunks of encoded events (a text label is cut at 40 bytes; a
    /// message's is whole).
    pub fn recent_lines(&self) -> Vec<String> {
        let mut events = Vec::new();
        for (bytes, start) in [
            (&self.previous, self.previous_start),
            (&self.pending, self.pending_start),
        ] {
            decode_events(bytes, start, &self.addr_names, &mut events);
        }
        let skip = events.len().saturating_sub(RECENT_MAX);
        events
            .into_iter()
            .skip(skip)
            .map(|(seq, now_ns, kind, task, label, cut)| {
                let label = if cut && label.len() > RECENT_LABEL_BYTES {
                    let mut cut = RECENT_LABEL_BYTES;
                    while !label.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    format!("{}...", &label[..cut])
                } else if label.is_empty() {
                    "-".to_string()
                } else {
                    label
                };
                format!(
                    "#{seq} {}.{:09}s {} task {task} {label}",
                    now_ns / 1_000_000_000,
                    now_ns % 1_000_000_000,
                    kind.name(),
                )
            })
            .collect()
    }

    /// Feeds the pending bytes to the hasher; they become the previous
    /// chunk. `next_seq` and `last_ns` are where the next event starts.
    #[inline]
    fn flush_chunk(&mut self, next_seq: u64) {
        self.hasher.update(&self.pending);
        std::mem::swap(&mut self.previous, &mut self.pending);
        self.pending.clear();
        self.previous_start = self.pending_start;
        self.pending_start = (next_seq, self.last_ns);
    }

    /// Names host `node` in the text file's lines (the hash has no names).
    pub fn set_node_name(&mut self, node: u32, name: &str) {
        if self.writer.is_none() {
            return;
        }
        let index = node as usize;
        if self.node_names.len() <= index {
            self.node_names.resize(index + 1, String::new());
        }
        self.node_names[index] = name.to_string();
    }

    /// How many events were recorded.
    pub fn len(&self) -> u64 {
        self.seq
    }

    /// Whether no event was recorded yet.
    pub fn is_empty(&self) -> bool {
        self.seq == 0
    }

    /// The file this trace is written to, if any.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// Records one event.
    #[inline]
    pub fn record(&mut self, now_ns: u64, kind: EventKind, task: u64, label: Label<'_>) {
        // Each label form has its own tag and every field is self-delimiting
        // (LEB128 numbers, length-prefixed text), so no two different events
        // encode alike; times are deltas from the previous event, so most
        // events hash in 3 or 4 bytes. The fixed parts go to a buffer on
        // the stack, then to the pending bytes in one copy.
        let form = match label {
            Label::None => 0,
            Label::Str(_) => 1,
            Label::Num(_) => 2,
            Label::Timer { .. } => 3,
            Label::Msg(_) => 4,
        };
        let last_ns = self.last_ns;
        self.last_ns = now_ns;
        let mut text: &[u8] = &[];
        encode_into(&mut self.pending, |out| {
            begin_event(out, last_ns, now_ns, kind, form, task);
            match label {
                Label::None => {}
                Label::Str(label) => {
                    out.varint(label.len() as u64);
                    text = label.as_bytes();
                }
                Label::Num(value) => out.varint(value),
                Label::Timer { id, at_ns } => {
                    out.varint(id);
                    out.varint(at_ns.wrapping_sub(now_ns));
                }
                Label::Msg(message) => {
                    let verb = &message.verb.as_bytes()[..message.verb.len().min(VERB_MAX)];
                    out.byte(verb.len() as u8);
                    out.bytes(verb);
                    out.varint(message.msg);
                    match message.ends {
                        None => out.byte(0),
                        Some((src, dst)) => {
                            out.byte(1);
                            out.addr(&src);
                            out.addr(&dst);
                        }
                    }
                    match message.payload() {
                        None => out.byte(0),
                        Some((len, fnv)) => {
                            out.byte(1);
                            out.varint(u64::from(len));
                            out.bytes(&fnv.to_le_bytes());
                        }
                    }
                }
            }
        });
        self.pending.extend_from_slice(text);
        if self.pending.len() >= HASH_CHUNK_BYTES {
            self.flush_chunk(self.seq + 1);
        }
        if self.writer.is_some() {
            self.write_line(now_ns, kind, task, label);
        }
        self.seq += 1;
    }

    /// Writes a log line of the service (see [`crate::logs`]) into the
    /// file: `-` for its sequence number and `log` for its kind. Neither
    /// the hash nor the sequence counts it.
    pub fn log(&mut self, now_ns: u64, task: u64, text: &str) {
        if self.writer.is_none() {
            return;
        }
        self.begin_line_with(now_ns, "log", task);
        self.line[0] = b'-';
        let digits = self.line.iter().position(|&b| b == b' ').unwrap_or(1);
        self.line.drain(1..digits);
        let line = &mut self.line;
        line.extend(text.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
        self.end_line();
    }

    /// Starts a text line: `<seq> <ns> <seconds>s <host> <kind> <task>:<name> `.
    fn begin_line(&mut self, now_ns: u64, kind: EventKind, task: u64) {
        self.begin_line_with(now_ns, kind.name(), task);
    }

    fn begin_line_with(&mut self, now_ns: u64, kind: &str, task: u64) {
        let (node, name) = self
            .tasks
            .get(task as usize)
            .map_or((0, "?"), |(node, name)| (*node, &**name));
        let host = self
            .node_names
            .get(node as usize)
            .filter(|n| !n.is_empty())
            .map_or("?", String::as_str);
        let line = &mut self.line;
        line.clear();
        push_u64(line, self.seq);
        line.push(b' ');
        push_u64(line, now_ns);
        line.push(b' ');
        push_u64(line, now_ns / 1_000_000_000);
        line.push(b'.');
        let fraction = now_ns % 1_000_000_000;
        for divisor in [
            100_000_000,
            10_000_000,
            1_000_000,
            100_000,
            10_000,
            1_000,
            100,
            10,
            1,
        ] {
            line.push(b'0' + ((fraction / divisor) % 10) as u8);
        }
        line.extend_from_slice(b"s ");
        push_word(line, host);
        line.push(b' ');
        line.extend_from_slice(kind.as_bytes());
        line.push(b' ');
        push_u64(line, task);
        line.push(b':');
        push_word(line, name);
        line.push(b' ');
    }

    /// Ends the text line and writes it.
    fn end_line(&mut self) {
        self.line.push(b'\n');
        let writer = self.writer.as_mut().expect("checked by the caller");
        if let Err(error) = writer.write_all(&self.line) {
            panic!("sim: cannot write the trace file: {error}");
        }
    }

    #[cold]
    fn write_line(&mut self, now_ns: u64, kind: EventKind, task: u64, label: Label<'_>) {
        self.begin_line(now_ns, kind, task);
        let line = &mut self.line;
        match label {
            Label::None => line.push(b'-'),
            Label::Str("") => line.push(b'-'),
            Label::Str(text) => {
                line.extend(text.bytes().map(|b| if b == b'\n' { b' ' } else { b }))
            }
            Label::Num(value) => push_u64(line, value),
            Label::Msg(message) => {
                push_message_text(
                    line,
                    &self.addr_names,
                    message.verb,
                    message.msg,
                    message.ends,
                    message.payload(),
                );
                if let Some(data) = message.data {
                    push_payload(line, data);
                }
            }
            Label::Timer { id, at_ns } => {
                line.extend_from_slice(b"timer=");
                push_u64(line, id);
                line.extend_from_slice(b" at=");
                push_u64(line, at_ns);
            }
        }
        self.end_line();
    }

    #[cold]
    fn write_spawn_line(
        &mut self,
        now_ns: u64,
        task: u64,
        name: &str,
        location: &std::panic::Location<'_>,
    ) {
        self.begin_line(now_ns, EventKind::Spawn, task);
        let line = &mut self.line;
        line.extend_from_slice(name.as_bytes());
        line.push(b'@');
        line.extend_from_slice(location.file().as_bytes());
        line.push(b':');
        push_u64(line, u64::from(location.line()));
        line.push(b':');
        push_u64(line, u64::from(location.column()));
        self.end_line();
    }

    /// The SHA-256 of every event so far, in hex. The trace goes on.
    pub fn hash_hex(&self) -> String {
        let mut hasher = self.hasher.clone();
        hasher.update(&self.pending);
        hex(&hasher.finalize())
    }

    /// Flushes the trace file, if any.
    pub fn flush(&mut self) {
        if let Some(writer) = self.writer.as_mut() {
            if let Err(error) = writer.flush() {
                eprintln!("sim: cannot write the trace file: {error}");
            }
        }
    }
}

/// ` data="<first bytes, escaped>"`, `...` after it when there is more.
fn push_payload(line: &mut Vec<u8>, data: &[u8]) {
    line.extend_from_slice(b" data=\"");
    let shown = data.len().min(trace_bytes());
    for &b in &data[..shown] {
        match b {
            b'"' => line.extend_from_slice(b"\\\""),
            b'\\' => line.extend_from_slice(b"\\\\"),
            0x20..=0x7e => line.push(b),
            _ => {
                const DIGITS: &[u8; 16] = b"0123456789abcdef";
                line.extend_from_slice(b"\\x");
                line.push(DIGITS[(b >> 4) as usize]);
                line.push(DIGITS[(b & 15) as usize]);
            }
        }
    }
    line.push(b'"');
    if shown < data.len() {
        line.extend_from_slice(b"...");
    }
}

/// A message's text (see [`Message`]), without its payload's bytes.
/// A message's text from its parts (see [`Message`]).
fn push_message_text(
    line: &mut Vec<u8>,
    names: &BTreeMap<IpAddr, Box<str>>,
    verb: &str,
    msg: u64,
    ends: Option<(SocketAddr, SocketAddr)>,
    payload: Option<(u32, u32)>,
) {
    line.extend_from_slice(verb.as_bytes());
    line.extend_from_slice(b" #");
    push_u64(line, msg);
    if let Some((src, dst)) = ends {
        line.push(b' ');
        push_endpoint(line, names, &src);
        line.push(b'>');
        push_endpoint(line, names, &dst);
    }
    if let Some((len, fnv)) = payload {
        line.extend_from_slice(b" len=");
        push_u64(line, u64::from(len));
        line.extend_from_slice(b" fnv=");
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        for shift in (0..8).rev() {
            line.push(DIGITS[((fnv >> (shift * 4)) & 15) as usize]);
        }
    }
}

/// `name:port` for a named host's address, the address as it is otherwise.
fn push_endpoint(line: &mut Vec<u8>, names: &BTreeMap<IpAddr, Box<str>>, addr: &SocketAddr) {
    match names.get(&addr.ip()) {
        Some(name) => {
            line.extend_from_slice(name.as_bytes());
            line.push(b':');
            push_u64(line, u64::from(addr.port()));
        }
        None => line.extend_from_slice(addr.to_string().as_bytes()),
    }
}

/// Decodes the events of one chunk of the hash's encoding (see
/// `Trace::record`), appending `(seq, ns, kind, task, label text)`. `start`
/// is the sequence number and time before the chunk's first event. Stops
/// at anything it cannot read (it never can, for bytes the trace wrote).
fn decode_events(
    bytes: &[u8],
    start: (u64, u64),
    names: &BTreeMap<IpAddr, Box<str>>,
    out: &mut Vec<(u64, u64, EventKind, u64, String, bool)>,
) {
    let mut reader = Reader { bytes, at: 0 };
    let (mut seq, mut now_ns) = start;
    // Bounded by the chunk's length: every event reads at least one byte.
    while reader.at < bytes.len() {
        let Some(event) = reader.event(&mut now_ns, names) else {
            return;
        };
        out.push((seq, now_ns, event.0, event.1, event.2, event.3));
        seq += 1;
    }
}

/// Reads the hash's encoding back (for reports).
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let slice = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(slice)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn text(&mut self, len: usize) -> Option<String> {
        Some(String::from_utf8_lossy(self.take(len)?).into_owned())
    }

    fn addr(&mut self) -> Option<SocketAddr> {
        let ip = match self.byte()? {
            4 => IpAddr::from(<[u8; 4]>::try_from(self.take(4)?).ok()?),
            6 => IpAddr::from(<[u8; 16]>::try_from(self.take(16)?).ok()?),
            _ => return None,
        };
        let port = u16::from_le_bytes(self.take(2)?.try_into().ok()?);
        Some(SocketAddr::new(ip, port))
    }

    /// One event: its kind, task and label text; moves `now_ns` on.
    fn event(
        &mut self,
        now_ns: &mut u64,
        names: &BTreeMap<IpAddr, Box<str>>,
    ) -> Option<(EventKind, u64, String, bool)> {
        let head = self.byte()?;
        let kind = EventKind::from_code(head >> 3)?;
        let task = self.varint()?;
        *now_ns = now_ns.wrapping_add(self.varint()?);
        let form = head & 7;
        let label = match form {
            0 => String::new(),
            1 => {
                let len = self.varint()? as usize;
                self.text(len)?
            }
            2 => self.varint()?.to_string(),
            3 => {
                let id = self.varint()?;
                let at_ns = now_ns.wrapping_add(self.varint()?);
                format!("timer={id} at={at_ns}")
            }
            4 => {
                let verb_len = self.byte()? as usize;
                let verb = self.text(verb_len)?;
                let msg = self.varint()?;
                let ends = match self.byte()? {
                    0 => None,
                    _ => Some((self.addr()?, self.addr()?)),
                };
                let payload = match self.byte()? {
                    0 => None,
                    _ => {
                        let len = self.varint()? as u32;
                        let fnv = u32::from_le_bytes(self.take(4)?.try_into().ok()?);
                        Some((len, fnv))
                    }
                };
                let mut line = Vec::new();
                push_message_text(&mut line, names, &verb, msg, ends, payload);
                String::from_utf8_lossy(&line).into_owned()
            }
            5 => {
                // A spawn: the task's name (its site is in the trace file).
                let len = self.varint()? as usize;
                let name = self.text(len)?;
                let file_len = self.varint()? as usize;
                self.take(file_len)?;
                self.varint()?;
                self.varint()?;
                name
            }
            _ => return None,
        };
        // Free text is cut for a report; a message's text is shown whole.
        Some((kind, task, label, form != 4))
    }
}

/// The longest verb a message's hash takes (longer ones are cut: verbs are
/// the network's own short words).
const VERB_MAX: usize = 32;

/// The most bytes an event's fixed parts take: the head (21 at most) and a
/// message's parts (97 at most).
const ENCODED_MAX: usize = 128;

/// Writes an event's fixed parts straight into the pending bytes' spare
/// capacity (reserved for [`ENCODED_MAX`] first): no buffer to fill and
/// copy. Every write is bounds-checked against the spare slice.
struct Encoder<'a> {
    buf: &'a mut [std::mem::MaybeUninit<u8>],
    len: usize,
}

impl Encoder<'_> {
    #[inline]
    fn byte(&mut self, byte: u8) {
        self.buf[self.len].write(byte);
        self.len += 1;
    }

    #[inline]
    fn bytes(&mut self, bytes: &[u8]) {
        for (slot, &byte) in self.buf[self.len..self.len + bytes.len()]
            .iter_mut()
            .zip(bytes)
        {
            slot.write(byte);
        }
        self.len += bytes.len();
    }

    /// `value` in LEB128 (see [`push_varint`]).
    #[inline]
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.byte(value as u8 | 0x80);
            value >>= 7;
        }
        self.byte(value as u8);
    }

    /// An address: a family tag, the address's bytes, the port.
    #[inline]
    fn addr(&mut self, addr: &SocketAddr) {
        match addr.ip() {
            IpAddr::V4(v4) => {
                self.byte(4);
                self.bytes(&v4.octets());
            }
            IpAddr::V6(v6) => {
                self.byte(6);
                self.bytes(&v6.octets());
            }
        }
        self.bytes(&addr.port().to_le_bytes());
    }
}

/// The head of an event's encoding: kind and label form in one byte, the
/// task, the time since the previous event.
#[inline]
fn begin_event(
    out: &mut Encoder<'_>,
    last_ns: u64,
    now_ns: u64,
    kind: EventKind,
    form: u8,
    task: u64,
) {
    debug_assert!(now_ns >= last_ns, "virtual time never goes back");
    out.byte(((kind as u8) << 3) | form);
    out.varint(task);
    out.varint(now_ns.wrapping_sub(last_ns));
}

/// Runs `encode` on the spare capacity of `pending` and keeps what it wrote.
#[inline]
fn encode_into(pending: &mut Vec<u8>, encode: impl FnOnce(&mut Encoder<'_>)) {
    pending.reserve(ENCODED_MAX);
    let mut out = Encoder {
        buf: pending.spare_capacity_mut(),
        len: 0,
    };
    encode(&mut out);
    let written = out.len;
    debug_assert!(written <= ENCODED_MAX);
    // SAFETY: the encoder initialised exactly the first `written` bytes of
    // the spare capacity (each write went through `MaybeUninit::write`, in
    // order, with `len` counting them).
    unsafe { pending.set_len(pending.len() + written) };
}

/// `value` in LEB128: 7 bits a byte, low first, the top bit set on all
/// but the last.
#[inline]
fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn push_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[(byte >> 4) as usize] as char);
        out.push(DIGITS[(byte & 15) as usize] as char);
    }
    out
}

/// `name` as part of a file name: characters other than `[A-Za-z0-9_.-]`
/// become `_` (`tests::echo` becomes `tests__echo`).
pub fn file_name_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file a run writes its trace to, by the rule in the module docs.
///
/// `thread_name` is `None` for the main thread; `run_index` counts the
/// simulations this thread ran before, from 1.
pub fn trace_path(base: &str, thread_name: Option<&str>, run_index: u64) -> PathBuf {
    let mut path = match thread_name {
        None if base.contains("{name}") => base.replace("{name}", "main"),
        None => base.to_string(),
        Some(name) => {
            let clean = file_name_part(name);
            if base.contains("{name}") {
                base.replace("{name}", &clean)
            } else {
                format!("{base}.{clean}")
            }
        }
    };
    if run_index > 1 {
        path.push_str(&format!(".{run_index}"));
    }
    PathBuf::from(path)
}

impl Trace {
    /// Records a spawn without formatting its label unless a file is
    /// written: spawning is hot, and the hash needs only the parts.
    #[inline]
    pub fn record_spawn(
        &mut self,
        now_ns: u64,
        task: u64,
        meta: &crate::task::TaskMeta,
        node: u32,
    ) {
        let name = meta.name.as_deref().unwrap_or(meta.kind);
        let file = meta.location.file();
        // Form 5: name, file, line, column.
        let last_ns = self.last_ns;
        self.last_ns = now_ns;
        encode_into(&mut self.pending, |out| {
            begin_event(out, last_ns, now_ns, EventKind::Spawn, 5, task)
        });
        let out = &mut self.pending;
        push_varint(out, name.len() as u64);
        out.extend_from_slice(name.as_bytes());
        push_varint(out, file.len() as u64);
        out.extend_from_slice(file.as_bytes());
        push_varint(out, u64::from(meta.location.line()));
        push_varint(out, u64::from(meta.location.column()));
        if self.pending.len() >= HASH_CHUNK_BYTES {
            self.flush_chunk(self.seq + 1);
        }
        if self.writer.is_some() {
            let index = task as usize;
            if self.tasks.len() <= index {
                self.tasks.resize(index + 1, (0, "?".into()));
            }
            self.tasks[index] = (node, name.into());
            self.write_spawn_line(now_ns, task, name, meta.location);
        }
        self.seq += 1;
    }
}

/// How many payload bytes a trace line shows (`SIM_TRACE_BYTES`, default 32).
fn trace_bytes() -> usize {
    static BYTES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BYTES.get_or_init(|| {
        std::env::var("SIM_TRACE_BYTES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(32)
    })
}

/// FNV-1a over `data`: the short digest network lines carry.
pub fn fnv32(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// `word` with whitespace as `_`, so a line splits at its spaces.
fn push_word(out: &mut Vec<u8>, word: &str) {
    out.extend(
        word.bytes()
            .map(|b| if b.is_ascii_whitespace() { b'_' } else { b }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_events_hash_equal_and_labels_matter() {
        let mut a = Trace::new(None);
        let mut b = Trace::new(None);
        for t in [&mut a, &mut b] {
            t.record(0, EventKind::Spawn, 1, Label::Str("x"));
            t.record(5, EventKind::Poll, 1, Label::None);
        }
        assert_eq!(a.hash_hex(), b.hash_hex());
        a.record(6, EventKind::Wake, 1, Label::Str("ab"));
        b.record(6, EventKind::Wake, 1, Label::Str("ac"));
        assert_ne!(a.hash_hex(), b.hash_hex());
        assert_eq!(a.len(), 3);
    }

    /// The last events are decoded from the hash's own bytes, across a
    /// chunk boundary, with every label form.
    #[test]
    fn recent_lines_decode_the_last_events() {
        let mut t = Trace::new(None);
        let a: SocketAddr = "10.0.0.2:49152".parse().unwrap();
        let b: SocketAddr = "10.0.0.3:7".parse().unwrap();
        t.name_address(a.ip(), "client");
        // Enough events to flush a few chunks first.
        for i in 0..3_000u64 {
            t.record(i * 10, EventKind::Poll, i % 7, Label::None);
        }
        let base = 30_000;
        t.record(
            base,
            EventKind::Wake,
            3,
            Label::Str("a label longer than forty bytes, which a report cuts"),
        );
        t.record(base + 5, EventKind::Advance, 0, Label::Num(base + 5));
        t.record(
            base + 5,
            EventKind::TimerSet,
            2,
            Label::Timer {
                id: 9,
                at_ns: base + 1_000,
            },
        );
        let message = Message {
            verb: "send",
            msg: 4,
            ends: Some((a, b)),
            data: Some(b"hello"),
        };
        t.record(base + 6, EventKind::Note, 2, Label::Msg(&message));
        let lines = t.recent_lines();
        assert_eq!(lines.len(), 16);
        assert_eq!(lines[11], "#2999 0.000029990s poll task 3 -");
        assert_eq!(
            lines[12],
            "#3000 0.000030000s wake task 3 a label longer than forty bytes, which a..."
        );
        assert_eq!(lines[13], "#3001 0.000030005s advance task 0 30005");
        assert_eq!(
            lines[14],
            "#3002 0.000030005s timer-set task 2 timer=9 at=31000"
        );
        assert_eq!(
            lines[15],
            format!(
                "#3003 0.000030006s note task 2 send #4 client:49152>10.0.0.3:7 len=5 fnv={:08x}",
                fnv32(b"hello")
            )
        );
    }

    #[test]
    fn trace_paths_follow_the_documented_rule() {
        assert_eq!(trace_path("t.txt", None, 1), PathBuf::from("t.txt"));
        assert_eq!(trace_path("t.txt", None, 2), PathBuf::from("t.txt.2"));
        assert_eq!(
            trace_path("t.txt", Some("tests::echo"), 1),
            PathBuf::from("t.txt.tests__echo")
        );
        assert_eq!(
            trace_path("out/{name}.trace", Some("a::b"), 3),
            PathBuf::from("out/a__b.trace.3")
        );
    }

    #[test]
    fn numbers_print_in_decimal() {
        let mut out = Vec::new();
        push_u64(&mut out, 0);
        out.push(b' ');
        push_u64(&mut out, u64::MAX);
        assert_eq!(out, b"0 18446744073709551615");
    }
}
