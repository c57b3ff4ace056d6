//! Two trace files side by side (`cargo sim diff A B`): the first event
//! where they part, and, since two different seeds part at their first
//! draw, how the runs differ as a whole: events by kind and by host,
//! messages sent, delivered and lost, faults, disk operations, and when
//! and how each run ended.
//!
//! A trace file's line is `<seq> <ns> <seconds>s <host> <kind> <task>
//! <label...>` (see the module docs of `trace`).

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

/// Where two traces first differ.
#[derive(Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The event's sequence number (its line, from 0).
    pub seq: u64,
    /// That line in the first trace (`None`: the trace ended there).
    pub a: Option<String>,
    /// That line in the second trace.
    pub b: Option<String>,
    /// The line just before, common to both (context).
    pub before: Option<String>,
}

impl Divergence {
    /// Lines that say where and how.
    pub fn describe(&self) -> String {
        let shown = |line: &Option<String>| match line {
            Some(line) => line.clone(),
            None => "(the trace ends here)".to_string(),
        };
        let mut text = format!("first divergent event: #{}\n", self.seq);
        if let Some(before) = &self.before {
            text.push_str(&format!("  both: {before}\n"));
        }
        text.push_str(&format!(
            "  A:    {}\n  B:    {}",
            shown(&self.a),
            shown(&self.b)
        ));
        text
    }
}

fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, String> {
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|e| format!("cannot read the trace {}: {e}", path.display()))
}

/// Compares two trace files line by line (in constant memory). `Ok(None)`:
/// identical.
pub fn first_difference(a: &Path, b: &Path) -> Result<Option<Divergence>, String> {
    let mut lines_a = open(a)?.lines();
    let mut lines_b = open(b)?.lines();
    let mut before: Option<String> = None;
    let mut seq = 0u64;
    // Bounded by the shorter file, plus one line.
    loop {
        let la = lines_a.next().transpose().map_err(|e| e.to_string())?;
        let lb = lines_b.next().transpose().map_err(|e| e.to_string())?;
        match (la, lb) {
            (None, None) => return Ok(None),
            (la, lb) if la != lb => {
                return Ok(Some(Divergence {
                    seq,
                    a: la,
                    b: lb,
                    before,
                }))
            }
            (la, _) => before = la,
        }
        seq += 1;
    }
}

/// What a whole run did, counted from its trace file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events (lines with a sequence number; log lines are not events).
    pub events: u64,
    /// Virtual time of the last event, in ns.
    pub end_ns: u64,
    /// The last event's kind and label: how the run ended.
    pub last: String,
    /// Events by kind.
    pub kinds: BTreeMap<String, u64>,
    /// Events by host.
    pub hosts: BTreeMap<String, u64>,
    /// Messages: `sent`, `delivered`, `lost`, `held`, `reset`.
    pub messages: BTreeMap<&'static str, u64>,
    /// Faults and harness events by their first word (`partition`,
    /// `crash`, `nemesis: isolate`, ...).
    pub faults: BTreeMap<String, u64>,
    /// Disk operations by their word (`fs write`, `fs fsync`, ...).
    pub disk: BTreeMap<String, u64>,
}

/// The faults and harness events a note can be.
const FAULT_WORDS: &[&str] = &[
    "partition",
    "heal",
    "crash",
    "restart",
    "isolate",
    "split",
    "clock",
    "hold",
    "release",
    "nemesis:",
    "liveness",
    "signal",
];

/// Counts a trace file (in constant memory but for the maps' keys).
pub fn summarize(path: &Path) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for line in open(path)?.lines() {
        let line = line.map_err(|e| e.to_string())?;
        let mut fields = line.splitn(7, ' ');
        let (Some(seq), Some(ns), Some(_), Some(host), Some(kind), Some(_task)) = (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) else {
            continue;
        };
        if seq.parse::<u64>().is_err() {
            // A log line (`-`): not an event.
            continue;
        }
        let label = fields.next().unwrap_or("");
        summary.events += 1;
        summary.end_ns = ns.parse().unwrap_or(summary.end_ns);
        summary.last = format!("{kind} {label}");
        *summary.kinds.entry(kind.to_string()).or_default() += 1;
        *summary.hosts.entry(host.to_string()).or_default() += 1;
        if kind != "note" {
            continue;
        }
        let first = label.split(' ').next().unwrap_or("");
        let message = match first {
            "send" => Some("sent"),
            "deliver" => Some("delivered"),
            "lost" => Some("lost"),
            "reset" => Some("reset"),
            "hold" if label.contains('#') => Some("held"),
            _ => None,
        };
        if let Some(word) = message {
            *summary.messages.entry(word).or_default() += 1;
            continue;
        }
        if first == "fs" {
            let word: Vec<&str> = label.split(' ').take(2).collect();
            *summary.disk.entry(word.join(" ")).or_default() += 1;
        } else if FAULT_WORDS.contains(&first) {
            let word = if first == "nemesis:" {
                label.split(' ').take(2).collect::<Vec<_>>().join(" ")
            } else {
                first.to_string()
            };
            *summary.faults.entry(word).or_default() += 1;
        }
    }
    Ok(summary)
}

