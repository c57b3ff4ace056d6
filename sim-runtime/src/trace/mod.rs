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
//! events and the hash does not cover them (the OS layer's `tracing` capture).
//!
//! Which file a run writes: a run on the process's main thread writes
//! `<path>` itself. A run on any other thread (the test harness runs each
//! test on a thread named after the test) writes `<path>.<thread name>`, with
//! characters other than `[A-Za-z0-9_.-]` turned into `_` (so
//! `tests::echo` becomes `<path>.tests__echo`). When one thread runs several
//! simulations one after another, the second writes `<name>.2`, the third
//! `<name>.3`, and so on. If `<path>` contains `{name}`, the thread's name is
//! put there instead of being appended.
//!
//! The module's files: [`event`] (kinds and labels), `codec` (the hash's
//! encoding, read back for reports), `text` (the file's lines) and
//! `path` (which file a run writes).

mod codec;
pub mod compare;
mod digest;
pub mod event;
mod path;
mod text;

pub use digest::payload_digest;
pub use event::{EventKind, Label, Message};
pub use path::{file_name_part, trace_path};
pub use text::cut_at_word;
pub(crate) use text::push_data;

use codec::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use text::*;

/// How many recent events a failure report shows.
const RECENT_MAX: usize = 16;
/// How many bytes of a recent event's text label a report shows (cut at a
/// space, never inside an address).
const RECENT_LABEL_BYTES: usize = 120;

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
    /// Host names by address, for messages' text (see [`Message`]);
    /// shared with the snapshots of the last events (`recent_snapshot`).
    addr_names: Arc<BTreeMap<IpAddr, Box<str>>>,
}

/// The last two chunks of a trace's encoding, as a run's end keeps them
/// (see [`Trace::recent_snapshot`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct RecentEvents {
    previous: (Vec<u8>, (u64, u64)),
    pending: (Vec<u8>, (u64, u64)),
    addr_names: Arc<BTreeMap<IpAddr, Box<str>>>,
}

impl RecentEvents {
    /// The lines [`Trace::recent_lines`] gave when this was kept.
    pub(crate) fn lines(&self) -> Vec<String> {
        recent_lines_of(
            [
                (&self.previous.0, self.previous.1),
                (&self.pending.0, self.pending.1),
            ],
            &self.addr_names,
        )
    }
}

/// The last events (at most [`RECENT_MAX`]) of two chunks, as
/// [`Trace::recent_lines`] shows them.
fn recent_lines_of(
    chunks: [(&Vec<u8>, (u64, u64)); 2],
    names: &BTreeMap<IpAddr, Box<str>>,
) -> Vec<String> {
    // Read past every event once to find the last ones, whose labels alone
    // are made: most of the two chunks' events are never shown.
    let mut end_seq = 0;
    for (bytes, start) in chunks {
        end_seq = decode_events(bytes, start, names, u64::MAX, &mut Vec::new());
    }
    let from_seq = end_seq.saturating_sub(RECENT_MAX as u64);
    let mut events = Vec::new();
    for (bytes, start) in chunks {
        decode_events(bytes, start, names, from_seq, &mut events);
    }
    let skip = events.len().saturating_sub(RECENT_MAX);
    events
        .into_iter()
        .skip(skip)
        .map(|(seq, now_ns, kind, task, label, cut)| {
            let label = if cut && label.len() > RECENT_LABEL_BYTES {
                cut_at_word(&label, RECENT_LABEL_BYTES)
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

impl Trace {
    /// A trace that hashes, and writes to `path` when one is given.
    ///
    /// # Panics
    /// When the file cannot be created: the message names the path.
    pub fn new(path: Option<PathBuf>) -> Trace {
        let writer = path.as_ref().map(|path| {
            // The simulator's own file: always on the real disk, even
            // under the temporary directory or inside another run.
            let file = crate::outside::outside(|| File::create(path)).unwrap_or_else(|error| {
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
            addr_names: Arc::default(),
        }
    }

    /// Names the host at `ip`: a message's text shows its addresses as
    /// `name:port` (the hash covers the address itself).
    pub fn name_address(&mut self, ip: IpAddr, name: &str) {
        Arc::make_mut(&mut self.addr_names).insert(ip, name.into());
    }

    /// `addr` as the trace shows it: `name:port` for a named host's
    /// address (see [`Trace::name_address`]), as it is otherwise.
    pub fn describe_address(&self, addr: &SocketAddr) -> String {
        let mut text = Vec::new();
        push_endpoint(&mut text, &self.addr_names, addr);
        String::from_utf8_lossy(&text).into_owned()
    }

    /// A label's text as a trace file's line shows it (a message with its
    /// ends and its first `SIM_TRACE_BYTES` bytes).
    pub fn label_text(&self, label: &Label<'_>) -> String {
        match label {
            Label::None => String::new(),
            Label::Str(text) => (*text).to_string(),
            Label::Num(n) => n.to_string(),
            Label::Timer { id, at_ns } => format!("timer={id} at={at_ns}"),
            Label::Msg(message) => {
                let mut line = Vec::new();
                push_message_text(
                    &mut line,
                    &self.addr_names,
                    message.verb,
                    message.msg,
                    message.ends,
                    message.payload(),
                );
                if let Some(data) = message.data {
                    push_payload(&mut line, data);
                }
                String::from_utf8_lossy(&line).into_owned()
            }
        }
    }

    /// The last events (at most 16), oldest first, one line each:
    /// `#<seq> <seconds>s <kind> task <id> <label>`, decoded from the last
    /// two chunks of encoded events (a text label is cut near 120 bytes, at a
    /// space; a message's is whole).
    pub fn recent_lines(&self) -> Vec<String> {
        recent_lines_of(
            [
                (&self.previous, self.previous_start),
                (&self.pending, self.pending_start),
            ],
            &self.addr_names,
        )
    }

    /// What [`Trace::recent_lines`] reads, kept for later: a run's end
    /// keeps it, and decodes it only if a report asks (most runs pass).
    pub(crate) fn recent_snapshot(&self) -> RecentEvents {
        RecentEvents {
            previous: (self.previous.clone(), self.previous_start),
            pending: (self.pending.clone(), self.pending_start),
            addr_names: self.addr_names.clone(),
        }
    }

    /// Feeds the pending bytes to the hasher; they become the previous
    /// chunk. `next_seq` and `last_ns` are where the next event starts.
    #[inline]
    fn flush_chunk(&mut self, next_seq: u64) {
        self.hasher.update(digest::chunk_digest(&self.pending));
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
                        Some((len, digest)) => {
                            out.byte(1);
                            out.varint(u64::from(len));
                            out.bytes(&digest.to_le_bytes());
                        }
                    }
                }
            }
        });
        // Only free text has bytes to add (a copy of nothing is a call).
        if !text.is_empty() {
            self.pending.extend_from_slice(text);
        }
        if self.pending.len() >= HASH_CHUNK_BYTES {
            self.flush_chunk(self.seq + 1);
        }
        if self.writer.is_some() {
            self.write_line(now_ns, kind, task, label);
        }
        self.seq += 1;
    }

    /// Writes a log line of the service (the OS layer's `tracing` capture) into the
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
        hasher.update(digest::chunk_digest(&self.pending));
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

#[cfg(test)]
mod tests;
