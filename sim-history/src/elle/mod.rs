//! Transactional anomalies, as Elle finds them: infer from a history of
//! transactions the dependencies between them (ww, wr, rw, and real
//! time), then look for cycles; each kind of cycle is an anomaly an
//! isolation level forbids.
//!
//! Two workloads give the inference enough to work with:
//!
//! - list-append ([`Workload::ListAppend`], `append.rs`): transactions
//!   append unique values to lists and read whole lists, so every read
//!   shows the order of the appends before it;
//! - read-write registers ([`Workload::RwRegister`], `register.rs`):
//!   transactions write unique values and read them back.
//!
//! `graph.rs` holds the graph, its components and the shortest cycles
//! by kind of edge; this file names what they are.
//!
//! | anomaly | what it is | forbidden from |
//! | --- | --- | --- |
//! | G0 | a cycle of ww edges (write cycle) | read committed |
//! | G1a | a read of a failed transaction's write (aborted read) | read committed |
//! | G1b | a read of a write its transaction overwrote (intermediate read) | read committed |
//! | G1c | a cycle of ww and wr edges (circular information flow) | read committed |
//! | G-single | a cycle with one rw edge (read skew) | snapshot isolation |
//! | lost update | two transactions read one version and both wrote the next | snapshot isolation |
//! | G2 | a cycle with rw edges (write skew) | serializable |
//! | any of these with rt edges | real-time order broken | strict serializable |
//!
//! # Examples
//!
//! Write skew: each transaction reads both keys as empty and appends to
//! one of them. Snapshot isolation allows it; serializability does not.
//!
//! ```
//! use sim_history::elle::{check, AnomalyKind, Isolation, Workload};
//! use sim_history::{History, Kind, Mop, Op, Value};
//!
//! let mut h = History::new();
//! let t1 = h.invoke("a", 0, Op::txn([Mop::read("x"), Mop::read("y"), Mop::append("x", 1)]));
//! let t2 = h.invoke("b", 0, Op::txn([Mop::read("x"), Mop::read("y"), Mop::append("y", 2)]));
//! let done = |x: Mop, y: Mop, w: Mop| Value::from(vec![Value::from(x), y.into(), w.into()]);
//! h.complete(t1, Kind::Ok, 5, done(Mop::read_of("x", Value::List(vec![])), Mop::read_of("y", Value::List(vec![])), Mop::append("x", 1)));
//! h.complete(t2, Kind::Ok, 6, done(Mop::read_of("x", Value::List(vec![])), Mop::read_of("y", Value::List(vec![])), Mop::append("y", 2)));
//! let t3 = h.invoke("a", 7, Op::txn([Mop::read("x"), Mop::read("y")]));
//! h.complete(t3, Kind::Ok, 8, Value::from(vec![Value::from(Mop::read_of("x", vec![1])), Mop::read_of("y", vec![2]).into()]));
//!
//! let si = check(&h, Workload::ListAppend, Isolation::SnapshotIsolation);
//! assert!(si.is_valid());
//! let serializable = check(&h, Workload::ListAppend, Isolation::Serializable);
//! assert_eq!(serializable.anomalies[0].kind, AnomalyKind::G2);
//! println!("{}", serializable.explain());
//! ```

mod append;
mod graph;
mod register;
mod txn;

pub use graph::{Dep, Edge};

use crate::history::History;
use graph::Graph;
use std::collections::BTreeMap;
use txn::Txn;

/// What the transactions do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Appends of unique values to lists, and reads of whole lists.
    ListAppend,
    /// Writes of unique values to registers, and reads of them.
    RwRegister,
}

/// The isolation level the store promises: what the check forbids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isolation {
    /// No G0, G1a, G1b or G1c.
    ReadCommitted,
    /// Also no G-single and no lost update.
    SnapshotIsolation,
    /// No cycle at all.
    Serializable,
    /// No cycle even with the real-time order.
    StrictSerializable,
}

/// A kind of anomaly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AnomalyKind {
    /// A cycle of ww edges.
    G0,
    /// A read of a failed transaction's write.
    G1a,
    /// A read of a write its own transaction overwrote.
    G1b,
    /// A cycle of ww and wr edges.
    G1c,
    /// A cycle with exactly one rw edge.
    GSingle,
    /// Two transactions read one version and both wrote the next.
    LostUpdate,
    /// A cycle with rw edges.
    G2,
    /// Two reads of a list that no one order of appends gives.
    IncompatibleOrder,
    /// One value written (appended) by two transactions: the workload
    /// broke its own rule, and the inference cannot use it.
    DuplicateWrite,
    /// A read of a value no transaction wrote.
    GarbageRead,
    /// A transaction that did not see its own writes.
    Internal,
}

