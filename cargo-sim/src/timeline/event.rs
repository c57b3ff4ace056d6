//! One trace line as the timeline reads it, and the words of its label
//! that name a message (`#17`) and its ends (`a:1>b:2`).

/// One parsed trace line.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub seq: u64,
    pub ns: u64,
    pub host: String,
    pub kind: String,
    pub task: String,
    pub label: String,
    pub line: String,
}

impl Event {
    /// The task's number (`3` of `3:worker`).
    pub fn task_id(&self) -> Option<u64> {
        self.task.split(':').next()?.parse().ok()
    }

    /// The label's first word (`send`, `deliver`, `partition`...).
    pub fn verb(&self) -> &str {
        self.label.split_whitespace().next().unwrap_or("")
    }
}

/// Parses a trace file's line: `<seq> <ns> <secs>s <host> <kind> <task>:<name> <label>`
/// (`-` for the sequence number of a log line).
pub fn parse_line(line: &str) -> Option<Event> {
    let mut parts = line.splitn(7, ' ');
    // A service's log line (`SIM_TRACE_LOGS`) has `-`: a mark, not an event.
    let seq = match parts.next()? {
        "-" => u64::MAX,
        number => number.parse().ok()?,
    };
    let ns = parts.next()?.parse().ok()?;
    let _secs = parts.next()?;
    let host = parts.next()?.to_string();
    let kind = parts.next()?.to_string();
    let task = parts.next()?.to_string();
    let label = parts.next().unwrap_or("-").to_string();
    Some(Event {
        seq,
        ns,
        host,
        kind,
        task,
        label,
        line: line.to_string(),
    })
}

/// The host of an endpoint (`server` of `server:9`).
pub fn host_of(endpoint: &str) -> &str {
    endpoint.rsplit_once(':').map_or(endpoint, |(h, _)| h)
}

/// `#17` in a label: a message number.
pub fn message_number(label: &str) -> Option<u64> {
    label
        .split_whitespace()
        .find_map(|w| w.strip_prefix('#'))
        .and_then(|n| n.parse().ok())
}

/// `a:1>b:2` in a label: the sending and receiving endpoints.
pub fn endpoints(label: &str) -> Option<(&str, &str)> {
    let word = label.split_whitespace().find(|w| w.contains('>'))?;
    word.trim_end_matches(':').split_once('>')
}
