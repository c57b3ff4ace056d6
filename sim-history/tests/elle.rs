//! The transactional checker names the anomalies it is shown, and never
//! flags a history a serializable store could give.

mod support;

use sim_history::elle::{check, AnomalyKind, Isolation, Workload};
use sim_history::{History, Kind, Mop, MopKind, Op, Value};
use support::serial_history;

/// A transaction as a test writes it: client, invocation and completion
/// times, steps invoked, steps completed (`None`: it failed).
type Written<'a> = (&'a str, u64, u64, Vec<Mop>, Option<Vec<Mop>>);

/// A history of `txns`, each invoked and completed at its own times.
fn history(txns: &[Written<'_>]) -> History {
    let mut events: Vec<(u64, usize, bool)> = Vec::new();
    for (i, (_, invoke, complete, _, _)) in txns.iter().enumerate() {
        events.push((*invoke, i, true));
        events.push((*complete, i, false));
    }
    events.sort();
    let mut h = History::new();
    let mut ids = vec![0; txns.len()];
    for (time, i, invoke) in events {
        let (client, _, _, invoked, completed) = &txns[i];
        if invoke {
            ids[i] = h.invoke(client, time, Op::txn(invoked.clone()));
        } else {
            match completed {
                Some(done) => h.complete(
                    ids[i],
                    Kind::Ok,
                    time,
                    Value::from(done.iter().cloned().map(Value::from).collect::<Vec<_>>()),
                ),
                None => h.complete(ids[i], Kind::Fail, time, Value::Nil),
            }
        }
    }
    h
}

fn l(values: &[i64]) -> Value {
    Value::from(values.to_vec())
}

#[test]
fn write_skew_is_g2_allowed_by_snapshot_isolation() {
    let h = history(&[
        (
            "a",
            0,
            5,
            vec![Mop::read("x"), Mop::read("y"), Mop::append("x", 1)],
            Some(vec![
                Mop::read_of("x", l(&[])),
                Mop::read_of("y", l(&[])),
                Mop::append("x", 1),
            ]),
        ),
        (
            "b",
            1,
            6,
            vec![Mop::read("x"), Mop::read("y"), Mop::append("y", 2)],
            Some(vec![
                Mop::read_of("x", l(&[])),
                Mop::read_of("y", l(&[])),
                Mop::append("y", 2),
            ]),
        ),
        (
            "a",
            7,
            8,
            vec![Mop::read("x"), Mop::read("y")],
            Some(vec![Mop::read_of("x", l(&[1])), Mop::read_of("y", l(&[2]))]),
        ),
    ]);
    assert!(check(&h, Workload::ListAppend, Isolation::SnapshotIsolation).is_valid());
    let report = check(&h, Workload::ListAppend, Isolation::Serializable);
    assert_eq!(report.anomalies.len(), 1, "{}", report.explain());
    let g2 = &report.anomalies[0];
    assert_eq!(g2.kind, AnomalyKind::G2);
    assert_eq!(g2.steps.len(), 2);
    let text = report.explain();
    assert!(
        text.contains("T0 -> T1 (rw): T0 read \"y\" as [], and T1 appended 2, the next element"),
        "{text}"
    );
    assert!(
        text.contains("T1 -> T0 (rw): T1 read \"x\" as [], and T0 appended 1, the next element"),
        "{text}"
    );
}

#[test]
fn a_lost_update_on_lists_is_g_single() {
    // Both read x as [] and appended; the final read shows 1 then 2.
    let h = history(&[
        (
            "a",
            0,
            5,
            vec![Mop::read("x"), Mop::append("x", 1)],
            Some(vec![Mop::read_of("x", l(&[])), Mop::append("x", 1)]),
        ),
        (
            "b",
            1,
            6,
            vec![Mop::read("x"), Mop::append("x", 2)],
            Some(vec![Mop::read_of("x", l(&[])), Mop::append("x", 2)]),
        ),
        (
            "c",
            7,
            8,
            vec![Mop::read("x")],
            Some(vec![Mop::read_of("x", l(&[1, 2]))]),
        ),
    ]);
    let report = check(&h, Workload::ListAppend, Isolation::SnapshotIsolation);
    assert_eq!(
        report.anomalies[0].kind,
        AnomalyKind::GSingle,
        "{}",
        report.explain()
    );
    assert!(check(&h, Workload::ListAppend, Isolation::ReadCommitted).is_valid());
}

#[test]
fn a_lost_update_on_registers_is_named() {
    let h = history(&[
        (
            "setup",
            0,
            1,
            vec![Mop::write("x", 0)],
            Some(vec![Mop::write("x", 0)]),
        ),
        (
            "a",
            2,
            5,
            vec![Mop::read("x"), Mop::write("x", 1)],
            Some(vec![Mop::read_of("x", 0), Mop::write("x", 1)]),
        ),
        (
            "b",
            3,
            6,
            vec![Mop::read("x"), Mop::write("x", 2)],
            Some(vec![Mop::read_of("x", 0), Mop::write("x", 2)]),
        ),
    ]);
    let report = check(&h, Workload::RwRegister, Isolation::SnapshotIsolation);
    let kinds: Vec<AnomalyKind> = report.anomalies.iter().map(|a| a.kind).collect();
    assert!(
        kinds.contains(&AnomalyKind::LostUpdate),
        "{}",
        report.explain()
    );
    assert!(
        report
            .explain()
            .contains("each read \"x\" = 0 and then wrote \"x\""),
        "{}",
        report.explain()
    );
    assert!(check(&h, Workload::RwRegister, Isolation::ReadCommitted).is_valid());
}

#[test]
fn write_skew_on_registers_is_g2() {
    let h = history(&[
        (
            "a",
            0,
            5,
            vec![Mop::read("x"), Mop::read("y"), Mop::write("x", 1)],
            Some(vec![
                Mop::read_of("x", ()),
                Mop::read_of("y", ()),
                Mop::write("x", 1),
            ]),
        ),
        (
            "b",
            1,
            6,
            vec![Mop::read("x"), Mop::read("y"), Mop::write("y", 2)],
            Some(vec![
                Mop::read_of("x", ()),
                Mop::read_of("y", ()),
                Mop::write("y", 2),
            ]),
        ),
    ]);
    assert!(check(&h, Workload::RwRegister, Isolation::SnapshotIsolation).is_valid());
    let report = check(&h, Workload::RwRegister, Isolation::Serializable);
    assert_eq!(
        report.anomalies[0].kind,
        AnomalyKind::G2,
        "{}",
        report.explain()
    );
}

#[test]
fn aborted_and_intermediate_reads_and_a_write_cycle() {
    let h = history(&[
        ("a", 0, 1, vec![Mop::append("x", 1)], None), // failed
        (
            "b",
            2,
            3,
            vec![Mop::read("x")],
            Some(vec![Mop::read_of("x", l(&[1]))]),
        ),
    ]);
    assert_eq!(
        check(&h, Workload::ListAppend, Isolation::ReadCommitted).anomalies[0].kind,
        AnomalyKind::G1a
    );
    let h = history(&[
        (
            "a",
            0,
            4,
            vec![Mop::append("x", 1), Mop::append("x", 2)],
            Some(vec![Mop::append("x", 1), Mop::append("x", 2)]),
        ),
        (
            "b",
            1,
            3,
            vec![Mop::read("x")],
            Some(vec![Mop::read_of("x", l(&[1]))]),
        ),
    ]);
    assert_eq!(
        check(&h, Workload::ListAppend, Isolation::ReadCommitted).anomalies[0].kind,
        AnomalyKind::G1b
    );
    // T0 before T1 on x, T1 before T0 on y: a write cycle.
    let h = history(&[
        (
            "a",
            0,
            4,
            vec![Mop::append("x", 1), Mop::append("y", 2)],
            Some(vec![Mop::append("x", 1), Mop::append("y", 2)]),
        ),
        (
            "b",
            1,
            5,
            vec![Mop::append("x", 3), Mop::append("y", 4)],
            Some(vec![Mop::append("x", 3), Mop::append("y", 4)]),
        ),
        (
            "c",
            6,
            7,
            vec![Mop::read("x"), Mop::read("y")],
            Some(vec![
                Mop::read_of("x", l(&[1, 3])),
                Mop::read_of("y", l(&[4, 2])),
            ]),
        ),
    ]);
    let report = check(&h, Workload::ListAppend, Isolation::ReadCommitted);
    assert_eq!(
        report.anomalies[0].kind,
        AnomalyKind::G0,
        "{}",
        report.explain()
    );
}

#[test]
fn histories_of_a_serializable_store_are_never_flagged_and_their_mutations_are() {
    let mut flagged = 0;
    for workload in [Workload::ListAppend, Workload::RwRegister] {
        for seed in 0..500 {
            let h = serial_history(seed, workload, 5 + (seed % 30) as usize);
            let report = check(&h, workload, Isolation::StrictSerializable);
            assert!(
                report.is_valid(),
                "{workload:?} seed {seed}:\n{}",
                report.explain()
            );
            // A read that saw the state before a write that completed
            // before it began: a stale read, which only real time forbids,
            // or a value nobody wrote.
            let mut mutated = History::new();
            let mut done = false;
            for event in h.events() {
                let mut event = event.clone();
                if !done && event.kind == Kind::Ok {
                    if let Value::List(steps) = &mut event.op.value {
                        for step in steps.iter_mut() {
                            if let Some(Value::Str(f)) =
                                step.as_list().and_then(|l| l.first()).cloned()
                            {
                                if f == "r" {
                                    if let Value::List(parts) = step {
                                        parts[2] = match workload {
                                            Workload::ListAppend => l(&[-1]),
                                            Workload::RwRegister => Value::Int(-1),
                                        };
                                        done = true;
                                        break;
                                    }
                                }
                            }
                        }
                    }
                }
                mutated.push(event).unwrap();
            }
            if done {
                let report = check(&mutated, workload, Isolation::ReadCommitted);
                assert!(
                    !report.is_valid(),
                    "{workload:?} seed {seed}: a read of a value never written passed"
                );
                flagged += 1;
            }
        }
    }
    assert!(flagged > 800, "{flagged}");
}

#[test]
fn a_stale_read_is_caught_by_strict_serializability() {
    let (mut caught, mut realtime) = (0, 0);
    for seed in 0..500 {
        let h = serial_history(seed, Workload::ListAppend, 5 + (seed % 30) as usize);
        let ops = h.operations();
        // Who appended each (key, value), and when it completed.
        let mut appended = std::collections::BTreeMap::new();
        for op in &ops {
            for m in op
                .op
                .mops()
                .into_iter()
                .filter(|m| m.kind == MopKind::Append)
            {
                appended.insert((m.key.clone(), m.value.clone()), op.complete.unwrap().0);
            }
        }
        // A transaction's first step, a read whose last element's
        // appender completed before the transaction began: drop that
        // element, as a replica behind the leader would.
        let target = ops.iter().find_map(|op| {
            let steps = op.output()?.as_list()?;
            let first = sim_history::Mop::from_value(steps.first()?)?;
            let last = first.value.as_list()?.last()?.clone();
            let done = appended.get(&(first.key.clone(), last))?;
            (first.kind == MopKind::Read && *done < op.invoke_index).then_some(op.id)
        });
        let Some(target) = target else { continue };
        let mut mutated = History::new();
        for event in h.events() {
            let mut event = event.clone();
            if event.id == target && event.kind == Kind::Ok {
                if let Value::List(steps) = &mut event.op.value {
                    if let Value::List(parts) = &mut steps[0] {
                        if let Value::List(seen) = &mut parts[2] {
                            seen.pop();
                        }
                    }
                }
            }
            mutated.push(event).unwrap();
        }
        let strict = check(
            &mutated,
            Workload::ListAppend,
            Isolation::StrictSerializable,
        );
        assert!(
            !strict.is_valid(),
            "seed {seed}: a stale read passed strict serializability\n{}",
            mutated.to_edn()
        );
        // Where no other order breaks, it is the real-time order.
        if check(&mutated, Workload::ListAppend, Isolation::Serializable).is_valid() {
            assert!(
                strict.anomalies.iter().any(|a| a.realtime),
                "{}",
                strict.explain()
            );
            realtime += 1;
        }
        caught += 1;
    }
    assert!(
        caught > 100 && realtime > 20,
        "{caught} caught, {realtime} by real time only"
    );
}
