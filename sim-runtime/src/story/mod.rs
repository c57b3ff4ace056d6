//! The story of a run: what a failure report tells, whatever the failure's
//! class (a panic, a checker, a deadlock, a limit, a hang, an abort).
//!
//! The core tells the story each note as the trace records it (faults,
//! messages, disk operations, publications); spawns record their tasks'
//! origins in `origins`, which the story reads. The story keeps
//! them as parts, not text (a note costs a copy into a bounded ring, and
//! nothing is formatted until a report asks), in these bounded stores:
//! - the last notes ([`NOTES_MAX`]);
//! - the last faults of any host, and each host's last faults however far
//!   back, so a report always names the partition that started it;
//! - the messages still in flight or held by a link, paired with their
//!   delivery so it says how long it took, how much later than the link's
//!   least latency, which copy it was and what it overtook (see `messages`);
//! - each host's last disk operations before a crash (see `disk`);
//! - each task's name: its `Builder` name or its spawn site (`origins`).
//!
//! The hang watchdog, on a thread of its own, reads it when a poll never
//! returns: `shared` says how, without a lock on the core's side.

mod disk;
mod entry;
mod messages;
mod notes;
mod origins;
pub(crate) use origins::{LastOrigin, Origins};
mod render;
mod shared;
pub use shared::SharedStory;
pub(crate) use shared::WatchedStory;

use crate::trace::Message;
pub use entry::BY_CALLBACK;
use entry::{Entry, What};
use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// How many notes a report shows.
pub const NOTES_MAX: usize = 24;
/// How many of the last faults (of any host) a report shows.
const FAULTS_MAX: usize = 6;
/// How many faults each host keeps, however far back.
const HOST_FAULTS_MAX: usize = 3;

/// The story of one run (see the module's docs).
#[derive(Default)]
pub struct Story {
    notes: notes::Notes,
    faults: VecDeque<Entry>,
    /// Each host's last faults, by node.
    host_faults: Vec<VecDeque<Entry>>,
    messages: messages::Messages,
    disk: disk::Disk,
    /// Host names by node, and the node and name of each host's address.
    node_names: Vec<Box<str>>,
    addrs: BTreeMap<IpAddr, (u32, Box<str>)>,
    /// Each task's origin by id (shared with the cores, which record
    /// spawns there without this story's lock).
    origins: Arc<Origins>,
    /// Counts the notes: orders the faults kept apart from the last notes.
    seq: u64,
}

/// What a note says, as the core hands it on.
pub enum Told<'a> {
    /// A text note.
    Text(&'a str),
    /// A fault, and the hosts it touched.
    Fault(&'a str, &'a [u32]),
    /// A message (see [`crate::trace::Message`]).
    Message(&'a crate::trace::Message<'a>),
}

impl Story {
    /// A new story, shared.
    /// `origins` is where the run's spawns record their tasks.
    pub(crate) fn shared(origins: Arc<Origins>) -> SharedStory {
        SharedStory::new(Story {
            origins,
            ..Story::default()
        })
    }

    /// Names host `node`.
    pub fn name_node(&mut self, node: u32, name: &str) {
        let index = node as usize;
        if self.node_names.len() <= index {
            self.node_names.resize(index + 1, Box::from(""));
        }
        self.node_names[index] = name.into();
    }

    /// Names the host at `ip` (a host named before, by [`Story::name_node`];
    /// `main` is node 0).
    pub fn name_address(&mut self, ip: IpAddr, name: &str) {
        let node = self
            .node_names
            .iter()
            .rposition(|n| &**n == name)
            .map_or(0, |node| node as u32);
        self.addrs.insert(ip, (node, name.into()));
    }

    /// A note, at `at_ns` on `node` by `task`.
    pub fn tell(&mut self, at_ns: u64, node: u32, task: u64, told: Told<'_>) {
        self.seq += 1;
        let seq = self.seq;
        let what = match told {
            Told::Text(text) => {
                self.disk.follow(node, at_ns, text);
                self.messages.text(text, at_ns);
                What::Text(text.into())
            }
            Told::Fault(text, hosts) => {
                match hosts {
                    [host] if text.starts_with("crash ") => self.disk.crashed(*host, at_ns),
                    _ => self.disk.follow(node, at_ns, text),
                }
                let fault = Entry {
                    seq,
                    at_ns,
                    node,
                    task,
                    what: What::Fault(text.into()),
                };
                self.keep_fault(&fault, hosts);
                fault.what
            }
            Told::Message(message) => return self.tell_message(seq, at_ns, node, task, message),
        };
        self.notes.push(seq, at_ns, node, task, what);
    }

    /// A message's note (the hot path: every send and delivery): its
    /// entry is written in place.
    fn tell_message(&mut self, seq: u64, at_ns: u64, node: u32, task: u64, message: &Message) {
        let (verb, msg) = (message.verb, message.msg);
        if matches!(verb, "deliver" | "deliver udp") {
            let copy = self.messages.delivered(message, seq);
            let entry = self.notes.next_entry(seq, at_ns, node, task);
            entry.what = What::Delivered(entry::Delivery { verb, msg, copy });
        } else {
            self.messages.sent(message, at_ns);
            let entry = self.notes.next_entry(seq, at_ns, node, task);
            entry.what = What::Send { verb, msg };
        }
    }

    /// A message held by a link, with its payload (the note says only its
    /// number and ends).
    pub fn held(&mut self, at_ns: u64, msg: u64, ends: (SocketAddr, SocketAddr), data: &[u8]) {
        self.messages.held(msg, ends, data, at_ns);
    }

    fn keep_fault(&mut self, fault: &Entry, hosts: &[u32]) {
        if self.faults.len() == FAULTS_MAX {
            self.faults.pop_front();
        }
        self.faults.push_back(fault.clone());
        for &host in hosts {
            let index = host as usize;
            if self.host_faults.len() <= index {
                self.host_faults.resize_with(index + 1, VecDeque::new);
            }
            let kept = &mut self.host_faults[index];
            if kept.len() == HOST_FAULTS_MAX {
                kept.pop_front();
            }
            kept.push_back(fault.clone());
        }
    }

    /// A host's name (`main` for node 0 unless named).
    fn node_name(&self, node: u32) -> &str {
        match self.node_names.get(node as usize) {
            Some(name) if !name.is_empty() => name,
            _ if node == 0 => "main",
            _ => "?",
        }
    }

    /// Names each task of last-event lines, in place, by the name a user
    /// finds (`task 3 'src/client.rs:40'`).
    pub(crate) fn name_tasks(&self, lines: &mut [String]) {
        for line in lines {
            let Some((head, rest)) = line.split_once(" task ") else {
                continue;
            };
            let (id, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            if let Some(name) = id.parse::<u64>().ok().and_then(|id| self.task_name(id)) {
                *line = format!("{head} task {id} '{name}' {tail}");
            }
        }
    }

    /// Task `id` as a user finds it: its `Builder` name, or where it was
    /// spawned (`src/client.rs:40`); `None` for an unknown id.
    pub fn task_name(&self, id: u64) -> Option<String> {
        if id == 0 {
            return Some("root".to_string());
        }
        self.origins.task_name(id)
    }
}
