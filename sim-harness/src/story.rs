//! The story a failure report tells: the run's last notes (faults by what
//! they did, messages with their ends and first bytes, disk operations by
//! path, publications), each with its virtual time and host. A delivery is
//! paired with its send, so it reads `deliver #17 client0:49152>server:7
//! len=13 ... data="ADD client0 2" after 35.6ms`, not a bare number.
//!
//! Installed only for a run that has checkers or liveness properties: the
//! core tells it each note's text ([`sim_runtime::Core::watch_notes`]),
//! and other runs pay nothing.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

/// How many notes the story keeps.
pub(crate) const STORY_MAX: usize = 24;

/// The longest a story line is: a longer one keeps its start and says how
/// long it was.
const LINE_BYTES_MAX: usize = 240;

/// How many sends wait for their delivery to be paired (older ones are
/// forgotten: a message lost long ago).
const SENDS_MAX: usize = 4_096;

struct Sent {
    first: Duration,
    what: String,
    held: bool,
}

/// How many disk operations of each host a crash report shows before the
/// crash.
const DISK_OPS_BEFORE_CRASH: usize = 6;

/// How many crashes the report describes (the last ones).
const CRASHES_MAX: usize = 4;

/// A crash, the disk operations of its host just before it, and what its
/// disk kept.
struct Crash {
    head: String,
    before: Vec<String>,
    resolution: Vec<String>,
}

#[derive(Default)]
struct Story {
    lines: RefCell<VecDeque<String>>,
    /// Each host's last disk operations (`fs ...` notes of its tasks).
    disk_ops: RefCell<BTreeMap<String, VecDeque<String>>>,
    crashes: RefCell<VecDeque<Crash>>,
    /// The notes right after a crash that resolve its disk (`fs crash`).
    resolving: std::cell::Cell<bool>,
    /// Unpaired sends: message number -> when it was first written (held
    /// by a partition, or sent), what the send said after its number, and
    /// whether a link held it.
    sends: RefCell<BTreeMap<u64, Sent>>,
}

fn story() -> Option<Rc<Story>> {
    sim_runtime::context::with_current(|core| core.extension(Story::default))
}

/// Starts telling the story of the current run.
pub(crate) fn install() {
    let Some(story) = story() else { return };
    let weak = Rc::downgrade(&story);
    sim_runtime::context::with_current(|core| {
        core.watch_notes(Some(Rc::new(move |text: &str| {
            if let Some(story) = weak.upgrade() {
                story.tell(text);
            }
        })));
    });
}

/// The story so far, oldest first (empty when it was not installed).
pub(crate) fn lines() -> Vec<String> {
    story().map_or_else(Vec::new, |s| s.lines.borrow().iter().cloned().collect())
}

/// The run's last crashes, each with the disk operations its host made
/// just before it and what its disk kept: where a crash fell between two
/// operations (a truncate, then the crash, before a rename).
pub(crate) fn crash_lines() -> Vec<String> {
    let Some(story) = story() else {
        return Vec::new();
    };
    let crashes = story.crashes.borrow();
    let mut lines = Vec::new();
    for crash in crashes.iter() {
        lines.push(crash.head.clone());
        if crash.before.is_empty() {
            lines.push("  no disk operation of the host before it".to_string());
        } else {
            lines.push("  the host's last disk operations before it:".to_string());
            lines.extend(crash.before.iter().map(|op| format!("    {op}")));
        }
        if !crash.resolution.is_empty() {
            lines.push("  what its disk kept:".to_string());
            lines.extend(crash.resolution.iter().map(|r| format!("    {r}")));
        }
    }
    lines
}

/// `text` cut to `LINE_BYTES_MAX` bytes, saying how long it was.
pub(crate) fn elide(text: &str) -> String {
    if text.len() <= LINE_BYTES_MAX {
        return text.to_string();
    }
    let mut cut = LINE_BYTES_MAX;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &text[..cut], text.len())
}

/// The number of a message note (`send #17 ...`, `deliver #17`), and what
/// follows it.
fn message(text: &str, verb: &str) -> Option<(u64, String)> {
    let rest = text.strip_prefix(verb)?.strip_prefix(" #")?;
    let end = rest.find(' ').unwrap_or(rest.len());
    let number = rest[..end].parse().ok()?;
    Some((number, rest[end..].to_string()))
}