impl AnomalyKind {
    /// Elle's name: `G0`, `G1a`, `G-single`...
    pub fn name(self) -> &'static str {
        match self {
            AnomalyKind::G0 => "G0",
            AnomalyKind::G1a => "G1a",
            AnomalyKind::G1b => "G1b",
            AnomalyKind::G1c => "G1c",
            AnomalyKind::GSingle => "G-single",
            AnomalyKind::LostUpdate => "lost update",
            AnomalyKind::G2 => "G2",
            AnomalyKind::IncompatibleOrder => "incompatible order",
            AnomalyKind::DuplicateWrite => "duplicate write",
            AnomalyKind::GarbageRead => "garbage read",
            AnomalyKind::Internal => "internal",
        }
    }

    /// What it means, in words.
    pub fn meaning(self) -> &'static str {
        match self {
            AnomalyKind::G0 => "write cycle",
            AnomalyKind::G1a => "aborted read",
            AnomalyKind::G1b => "intermediate read",
            AnomalyKind::G1c => "circular information flow",
            AnomalyKind::GSingle => "read skew: a cycle with one anti-dependency",
            AnomalyKind::LostUpdate => "two read-modify-writes from one version",
            AnomalyKind::G2 => "anti-dependency cycle, such as write skew",
            AnomalyKind::IncompatibleOrder => "reads that disagree on the order of appends",
            AnomalyKind::DuplicateWrite => "a value written twice",
            AnomalyKind::GarbageRead => "a read of a value never written",
            AnomalyKind::Internal => "a transaction that did not see its own write",
        }
    }

    /// The weakest level that forbids it (an error of the data: every
    /// level).
    fn forbidden_from(self) -> Isolation {
        match self {
            AnomalyKind::GSingle | AnomalyKind::LostUpdate => Isolation::SnapshotIsolation,
            AnomalyKind::G2 => Isolation::Serializable,
            _ => Isolation::ReadCommitted,
        }
    }
}

/// One anomaly found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anomaly {
    /// What kind.
    pub kind: AnomalyKind,
    /// Whether its cycle needs a real-time edge (only strict
    /// serializability forbids it then).
    pub realtime: bool,
    /// A cycle's edges, in order (empty for an anomaly without one).
    pub cycle: Vec<Edge>,
    /// The cycle's edges in words: `T3 -> T7 (rw): T3 read ...`.
    pub steps: Vec<String>,
    /// The transactions involved, described.
    pub transactions: Vec<String>,
    /// What happened, in words.
    pub words: String,
}

impl Anomaly {
    /// An anomaly found without a cycle.
    fn plain(kind: AnomalyKind, words: String) -> Anomaly {
        Anomaly {
            kind,
            realtime: false,
            cycle: Vec::new(),
            steps: Vec::new(),
            transactions: Vec::new(),
            words,
        }
    }

    /// An error of the data (forbidden at every level).
    fn data(kind: AnomalyKind, words: String) -> Anomaly {
        Anomaly::plain(kind, words)
    }

    fn forbidden_at(&self, isolation: Isolation) -> bool {
        if self.realtime {
            return isolation == Isolation::StrictSerializable;
        }
        isolation >= self.kind.forbidden_from()
    }

    /// `G-single (read skew: ...)`, with `, with real-time order` for a
    /// cycle that needs it.
    pub fn title(&self) -> String {
        let realtime = if self.realtime {
            ", with the real-time order"
        } else {
            ""
        };
        format!("{} ({}{realtime})", self.kind.name(), self.kind.meaning())
    }
}

/// The most anomalies of one kind a report describes (all are counted).
const DESCRIBED_PER_KIND_MAX: usize = 3;

/// What a check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The level checked.
    pub isolation: Isolation,
    /// How many transactions the history holds.
    pub transactions: usize,
    /// The anomalies the level forbids, the gravest first (at most three
    /// of a kind).
    pub anomalies: Vec<Anomaly>,
    /// How many of each kind were found, forbidden or not.
    pub counts: BTreeMap<AnomalyKind, usize>,
}

impl Report {
    /// Whether the history shows nothing the level forbids.
    pub fn is_valid(&self) -> bool {
        self.anomalies.is_empty()
    }