/// The rows where two summaries differ, as `name  A  B` lines.
fn differing_rows(a: &Summary, b: &Summary) -> Vec<(String, String, String)> {
    let mut rows = Vec::new();
    let mut row = |name: String, x: String, y: String| {
        if x != y {
            rows.push((name, x, y));
        }
    };
    row("events".into(), a.events.to_string(), b.events.to_string());
    row(
        "end (virtual time)".into(),
        format!("{:?}", std::time::Duration::from_nanos(a.end_ns)),
        format!("{:?}", std::time::Duration::from_nanos(b.end_ns)),
    );
    let count = |m: &BTreeMap<String, u64>, k: &str| m.get(k).copied().unwrap_or(0).to_string();
    let keys = |x: &BTreeMap<String, u64>, y: &BTreeMap<String, u64>| {
        let mut keys: Vec<String> = x.keys().chain(y.keys()).cloned().collect();
        keys.sort();
        keys.dedup();
        keys
    };
    for (group, x, y) in [
        ("events of kind", &a.kinds, &b.kinds),
        ("events on host", &a.hosts, &b.hosts),
        ("faults", &a.faults, &b.faults),
        ("disk", &a.disk, &b.disk),
    ] {
        for key in keys(x, y) {
            row(format!("{group} {key}"), count(x, &key), count(y, &key));
        }
    }
    for word in ["sent", "delivered", "lost", "held", "reset"] {
        let get = |m: &BTreeMap<&'static str, u64>| m.get(word).copied().unwrap_or(0).to_string();
        row(
            format!("messages {word}"),
            get(&a.messages),
            get(&b.messages),
        );
    }
    row("last event".into(), a.last.clone(), b.last.clone());
    rows
}

/// What `cargo sim diff` prints: the first divergent event, then, when the
/// runs part, the counts that differ. `None`: identical.
pub fn report(a: &Path, b: &Path) -> Result<Option<String>, String> {
    let Some(divergence) = first_difference(a, b)? else {
        return Ok(None);
    };
    let (sa, sb) = (summarize(a)?, summarize(b)?);
    let mut text = divergence.describe();
    let rows = differing_rows(&sa, &sb);
    if rows.is_empty() {
        text.push_str("\nthe runs count the same: same events by kind and host, messages, faults, disk operations, end");
        return Ok(Some(text));
    }
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let width_a = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(1);
    text.push_str("\nhow the runs differ (A | B):");
    for (name, x, y) in rows {
        text.push_str(&format!("\n  {name:<width$}  {x:>width_a$} | {y}"));
    }
    Ok(Some(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_divergent_event_and_how_the_runs_differ() {
        let dir = std::env::temp_dir().join(format!("sim-compare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
        std::fs::write(
            &a,
            "0 0 0.000000000s main start 0:root 1\n1 0 0.000000000s main poll 0:root -\n\
             2 5 0.000000005s main note 0:root partition a->b\n\
             3 9 0.000000009s a note 1:a send #1 a:1>b:2 len=1 digest=0\n",
        )
        .unwrap();
        std::fs::write(
            &b,
            "0 0 0.000000000s main start 0:root 1\n1 0 0.000000000s main poll 0:root -\n\
             2 7 0.000000007s a note 1:a fs write /tmp/x @0 +1 -> 1\n",
        )
        .unwrap();
        std::fs::write(
            &c,
            "0 0 0.000000000s main start 0:root 1\n1 0 0.000000000s main poll 0:root -\n",
        )
        .unwrap();
        let d = first_difference(&a, &b).unwrap().unwrap();
        assert_eq!(d.seq, 2);
        assert_eq!(
            d.before.as_deref(),
            Some("1 0 0.000000000s main poll 0:root -")
        );
        let short = first_difference(&a, &c).unwrap().unwrap();
        assert_eq!((short.seq, short.b), (2, None));
        assert_eq!(first_difference(&a, &a).unwrap(), None);
        let text = report(&a, &b).unwrap().unwrap();
        assert!(text.contains("first divergent event: #2"), "{text}");
        assert!(text.contains("faults partition"), "{text}");
        assert!(text.contains("messages sent"), "{text}");
        assert!(text.contains("disk fs write"), "{text}");
        assert!(text.contains("events on host main"), "{text}");
        assert!(text.contains("last event"), "{text}");
        assert!(first_difference(&a, &dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
