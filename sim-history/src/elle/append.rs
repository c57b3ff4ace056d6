//! List-append: each transaction appends unique values to lists and
//! reads whole lists. Every read is a prefix of one order of its key's
//! appends, so the longest read gives the versions in order, and with
//! them every ww, wr and rw edge.

use super::graph::{Dep, Graph, RawEdge, Why};
use super::txn::Txn;
use super::{Anomaly, AnomalyKind};
use crate::op::MopKind;
use crate::value::Value;
use std::collections::BTreeMap;

/// Who appended a value to a key: the transaction, and whether it was the
/// transaction's last append to that key.
struct Appended {
    txn: usize,
    last_in_txn: bool,
}

/// Adds the dependencies of a list-append history to `graph`; returns the
/// anomalies found without a cycle.
pub(crate) fn infer(txns: &[Txn], graph: &mut Graph) -> Vec<Anomaly> {
    let mut anomalies = Vec::new();
    let appended = appends(txns, &mut anomalies);
    anomalies.extend(internal(txns));
    let keys: Vec<Value> = {
        let mut keys: Vec<Value> = txns
            .iter()
            .flat_map(|t| t.mops.iter().map(|m| m.key.clone()))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    for key in keys {
        let Some(order) = version_order(txns, &key, &mut anomalies) else {
            continue;
        };
        let writer = |v: &Value| appended.get(&(key.clone(), v.clone()));
        check_reads(txns, &key, &order, &writer, &mut anomalies);
        add_ww(txns, &key, &order, &writer, graph);
        add_wr_rw(txns, &key, &order, &writer, graph);
        add_unseen(txns, &key, &order, &appended, graph);
    }
    anomalies
}

/// Every append's writer; a value appended twice to one key is an error
/// of the workload.
fn appends(txns: &[Txn], anomalies: &mut Vec<Anomaly>) -> BTreeMap<(Value, Value), Appended> {
    let mut appended: BTreeMap<(Value, Value), Appended> = BTreeMap::new();
    for (i, txn) in txns.iter().enumerate() {
        let appends: Vec<&crate::op::Mop> = txn
            .mops
            .iter()
            .filter(|m| m.kind == MopKind::Append)
            .collect();
        for (n, mop) in appends.iter().enumerate() {
            let last_in_txn = !appends[n + 1..].iter().any(|later| later.key == mop.key);
            let key = (mop.key.clone(), mop.value.clone());
            if let Some(first) = appended.get(&key) {
                anomalies.push(Anomaly::data(
                    AnomalyKind::DuplicateWrite,
                    format!(
                        "{} and {} both appended {} to {}: list-append needs each value appended once",
                        txns[first.txn].describe(),
                        txn.describe(),
                        mop.value,
                        mop.key
                    ),
                ));
                continue;
            }
            appended.insert(
                key,
                Appended {
                    txn: i,
                    last_in_txn,
                },
            );
        }
    }
    appended
}

/// A transaction's later read of a key must show what it read before,
/// then its own appends, in order.
fn internal(txns: &[Txn]) -> Vec<Anomaly> {
    let mut anomalies = Vec::new();
    for txn in txns.iter().filter(|t| t.committed()) {
        let mut expected: BTreeMap<&Value, (Option<&[Value]>, Vec<Value>)> = BTreeMap::new();
        for mop in &txn.mops {
            let (read, own) = expected.entry(&mop.key).or_default();
            match mop.kind {
                MopKind::Append => own.push(mop.value.clone()),
                MopKind::Read => {
                    let seen = list(&mop.value);
                    let consistent = match read {
                        Some(before) => {
                            seen.len() == before.len() + own.len()
                                && seen.starts_with(before)
                                && seen.ends_with(own)
                        }
                        None => seen.ends_with(own),
                    };
                    if !consistent {
                        anomalies.push(Anomaly::data(
                            AnomalyKind::Internal,
                            format!(
                                "{} read {} as {} after its own appends {}: a transaction sees its own writes",
                                txn.describe(),
                                mop.key,
                                mop.value,
                                Value::List(own.clone())
                            ),
                        ));
                    }
                    *read = Some(seen);
                    own.clear();
                }
                MopKind::Write => {}
            }
        }
    }
    anomalies
}

fn list(value: &Value) -> &[Value] {
    value.as_list().unwrap_or(&[])
}

/// The order of `key`'s versions: its longest committed read, which every
/// other read must be a prefix of.
fn version_order(txns: &[Txn], key: &Value, anomalies: &mut Vec<Anomaly>) -> Option<Vec<Value>> {
    let reads: Vec<(usize, &[Value])> = txns
        .iter()
        .enumerate()
        .filter(|(_, t)| t.committed())
        .flat_map(|(i, t)| {
            t.mops
                .iter()
                .filter(|m| &m.key == key && m.kind == MopKind::Read)
                .map(move |m| (i, list(&m.value)))
        })
        .collect();
    let &(longest_at, longest) = reads.iter().max_by_key(|(_, l)| l.len())?;
    for &(i, read) in &reads {
        if !longest.starts_with(read) {
            anomalies.push(Anomaly::data(
                AnomalyKind::IncompatibleOrder,
                format!(
                    "{} read {key} as {} and {} read it as {}: no one order of appends gives both",
                    txns[i].describe(),
                    Value::List(read.to_vec()),
                    txns[longest_at].describe(),
                    Value::List(longest.to_vec())
                ),
            ));
            return None;
        }
    }
    Some(longest.to_vec())
}

/// Reads of values nobody appended, of failed transactions' appends
/// (G1a), and of a transaction's appends short of its last (G1b).
fn check_reads<'a>(
    txns: &[Txn],
    key: &Value,
    order: &[Value],
    writer: &impl Fn(&Value) -> Option<&'a Appended>,
    anomalies: &mut Vec<Anomaly>,
) {
    for v in order {
        match writer(v) {
            None => anomalies.push(Anomaly::data(
                AnomalyKind::GarbageRead,
                format!("{key} was read holding {v}, which no transaction appended"),
            )),
            Some(w) if txns[w.txn].failed() => anomalies.push(Anomaly::plain(
                AnomalyKind::G1a,
                format!(
                    "{key} was read holding {v}, appended by {}, which failed",
                    txns[w.txn].describe()
                ),
            )),
            Some(_) => {}
        }
    }
    for (r, txn) in txns.iter().enumerate() {
        let Some(read) = txn.external_read(key) else {
            continue;
        };
        let Some(last) = list(read).last() else {
            continue;
        };
        if let Some(w) = writer(last) {
            if !w.last_in_txn && w.txn != r {
                anomalies.push(Anomaly::plain(
                    AnomalyKind::G1b,
                    format!(
                        "{} read {key} as {read}, ending in {last}, which {} appended before appending more to {key}",
                        txn.describe(),
                        txns[w.txn].describe()
                    ),
                ));
            }
        }
    }
}