    /// Each forbidden anomaly, its cycle edge by edge, in words.
    pub fn explain(&self) -> String {
        let mut out = String::new();
        for anomaly in &self.anomalies {
            out.push_str(&format!("{}:\n", anomaly.title()));
            for t in &anomaly.transactions {
                out.push_str(&format!("  {t}\n"));
            }
            if anomaly.cycle.is_empty() {
                out.push_str(&format!("  {}\n", anomaly.words));
            }
            for (n, step) in anomaly.steps.iter().enumerate() {
                out.push_str(&format!("  {}. {step}\n", n + 1));
            }
        }
        out
    }
}

/// Checks a transactional history for the anomalies `isolation` forbids.
pub fn check(history: &History, workload: Workload, isolation: Isolation) -> Report {
    let txns = txn::transactions(history);
    let mut graph = Graph::new(txns.len());
    let mut found = match workload {
        Workload::ListAppend => append::infer(&txns, &mut graph),
        Workload::RwRegister => register::infer(&txns, &mut graph),
    };
    if isolation == Isolation::StrictSerializable {
        add_realtime(&txns, &mut graph);
    }
    found.extend(cycles(&txns, &graph));
    let mut counts: BTreeMap<AnomalyKind, usize> = BTreeMap::new();
    for anomaly in &found {
        *counts.entry(anomaly.kind).or_default() += 1;
    }
    let mut anomalies: Vec<Anomaly> = found
        .into_iter()
        .filter(|a| a.forbidden_at(isolation))
        .collect();
    anomalies.sort_by_key(|a| (a.kind, a.realtime));
    let mut described: BTreeMap<(AnomalyKind, bool), usize> = BTreeMap::new();
    anomalies.retain(|a| {
        let n = described.entry((a.kind, a.realtime)).or_default();
        *n += 1;
        *n <= DESCRIBED_PER_KIND_MAX
    });
    Report {
        isolation,
        transactions: txns.len(),
        anomalies,
        counts,
    }
}

/// rt edges: each transaction after those that completed before it
/// began. Only the latest such are joined (the rest follow through
/// them), so the edges stay few.
fn add_realtime(txns: &[Txn], graph: &mut Graph) {
    let mut events: Vec<(u64, bool, usize)> = Vec::new();
    for (i, t) in txns.iter().enumerate().filter(|(_, t)| t.committed()) {
        events.push((t.operation.invoke_index, true, i));
        if let Some((index, _)) = t.operation.complete {
            events.push((index, false, i));
        }
    }
    events.sort_unstable();
    // The completed transactions no later completed one follows.
    let mut frontier: Vec<usize> = Vec::new();
    // Each transaction's predecessors as joined at its invocation.
    let mut joined: Vec<Vec<usize>> = vec![Vec::new(); txns.len()];
    for (_, invoke, i) in events {
        if invoke {
            joined[i] = frontier.clone();
            for &before in &frontier {
                graph.add(graph::RawEdge {
                    from: before,
                    to: i,
                    dep: graph::Dep::Rt,
                    key: crate::value::Value::Nil,
                    why: graph::Why::RealTime,
                });
            }
        } else {
            frontier.retain(|f| !joined[i].contains(f));
            frontier.push(i);
        }
    }
}

/// The cycles of each component, the gravest kind first: G0 (ww only),
/// G1c (ww and wr), G-single (one rw), G2 (more rw); then the same with
/// real-time edges allowed.
fn cycles(txns: &[Txn], graph: &Graph) -> Vec<Anomaly> {
    let mut anomalies = Vec::new();
    for members in graph.components() {
        if let Some(anomaly) = component_cycle(txns, graph, &members, false) {
            anomalies.push(anomaly);
        } else if let Some(anomaly) = component_cycle(txns, graph, &members, true) {
            anomalies.push(anomaly);
        }
    }
    anomalies
}

/// Which edges a cycle search may take.
type EdgeTest<'a> = dyn Fn(&graph::RawEdge) -> bool + 'a;

