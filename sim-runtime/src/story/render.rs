//! A story as a failure report's text: the last notes, the earlier faults
//! that touched the failing host or its peers, the messages a link still
//! holds, and the last crashes.

use super::entry::{Delivery, Entry, Sent, What, BY_CALLBACK};
use super::Story;
use crate::trace::cut_at_word;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// The longest a story line is: a longer one keeps its start and says how
/// long it was.
const LINE_BYTES_MAX: usize = 240;
/// How many held messages a report lists.
const HELD_LISTED_MAX: usize = 8;

/// `text` cut to `LINE_BYTES_MAX` bytes (see [`cut_at_word`]).
pub(crate) fn elide(text: &str) -> String {
    cut_at_word(text, LINE_BYTES_MAX)
}

/// A payload's first bytes as text, escaped as the trace shows them:
/// `data="ADD 1"`, with `...` when there is more.
fn push_data(out: &mut String, head: &[u8], len: u32) {
    let mut bytes = Vec::with_capacity(head.len() + 12);
    crate::trace::push_data(&mut bytes, head, head.len() < len as usize);
    // Escaped, every byte is printable ASCII.
    out.push_str(std::str::from_utf8(&bytes).expect("an escaped payload is ASCII"));
}

impl Story {
    /// `addr` as `name:port` for a named host's address.
    fn endpoint(&self, addr: &SocketAddr) -> String {
        match self.addrs.get(&addr.ip()) {
            Some((_, name)) => format!("{name}:{}", addr.port()),
            None => addr.to_string(),
        }
    }

    /// A message's text as the trace file shows it:
    /// `send #17 client:49152>store:9 len=13 data="ADD 1"` (the trace
    /// file's line has the payload's digest too).
    fn message_text(&self, verb: &str, sent: &Sent) -> String {
        let mut out = format!("{verb} #{}", sent.msg);
        if let Some((src, dst)) = &sent.ends {
            let _ = write!(out, " {}>{}", self.endpoint(src), self.endpoint(dst));
        }
        if sent.len > 0 || sent.head_len > 0 {
            let _ = write!(out, " len={}", sent.len);
            push_data(&mut out, sent.head(), sent.len);
        }
        out
    }

    /// A delivery: how long its message took from its first write, how
    /// much more than the link's least latency, whether a link held it,
    /// which copy it is and what later send it arrived after.
    fn delivery_text(&self, delivery: &Delivery, at_ns: u64, seq: u64) -> String {
        let Some(sent) = self.messages.get(delivery.msg) else {
            return format!("{} #{}", delivery.verb, delivery.msg);
        };
        let mut out = self.message_text(delivery.verb, sent);
        let took_ns = at_ns.saturating_sub(sent.first_ns);
        let _ = write!(out, " after {:?}", Duration::from_nanos(took_ns));
        if let Some(held_ns) = sent.held_ns {
            let _ = write!(out, ", held from {:?}", Duration::from_nanos(held_ns));
        }
        // Over a link of no least latency, "after" says it all.
        if let Some(least_ns) = sent.least_ns.filter(|&least| least > 0 && took_ns > least) {
            let _ = write!(
                out,
                ", late by {:?} over the link's least latency ({:?})",
                Duration::from_nanos(took_ns - least_ns),
                Duration::from_nanos(least_ns)
            );
        }
        if delivery.copy > 1 {
            let _ = write!(out, ", its copy {} (a duplicate)", delivery.copy);
        }
        if let Some((later, sent_ns)) = self.messages.overtaken_by(delivery.msg, seq) {
            let _ = write!(
                out,
                ", reordered: it arrived after #{later}, sent later (at {:?})",
                Duration::from_nanos(sent_ns)
            );
        }
        out
    }

    /// One note as a report's line: `t=212ms client: send #38 ... [task
    /// src/client.rs:40]`.
    fn line(&self, entry: &Entry) -> String {
        let text = match &entry.what {
            What::Text(text) | What::Fault(text) => text.to_string(),
            What::Send { verb, msg } => match self.messages.get(*msg) {
                Some(sent) => self.message_text(verb, sent),
                None => format!("{verb} #{msg}"),
            },
            What::Delivered(delivery) => self.delivery_text(delivery, entry.at_ns, entry.seq),
        };
        let mut line = format!("t={:?} ", Duration::from_nanos(entry.at_ns));
        let host = self.node_name(entry.node);
        if host != "main" {
            let _ = write!(line, "{host}: ");
        }
        line.push_str(&elide(&text));
        if entry.task != BY_CALLBACK {
            if let Some(name) = self.task_name(entry.task) {
                let _ = write!(line, " [task {name}]");
            }
        }
        line
    }

    /// The node of a simulated host's address.
    fn node_of(&self, addr: &SocketAddr) -> Option<u32> {
        self.addrs.get(&addr.ip()).map(|(node, _)| *node)
    }

