//! Read-write registers: each transaction reads and writes unique values
//! to keys. A read names the write it saw (wr); the order of versions is
//! known where a transaction read one version and then wrote the next,
//! and from the initial state (nil) before every write: from those come
//! ww and rw. Two transactions that read one version and both wrote the
//! next are a lost update.

use super::graph::{Dep, Graph, RawEdge, Why};
use super::txn::Txn;
use super::{Anomaly, AnomalyKind};
use crate::op::MopKind;
use crate::value::Value;
use std::collections::BTreeMap;

/// Who wrote a value to a key, and whether it was that transaction's last
/// write to the key.
struct Written {
    txn: usize,
    last_in_txn: bool,
}

/// Adds the dependencies of a read-write register history to `graph`;
/// returns the anomalies found without a cycle.
pub(crate) fn infer(txns: &[Txn], graph: &mut Graph) -> Vec<Anomaly> {
    let mut anomalies = Vec::new();
    let written = writes(txns, &mut anomalies);
    anomalies.extend(internal(txns));
    let writer = |key: &Value, v: &Value| written.get(&(key.clone(), v.clone()));
    check_reads(txns, &writer, &mut anomalies);
    anomalies.extend(lost_updates(txns));
    add_wr(txns, &writer, graph);
    add_version_edges(txns, &writer, graph);
    anomalies
}

fn writes(txns: &[Txn], anomalies: &mut Vec<Anomaly>) -> BTreeMap<(Value, Value), Written> {
    let mut written: BTreeMap<(Value, Value), Written> = BTreeMap::new();
    for (i, txn) in txns.iter().enumerate() {
        let writes: Vec<&crate::op::Mop> = txn
            .mops
            .iter()
            .filter(|m| m.kind == MopKind::Write)
            .collect();
        for (n, mop) in writes.iter().enumerate() {
            let last_in_txn = !writes[n + 1..].iter().any(|later| later.key == mop.key);
            let key = (mop.key.clone(), mop.value.clone());
            if let Some(first) = written.get(&key) {
                if first.txn != i {
                    anomalies.push(Anomaly::data(
                        AnomalyKind::DuplicateWrite,
                        format!(
                            "{} and {} both wrote {} = {}: read-write registers need each value written once",
                            txns[first.txn].describe(),
                            txn.describe(),
                            mop.key,
                            mop.value
                        ),
                    ));
                }
                continue;
            }
            written.insert(
                key,
                Written {
                    txn: i,
                    last_in_txn,
                },
            );
        }
    }
    written
}

/// A read after the transaction's own write of a key sees that write.
fn internal(txns: &[Txn]) -> Vec<Anomaly> {
    let mut anomalies = Vec::new();
    for txn in txns.iter().filter(|t| t.committed()) {
        let mut own: BTreeMap<&Value, &Value> = BTreeMap::new();
        for mop in &txn.mops {
            match mop.kind {
                MopKind::Write => {
                    own.insert(&mop.key, &mop.value);
                }
                MopKind::Read => {
                    if let Some(&wrote) = own.get(&mop.key) {
                        if wrote != &mop.value {
                            anomalies.push(Anomaly::data(
                                AnomalyKind::Internal,
                                format!(
                                    "{} wrote {} = {wrote}, then read it as {}: a transaction sees its own writes",
                                    txn.describe(),
                                    mop.key,
                                    mop.value
                                ),
                            ));
                        }
                    }
                }
                MopKind::Append => {}
            }
        }
    }
    anomalies
}

/// Reads of values nobody wrote, of failed transactions' writes (G1a), and
/// of a transaction's writes it overwrote itself (G1b).
fn check_reads<'a>(
    txns: &[Txn],
    writer: &impl Fn(&Value, &Value) -> Option<&'a Written>,
    anomalies: &mut Vec<Anomaly>,
) {
    for (r, txn) in txns.iter().enumerate() {
        for (key, v) in txn.external_reads() {
            if v.is_nil() {
                continue;
            }
            match writer(key, v) {
                None => anomalies.push(Anomaly::data(
                    AnomalyKind::GarbageRead,
                    format!(
                        "{} read {key} = {v}, which no transaction wrote",
                        txn.describe()
                    ),
                )),
                Some(w) if txns[w.txn].failed() => anomalies.push(Anomaly::plain(
                    AnomalyKind::G1a,
                    format!(
                        "{} read {key} = {v}, written by {}, which failed",
                        txn.describe(),
                        txns[w.txn].describe()
                    ),
                )),
                Some(w) if !w.last_in_txn && w.txn != r => anomalies.push(Anomaly::plain(
                    AnomalyKind::G1b,
                    format!(
                        "{} read {key} = {v}, which {} wrote and then overwrote itself",
                        txn.describe(),
                        txns[w.txn].describe()
                    ),
                )),
                Some(_) => {}
            }
        }
    }
}