fn component_cycle(
    txns: &[Txn],
    graph: &Graph,
    members: &[usize],
    realtime: bool,
) -> Option<Anomaly> {
    let rt_ok = |e: &graph::RawEdge| realtime || e.dep != graph::Dep::Rt;
    let searches: [(AnomalyKind, &EdgeTest, &EdgeTest); 4] = [
        (AnomalyKind::G0, &|e| e.dep == graph::Dep::Ww, &|e| {
            e.dep == graph::Dep::Ww || (realtime && e.dep == graph::Dep::Rt)
        }),
        (AnomalyKind::G1c, &|e| e.dep == graph::Dep::Wr, &|e| {
            e.dep != graph::Dep::Rw && rt_ok(e)
        }),
        (AnomalyKind::GSingle, &|e| e.dep == graph::Dep::Rw, &|e| {
            e.dep != graph::Dep::Rw && rt_ok(e)
        }),
        (AnomalyKind::G2, &|e| e.dep == graph::Dep::Rw, &|e| rt_ok(e)),
    ];
    for (kind, first, rest) in searches {
        let mut best: Option<Vec<usize>> = None;
        for &m in members {
            for &e in &graph.out[m] {
                let edge = &graph.edges[e];
                if !first(edge) || members.binary_search(&edge.to).is_err() {
                    continue;
                }
                if let Some(path) = graph.path(edge.to, edge.from, members, rest) {
                    let mut cycle = vec![e];
                    cycle.extend(path);
                    if best.as_ref().is_none_or(|b| cycle.len() < b.len()) {
                        best = Some(cycle);
                    }
                }
            }
            if best.as_ref().is_some_and(|b| b.len() == 2) {
                break;
            }
        }
        if let Some(cycle) = best {
            let uses_rt = cycle.iter().any(|&e| graph.edges[e].dep == graph::Dep::Rt);
            if realtime && !uses_rt {
                continue;
            }
            return Some(cycle_anomaly(txns, graph, kind, uses_rt, &cycle));
        }
    }
    None
}

fn cycle_anomaly(
    txns: &[Txn],
    graph: &Graph,
    kind: AnomalyKind,
    realtime: bool,
    cycle: &[usize],
) -> Anomaly {
    let edges: Vec<Edge> = cycle
        .iter()
        .map(|&e| words(txns, &graph.edges[e]))
        .collect();
    let transactions: Vec<String> = edges.iter().map(|e| txns[e.from].describe()).collect();
    let steps: Vec<String> = edges
        .iter()
        .map(|e| {
            format!(
                "{} -> {} ({}): {}",
                txns[e.from].name(),
                txns[e.to].name(),
                e.dep.name(),
                e.why
            )
        })
        .collect();
    Anomaly {
        kind,
        realtime,
        words: format!("a cycle of {} transactions", edges.len()),
        cycle: edges,
        steps,
        transactions,
    }
}

/// An edge of a reported cycle, with its words.
fn words(txns: &[Txn], edge: &graph::RawEdge) -> Edge {
    use graph::Why;
    let (from, to, key) = (txns[edge.from].name(), txns[edge.to].name(), &edge.key);
    let read_by = |t: usize| txns[t].external_read(key).cloned().unwrap_or_default();
    let why = match &edge.why {
        Why::AppendedAfter { earlier, later } => {
            format!("{from} appended {earlier} to {key}, and {to}'s {later} comes right after it")
        }
        Why::ReadLastAppend { last } => format!(
            "{to} read {key} as {}, ending in {last}, which {from} appended",
            read_by(edge.to)
        ),
        Why::AppendedNext { next } => format!(
            "{from} read {key} as {}, and {to} appended {next}, the next element",
            read_by(edge.from)
        ),
        Why::UnseenAfter { value, last } => format!(
            "{to} appended {value} to {key}, which no read showed, so after {last}, the last element read"
        ),
        Why::UnseenLater { value } => format!(
            "{from} read {key} as {}, and {to} appended {value}, which came later",
            read_by(edge.from)
        ),
        Why::ReadWrite { value } => format!("{to} read {key} = {value}, which {from} wrote"),
        Why::WroteAfter { earlier, later } => {
            format!("{to} wrote {key} = {later} after {key} = {earlier}, which {from} wrote")
        }
        Why::OverwroteRead { read, later } if read.is_nil() => {
            format!("{from} read {key} before any write to it, and {to} wrote {key} = {later}, a later version")
        }
        Why::OverwroteRead { read, later } => {
            format!("{from} read {key} = {read}, and {to} wrote {key} = {later}, a later version")
        }
        Why::RealTime => format!("{from} completed before {to} began"),
    };
    Edge {
        from: edge.from,
        to: edge.to,
        dep: edge.dep,
        key: edge.key.clone(),
        why,
    }
}