/// A delivery's line: what its send said, and how long it took from its
/// first write (held by a link first, when it was).
fn delivered(head: &str, rest: &str, sent: &Sent, now: Duration) -> String {
    let held = if sent.held {
        format!(", held from {:?}", sent.first)
    } else {
        String::new()
    };
    format!(
        "{head}{}{rest} after {:?}{held}",
        sent.what,
        now - sent.first
    )
}

impl Story {
    /// Keeps each host's last disk operations, and a crash with them.
    fn follow_disk(&self, host: &str, now: Duration, text: &str) {
        if let Some(rest) = text.strip_prefix("fs crash ") {
            if self.resolving.get() {
                if let Some(crash) = self.crashes.borrow_mut().back_mut() {
                    crash.resolution.push(elide(&format!("fs crash {rest}")));
                }
            }
            return;
        }
        self.resolving.set(false);
        if text.starts_with("fs ") {
            let mut ops = self.disk_ops.borrow_mut();
            let ops = ops.entry(host.to_string()).or_default();
            if ops.len() == DISK_OPS_BEFORE_CRASH {
                ops.pop_front();
            }
            ops.push_back(format!("t={now:?} {}", elide(text)));
        } else if let Some(name) = text.strip_prefix("crash ") {
            let before = self
                .disk_ops
                .borrow_mut()
                .remove(name)
                .map(Vec::from)
                .unwrap_or_default();
            let mut crashes = self.crashes.borrow_mut();
            if crashes.len() == CRASHES_MAX {
                crashes.pop_front();
            }
            crashes.push_back(Crash {
                head: format!("crash {name} at t={now:?}"),
                before,
                resolution: Vec::new(),
            });
            self.resolving.set(true);
        }
    }

    fn tell(&self, text: &str) {
        let now = crate::observe::now();
        let host = sim_net::try_with_net(|net| net.host_name(net.current_host()))
            .unwrap_or_else(|| "main".to_string());
        let told = if let Some((number, _)) =
            message(text, "hold tcp-data").or_else(|| message(text, "hold udp"))
        {
            // Held by a link: its send (later, at the heal) counts from here.
            let mut sends = self.sends.borrow_mut();
            if sends.len() >= SENDS_MAX {
                sends.pop_first();
            }
            sends.entry(number).or_insert(Sent {
                first: now,
                what: String::new(),
                held: true,
            });
            text.to_string()
        } else if let Some((number, rest)) =
            message(text, "send").or_else(|| message(text, "send udp"))
        {
            let mut sends = self.sends.borrow_mut();
            if sends.len() >= SENDS_MAX {
                sends.pop_first();
            }
            let sent = sends.entry(number).or_insert(Sent {
                first: now,
                what: String::new(),
                held: false,
            });
            sent.what = rest;
            text.to_string()
        } else if let Some((number, rest)) = message(text, "deliver") {
            match self.sends.borrow_mut().remove(&number) {
                Some(sent) => delivered(&format!("deliver #{number}"), &rest, &sent, now),
                None => text.to_string(),
            }
        } else if let Some((number, rest)) = message(text, "deliver udp") {
            // A duplicate is delivered twice: the send stays known.
            match self.sends.borrow().get(&number) {
                Some(sent) => delivered(&format!("deliver udp #{number}"), &rest, sent, now),
                None => text.to_string(),
            }
        } else {
            text.to_string()
        };
        self.follow_disk(&host, now, text);
        let line = if host == "main" {
            format!("t={now:?} {}", elide(&told))
        } else {
            format!("t={now:?} {host}: {}", elide(&told))
        };
        let mut lines = self.lines.borrow_mut();
        if lines.len() == STORY_MAX {
            lines.pop_front();
        }
        lines.push_back(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_note_gives_its_number_and_the_rest() {
        assert_eq!(
            message("send #17 a:1>b:2 len=3", "send"),
            Some((17, " a:1>b:2 len=3".to_string()))
        );
        assert_eq!(message("deliver #17", "deliver"), Some((17, String::new())));
        assert_eq!(message("publish a x=1", "send"), None);
    }

    #[test]
    fn a_long_line_keeps_its_start_and_says_its_length() {
        let long = "x".repeat(1_000);
        let cut = elide(&long);
        assert!(cut.starts_with(&"x".repeat(LINE_BYTES_MAX)));
        assert!(cut.ends_with("... (1000 bytes)"), "{cut}");
        assert_eq!(elide("short"), "short");
    }
}
