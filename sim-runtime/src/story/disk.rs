//! Crashes and the disk: each host's last disk operations (the `fs ...`
//! notes of its tasks), so a crash's report says where it fell between two
//! operations (a truncate, then the crash, before a rename), and what its
//! disk kept (the `fs crash ...` notes right after it).

use super::render::elide;
use std::collections::{BTreeMap, VecDeque};

/// How many disk operations of each host a crash report shows before the
/// crash.
const DISK_OPS_BEFORE_CRASH: usize = 6;
/// How many crashes a report describes (the last ones).
const CRASHES_MAX: usize = 4;

/// A crash, the disk operations of its host just before it, and what its
/// disk kept.
struct Crash {
    node: u32,
    at_ns: u64,
    before: Vec<String>,
    resolution: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Disk {
    /// Each host's last disk operations, by node.
    ops: BTreeMap<u32, VecDeque<String>>,
    crashes: VecDeque<Crash>,
    /// Whether the notes now resolve the last crash's disk.
    resolving: bool,
}

impl Disk {
    /// A note of `node`'s: keeps a disk operation, or what a crash kept.
    pub(crate) fn follow(&mut self, node: u32, at_ns: u64, text: &str) {
        if let Some(rest) = text.strip_prefix("fs crash ") {
            if self.resolving {
                if let Some(crash) = self.crashes.back_mut() {
                    crash.resolution.push(elide(&format!("fs crash {rest}")));
                }
            }
            return;
        }
        self.resolving = false;
        if text.starts_with("fs ") {
            let ops = self.ops.entry(node).or_default();
            if ops.len() == DISK_OPS_BEFORE_CRASH {
                ops.pop_front();
            }
            let at = std::time::Duration::from_nanos(at_ns);
            ops.push_back(format!("t={at:?} {}", elide(text)));
        }
    }

    /// Host `node` crashed.
    pub(crate) fn crashed(&mut self, node: u32, at_ns: u64) {
        let before = self.ops.remove(&node).map(Vec::from).unwrap_or_default();
        if self.crashes.len() == CRASHES_MAX {
            self.crashes.pop_front();
        }
        self.crashes.push_back(Crash {
            node,
            at_ns,
            before,
            resolution: Vec::new(),
        });
        self.resolving = true;
    }

    /// The last crashes, each with its host's last disk operations before
    /// it and what its disk kept; `name` names a node.
    pub(crate) fn lines(&self, name: impl Fn(u32) -> String) -> Vec<String> {
        let mut lines = Vec::new();
        for crash in &self.crashes {
            let at = std::time::Duration::from_nanos(crash.at_ns);
            lines.push(format!("crash {} at t={at:?}", name(crash.node)));
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
}