/// Committed transactions that read one version of a key and both wrote
/// the key: one update was lost.
fn lost_updates(txns: &[Txn]) -> Vec<Anomaly> {
    let mut by_version: BTreeMap<(&Value, &Value), Vec<usize>> = BTreeMap::new();
    for (i, txn) in txns.iter().enumerate().filter(|(_, t)| t.committed()) {
        for (key, v) in txn.external_reads() {
            if txn.writes(key) {
                by_version.entry((key, v)).or_default().push(i);
            }
        }
    }
    by_version
        .into_iter()
        .filter(|(_, readers)| readers.len() > 1)
        .map(|((key, v), readers)| {
            let names: Vec<String> = readers.iter().map(|&i| txns[i].describe()).collect();
            Anomaly::plain(
                AnomalyKind::LostUpdate,
                format!(
                    "{} each read {key} = {v} and then wrote {key}: only one of their updates can follow {v}",
                    names.join(" and ")
                ),
            )
        })
        .collect()
}

/// wr: a value's writer before each transaction that read it.
fn add_wr<'a>(
    txns: &[Txn],
    writer: &impl Fn(&Value, &Value) -> Option<&'a Written>,
    graph: &mut Graph,
) {
    for (r, txn) in txns.iter().enumerate() {
        for (key, v) in txn.external_reads() {
            let Some(w) = writer(key, v) else { continue };
            if txns[w.txn].failed() {
                continue;
            }
            graph.add(RawEdge {
                from: w.txn,
                to: r,
                dep: Dep::Wr,
                key: key.clone(),
                why: Why::ReadWrite { value: v.clone() },
            });
        }
    }
}

/// The versions known to follow one another: a transaction that read `a`
/// and then wrote `b` to a key puts `a` before `b`; the initial state (nil)
/// is before every write. Each gives ww (a's writer before b's) and rw
/// (every reader of a before b's writer).
fn add_version_edges<'a>(
    txns: &[Txn],
    writer: &impl Fn(&Value, &Value) -> Option<&'a Written>,
    graph: &mut Graph,
) {
    let mut readers: BTreeMap<(&Value, &Value), Vec<usize>> = BTreeMap::new();
    for (r, txn) in txns.iter().enumerate() {
        for (key, v) in txn.external_reads() {
            readers.entry((key, v)).or_default().push(r);
        }
    }
    // (key, an earlier version, a later one)
    let mut follows: Vec<(&Value, &Value, &Value)> = Vec::new();
    for txn in txns.iter().filter(|t| !t.failed()) {
        for mop in txn.mops.iter().filter(|m| m.kind == MopKind::Write) {
            if let Some(read) = txn.external_read(&mop.key) {
                follows.push((&mop.key, read, &mop.value));
            }
            follows.push((&mop.key, &Value::Nil, &mop.value));
        }
    }
    follows.sort();
    follows.dedup();
    for (key, a, b) in follows {
        let Some(wb) = writer(key, b) else { continue };
        if !wb.last_in_txn {
            continue;
        }
        if let Some(wa) = writer(key, a) {
            if !txns[wa.txn].failed() {
                graph.add(RawEdge {
                    from: wa.txn,
                    to: wb.txn,
                    dep: Dep::Ww,
                    key: key.clone(),
                    why: Why::WroteAfter {
                        earlier: a.clone(),
                        later: b.clone(),
                    },
                });
            }
        }
        for &r in readers.get(&(key, a)).map_or(&[][..], Vec::as_slice) {
            graph.add(RawEdge {
                from: r,
                to: wb.txn,
                dep: Dep::Rw,
                key: key.clone(),
                why: Why::OverwroteRead {
                    read: a.clone(),
                    later: b.clone(),
                },
            });
        }
    }
}
