//! [`History`]: the events of a run's client operations, in the order
//! they happened, and the [`Operation`]s they pair into.

use crate::op::Op;
use crate::value::Value;
use std::collections::BTreeMap;
use std::fmt;

/// What an event says of its operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The client asked.
    Invoke,
    /// It happened, with this result.
    Ok,
    /// It surely did not happen (a refusal the client is sure of).
    Fail,
    /// Nobody knows whether it happened (a timeout, a crash, a dropped
    /// future, the end of the run).
    Info,
}

impl Kind {
    /// Jepsen's name: `invoke`, `ok`, `fail`, `info`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Invoke => "invoke",
            Kind::Ok => "ok",
            Kind::Fail => "fail",
            Kind::Info => "info",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        [Kind::Invoke, Kind::Ok, Kind::Fail, Kind::Info]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// One event of a history: an invocation or a completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Its place in the history, from 0. Real-time order is this order:
    /// in a simulation it is the order things happened, with no clock
    /// error.
    pub index: u64,
    /// Invocation or completion.
    pub kind: Kind,
    /// The operation it belongs to: an invocation and its completion share
    /// it.
    pub id: u64,
    /// Who asked: one client has at most one operation open.
    pub client: String,
    /// Virtual time, in nanoseconds since the run started.
    pub time_ns: u64,
    /// An invocation's operation; a completion repeats its function and
    /// key, with the result as its value.
    pub op: Op,
}

/// How an operation ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It happened and returned this.
    Ok(Value),
    /// It surely did not happen.
    Fail,
    /// It may or may not have happened, at any time after it was invoked.
    Info,
}

/// An invocation paired with its completion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    /// The operation's id in its history.
    pub id: u64,
    /// Who asked.
    pub client: String,
    /// What was asked.
    pub op: Op,
    /// The invocation's index in the history.
    pub invoke_index: u64,
    /// The invocation's virtual time (ns).
    pub invoke_ns: u64,
    /// The completion's index and virtual time (ns); `None` for an
    /// operation that never completed (it counts as `Info`).
    pub complete: Option<(u64, u64)>,
    /// How it ended.
    pub outcome: Outcome,
}

impl Operation {
    /// Whether it completed `Ok`.
    pub fn is_ok(&self) -> bool {
        matches!(self.outcome, Outcome::Ok(_))
    }

    /// Its result, if it completed `Ok`.
    pub fn output(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Ok(value) => Some(value),
            _ => None,
        }
    }

    /// `write "x" 3 -> nil`, `read "x" -> ?` (info), `cas ... -> fail`.
    pub fn describe(&self) -> String {
        match &self.outcome {
            Outcome::Ok(value) => format!("{} -> {value}", self.op),
            Outcome::Fail => format!("{} -> failed", self.op),
            Outcome::Info => format!("{} -> ? (unknown)", self.op),
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} {}", self.id, self.client, self.describe())
    }
}

/// A history of client operations: invocations and completions in the
/// order they happened.
///
/// ```
/// use sim_history::{History, Kind, Op, Value};
///
/// let mut history = History::new();
/// let write = history.invoke("c1", 0, Op::write("x", 1));
/// let read = history.invoke("c2", 5, Op::read("x"));
/// history.complete(write, Kind::Ok, 10, Value::Nil);
/// history.complete(read, Kind::Ok, 12, Value::Int(1));
/// let ops = history.operations();
/// assert_eq!(ops.len(), 2);
/// assert_eq!(ops[1].output(), Some(&Value::Int(1)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    events: Vec<Event>,
    /// The open operations: id -> its invocation's place in `events`.
    open: BTreeMap<u64, usize>,
    next_id: u64,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// Records that `client` invoked `op` at `time_ns`; returns the
    /// operation's id.
    pub fn invoke(&mut self, client: &str, time_ns: u64, op: Op) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.push_event(Kind::Invoke, id, client.to_string(), time_ns, op);
        id
    }

    /// Records that operation `id` completed as `kind` (`Ok`, `Fail` or
    /// `Info`) at `time_ns`, returning `output`.
    ///
    /// # Panics
    /// When `id` is not open, or `kind` is `Invoke`.
    pub fn complete(&mut self, id: u64, kind: Kind, time_ns: u64, output: Value) {
        assert!(
            kind != Kind::Invoke,
            "sim-history: a completion is ok, fail or info"
        );
        let Some(&at) = self.open.get(&id) else {
            panic!(
                "sim-history: operation #{id} is not open (never invoked, or completed already)"
            );
        };
        let invoked = &self.events[at];
        let op = Op {
            f: invoked.op.f.clone(),
            key: invoked.op.key.clone(),
            value: output,
        };
        let client = invoked.client.clone();
        self.push_event(kind, id, client, time_ns, op);
    }

    /// Appends an event read from a file. A completion without a known id
    /// (Jepsen's histories have none) pairs with its client's open
    /// operation.
    ///
    /// # Errors
    /// For a completion with nothing open to pair with.
    pub fn push(&mut self, mut event: Event) -> Result<(), String> {
        if event.kind == Kind::Invoke {
            // A file's own id, while they increase; else the next free one
            // (its completion then pairs by client).
            if event.id == u64::MAX || event.id < self.next_id {
                event.id = self.next_id;
            }
            self.next_id = event.id + 1;
            self.push_event(
                Kind::Invoke,
                event.id,
                event.client,
                event.time_ns,
                event.op,
            );
            return Ok(());
        }
        let id = if self.open.contains_key(&event.id)
            && self.events[self.open[&event.id]].client == event.client
        {
            event.id
        } else {
            let open_of_client = self
                .open
                .iter()
                .find(|(_, &at)| self.events[at].client == event.client)
                .map(|(&id, _)| id);
            open_of_client.ok_or_else(|| {
                format!(
                    "event {}: a {} of client {} with no operation of that client open",
                    event.index,
                    event.kind.name(),
                    event.client
                )
            })?
        };
        self.push_event(event.kind, id, event.client, event.time_ns, event.op);
        Ok(())
    }

    fn push_event(&mut self, kind: Kind, id: u64, client: String, time_ns: u64, op: Op) {
        let index = self.events.len() as u64;
        if kind == Kind::Invoke {
            self.open.insert(id, self.events.len());
        } else {
            self.open.remove(&id);
        }
        self.events.push(Event {
            index,
            kind,
            id,
            client,
            time_ns,
            op,
        });
    }

    /// The events, in order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// How many operations are open (invoked, not completed).
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// Every operation, in the order of invocation; one never completed
    /// counts as `Info`.
    pub fn operations(&self) -> Vec<Operation> {
        let mut ops: Vec<Operation> = Vec::new();
        let mut by_id: BTreeMap<u64, usize> = BTreeMap::new();
        for event in &self.events {
            if event.kind == Kind::Invoke {
                by_id.insert(event.id, ops.len());
                ops.push(Operation {
                    id: event.id,
                    client: event.client.clone(),
                    op: event.op.clone(),
                    invoke_index: event.index,
                    invoke_ns: event.time_ns,
                    complete: None,
                    outcome: Outcome::Info,
                });
            } else if let Some(&at) = by_id.get(&event.id) {
                let op = &mut ops[at];
                op.complete = Some((event.index, event.time_ns));
                op.outcome = match event.kind {
                    Kind::Ok => Outcome::Ok(event.op.value.clone()),
                    Kind::Fail => Outcome::Fail,
                    _ => Outcome::Info,
                };
            }
        }
        ops
    }
}