    /// The hosts `node` exchanged the story's messages with (and the held
    /// ones).
    fn peers(&self, node: u32) -> BTreeSet<u32> {
        let ends = self
            .notes
            .iter()
            .filter_map(|entry| match &entry.what {
                What::Send { msg, .. } | What::Delivered(Delivery { msg, .. }) => {
                    self.messages.get(*msg).and_then(|s| s.ends)
                }
                _ => None,
            })
            .chain(self.messages.held_now().filter_map(|sent| sent.ends));
        let mut peers = BTreeSet::new();
        for (src, dst) in ends {
            match (self.node_of(&src), self.node_of(&dst)) {
                (Some(a), Some(b)) if a == node && b != node => peers.insert(b),
                (Some(a), Some(b)) if b == node && a != node => peers.insert(a),
                _ => false,
            };
        }
        peers
    }

    /// The faults before the last notes: the last ones of any host, and
    /// the last ones that touched `failing` or its peers, however far
    /// back. Returns the heading's hosts too.
    fn earlier_faults(&self, failing: Option<u32>) -> (Vec<&Entry>, Vec<u32>) {
        let first_shown = self.notes.oldest().map_or(u64::MAX, |e| e.seq);
        let involved: Vec<u32> = match failing {
            Some(node) => std::iter::once(node).chain(self.peers(node)).collect(),
            None => Vec::new(),
        };
        let mut faults: Vec<&Entry> = self
            .faults
            .iter()
            .chain(
                involved
                    .iter()
                    .filter_map(|&node| self.host_faults.get(node as usize))
                    .flatten(),
            )
            .filter(|fault| fault.seq < first_shown)
            .collect();
        faults.sort_by_key(|fault| fault.seq);
        faults.dedup_by_key(|fault| fault.seq);
        (faults, involved)
    }

    /// The report's text (see the module's docs); `failing` is the host of
    /// the failing task, when one failed. Empty when nothing was noted.
    pub fn report(&self, failing: Option<u32>) -> String {
        let mut out = String::new();
        if !self.notes.is_empty() {
            out.push_str("What happened before it:\n");
            for entry in self.notes.iter() {
                let _ = writeln!(out, "  {}", self.line(entry));
            }
        }
        let (faults, involved) = self.earlier_faults(failing);
        if !faults.is_empty() {
            let hosts: Vec<&str> = involved.iter().map(|&n| self.node_name(n)).collect();
            match hosts.split_first() {
                Some((host, [])) => {
                    let _ = writeln!(out, "Earlier faults (the last ones, and {host}'s):");
                }
                Some((host, peers)) => {
                    let _ = writeln!(
                        out,
                        "Earlier faults (the last ones, and those of {host} and its peers {}):",
                        peers.join(", ")
                    );
                }
                None => out.push_str("Earlier faults:\n"),
            }
            for fault in faults {
                let _ = writeln!(out, "  {}", self.line(fault));
            }
        }
        self.push_held(&mut out);
        let crashes = self.disk.lines(|node| self.node_name(node).to_string());
        if !crashes.is_empty() {
            let _ = writeln!(out, "The last crashes:\n  {}", crashes.join("\n  "));
        }
        out
    }

    /// The messages a link holds now.
    fn push_held(&self, out: &mut String) {
        let held: Vec<&Sent> = self.messages.held_now().collect();
        if held.is_empty() {
            return;
        }
        let _ = writeln!(out, "Held by a link, not delivered ({}):", held.len());
        for sent in held.iter().take(HELD_LISTED_MAX) {
            let since = Duration::from_nanos(sent.held_ns.unwrap_or(sent.first_ns));
            let _ = writeln!(
                out,
                "  {} since t={since:?}",
                self.message_text("held", sent)
            );
        }
        if held.len() > HELD_LISTED_MAX {
            let _ = writeln!(out, "  ... and {} more", held.len() - HELD_LISTED_MAX);
        }
    }

    /// The last crashes' lines (for a checker that reads them alone).
    pub fn crash_lines(&self) -> Vec<String> {
        self.disk.lines(|node| self.node_name(node).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_at_a_space_and_says_its_length() {
        let text = format!(
            "tcp-connect {} 127.0.0.1:49159>127.0.0.1:4000",
            "x".repeat(60)
        );
        let cut = cut_at_word(&text, 90);
        assert!(
            cut.ends_with(&format!("... ({} bytes)", text.len())),
            "{cut}"
        );
        assert!(
            !cut.contains("127.0.0.1:49159>"),
            "never inside an address: {cut}"
        );
        assert_eq!(cut_at_word("short", 90), "short");
        let word = "y".repeat(300);
        assert!(cut_at_word(&word, 100).starts_with(&"y".repeat(100)));
    }
}