/// ww: each version's writer before the next one's.
fn add_ww<'a>(
    txns: &[Txn],
    key: &Value,
    order: &[Value],
    writer: &impl Fn(&Value) -> Option<&'a Appended>,
    graph: &mut Graph,
) {
    for pair in order.windows(2) {
        let (Some(a), Some(b)) = (writer(&pair[0]), writer(&pair[1])) else {
            continue;
        };
        if txns[a.txn].failed() || txns[b.txn].failed() {
            continue;
        }
        graph.add(RawEdge {
            from: a.txn,
            to: b.txn,
            dep: Dep::Ww,
            key: key.clone(),
            why: Why::AppendedAfter {
                earlier: pair[0].clone(),
                later: pair[1].clone(),
            },
        });
    }
}

/// wr: the writer of a read's last element before the reader; rw: the
/// reader before the writer of the element after it.
fn add_wr_rw<'a>(
    txns: &[Txn],
    key: &Value,
    order: &[Value],
    writer: &impl Fn(&Value) -> Option<&'a Appended>,
    graph: &mut Graph,
) {
    for (r, txn) in txns.iter().enumerate() {
        let Some(read) = txn.external_read(key) else {
            continue;
        };
        let seen = list(read);
        if let Some(w) = seen.last().and_then(writer) {
            if !txns[w.txn].failed() {
                graph.add(RawEdge {
                    from: w.txn,
                    to: r,
                    dep: Dep::Wr,
                    key: key.clone(),
                    why: Why::ReadLastAppend {
                        last: seen.last().expect("non-empty").clone(),
                    },
                });
            }
        }
        let Some(next) = order.get(seen.len()) else {
            continue;
        };
        if let Some(w) = writer(next) {
            if !txns[w.txn].failed() {
                graph.add(RawEdge {
                    from: r,
                    to: w.txn,
                    dep: Dep::Rw,
                    key: key.clone(),
                    why: Why::AppendedNext { next: next.clone() },
                });
            }
        }
    }
}

/// Appends no read showed, by transactions that committed: each came
/// after every version read (the list only grows), so after the last
/// known version's writer (ww), and after every transaction that read the
/// whole known list (rw). Their order among themselves is unknown. An
/// unknown transaction's unseen append may never have happened: no edge.
fn add_unseen(
    txns: &[Txn],
    key: &Value,
    order: &[Value],
    appended: &BTreeMap<(Value, Value), Appended>,
    graph: &mut Graph,
) {
    let seen: std::collections::HashSet<&Value> = order.iter().collect();
    let unseen: Vec<(&Value, usize)> = appended
        .range((key.clone(), Value::Nil)..)
        .take_while(|((k, _), _)| k == key)
        .filter(|((_, v), a)| txns[a.txn].committed() && !seen.contains(v))
        .map(|((_, v), a)| (v, a.txn))
        .collect();
    if unseen.is_empty() {
        return;
    }
    let last_writer = order
        .last()
        .and_then(|v| appended.get(&(key.clone(), v.clone())));
    for &(v, w) in &unseen {
        if let Some(last) = last_writer.filter(|l| !txns[l.txn].failed()) {
            graph.add(RawEdge {
                from: last.txn,
                to: w,
                dep: Dep::Ww,
                key: key.clone(),
                why: Why::UnseenAfter {
                    value: v.clone(),
                    last: order.last().expect("a last element").clone(),
                },
            });
        }
        for (r, txn) in txns.iter().enumerate() {
            let Some(read) = txn.external_read(key) else {
                continue;
            };
            if list(read) != order {
                continue;
            }
            graph.add(RawEdge {
                from: r,
                to: w,
                dep: Dep::Rw,
                key: key.clone(),
                why: Why::UnseenLater { value: v.clone() },
            });
        }
    }
}
