//! `tokio::sim::history`: recording a run's client operations, and the
//! checks of them at the end of the run or as it goes. Simulation build
//! only: `tokio::sim` is the facade's.
#![cfg(simulation)]

use sim_runtime::SimConfig;
use sim_test_support::panic_text;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;
use tokio::sim::history::{
    self, models, Completion, Isolation, Kind, Linearizable, Mop, Op, Outcome, Transactional, Value,
};
use tokio::sim::{Fault, Sim};

/// A register in one cell of memory, with a stale copy a buggy reader
/// returns after `stale_after` writes.
fn register_sim(seed: u64, stale_after: Option<i64>) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    sim.check_history(Linearizable::new(models::KeyValue::new()));
    let cell = Rc::new(Cell::new(0i64));
    let stale = Rc::new(Cell::new(0i64));
    let (w_cell, w_stale) = (cell.clone(), stale.clone());
    sim.client("writer", async move {
        for n in 1..=10 {
            history::op(Op::write("x", n), async {
                tokio::time::sleep(Duration::from_millis(3)).await;
                if stale_after.is_none_or(|after| n <= after) {
                    w_stale.set(n);
                }
                w_cell.set(n);
                Ok::<_, ()>(())
            })
            .await
            .unwrap();
        }
    });
    sim.client("reader", async move {
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(4)).await;
            let source = if stale_after.is_some() { &stale } else { &cell };
            history::op(Op::read("x"), async {
                Ok::<_, ()>(Some(source.get()).filter(|v| *v > 0))
            })
            .await
            .unwrap();
        }
    });
    sim
}

#[test]
fn a_linearizable_register_passes_and_reports_its_history() {
    let report = register_sim(7, None).run();
    let ops = report.histories["ops"].operations();
    assert_eq!(ops.len(), 20);
    assert!(ops.iter().all(|op| op.is_ok()));
    assert_eq!(ops.iter().filter(|op| op.client == "reader").count(), 10);
}

#[test]
fn a_stale_read_fails_the_run_with_the_window_that_cannot_be_linearized() {
    let text = panic_text(std::panic::catch_unwind(|| register_sim(7, Some(4)).run()).unwrap_err());
    assert!(
        text.starts_with("sim: consistency: history `ops` is not linearizable (key-value map), checked at the end of the run"),
        "{text}"
    );
    assert!(text.contains("on key \"x\""), "{text}");
    // The table: the clients as columns, the stale read marked.
    assert!(text.contains("invoked     returned    writer"), "{text}");
    assert!(text.contains("read \"x\" -> 4  <-"), "{text}");
    assert!(text.contains("write \"x\" 5 -> nil"), "{text}");
    assert!(
        text.contains("by reader cannot take effect between its invocation and its return"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nThe smallest window of operations that cannot be linearized, 3 of 20 operations"
        ),
        "{text}"
    );
}

#[test]
fn as_it_goes_the_check_fails_the_run_close_to_the_stale_read() {
    let at_end =
        panic_text(std::panic::catch_unwind(|| register_sim(7, Some(4)).run()).unwrap_err());
    let mut sim = register_sim(7, Some(4));
    sim.check_history(Linearizable::new(models::KeyValue::new()).as_it_goes(1));
    let early = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        early.contains(", checked so far, at virtual time"),
        "{early}"
    );
    let time = |text: &str| -> f64 {
        let at = text.split("at virtual time ").nth(1).unwrap();
        at.split(' ').next().unwrap().parse().unwrap()
    };
    assert!(time(&early) < time(&at_end), "{early}\n---\n{at_end}");
}

#[test]
fn an_operation_open_at_a_crash_or_a_drop_is_unknown() {
    let mut sim = Sim::with_config(SimConfig::with_seed(3));
    sim.host("db", || async {
        // Invoked, never completed: the crash at 1 s drops it.
        let _pending = history::invoke(Op::write("k", 1));
        std::future::pending::<()>().await;
    });
    sim.at(Duration::from_secs(1), Fault::Crash("db".into()));
    sim.client("client", async {
        // A future dropped by a timeout.
        let slow = history::op(Op::write("k", 2), async {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, ()>(())
        });
        assert!(tokio::time::timeout(Duration::from_millis(500), slow)
            .await
            .is_err());
        // Explicit completions.
        history::invoke(Op::write("k", 3)).fail();
        history::op(Op::read("k"), async { Completion::Info }).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    let report = sim.run();
    let ops = report.histories["ops"].operations();
    let outcome = |value: i64| {
        ops.iter()
            .find(|op| op.op.value == Value::Int(value))
            .unwrap()
    };
    let crashed = outcome(1);
    assert_eq!(
        (crashed.outcome.clone(), crashed.complete.map(|c| c.1)),
        (Outcome::Info, Some(1_000_000_000))
    );
    let dropped = outcome(2);
    assert_eq!(
        (dropped.outcome.clone(), dropped.complete.map(|c| c.1)),
        (Outcome::Info, Some(500_000_000))
    );
    assert_eq!(outcome(3).outcome, Outcome::Fail);
    assert_eq!(ops[3].outcome, Outcome::Info);
    assert_eq!(
        report.histories["ops"]
            .events()
            .iter()
            .filter(|e| e.kind == Kind::Info)
            .count(),
        3
    );
}

#[test]
fn a_check_that_runs_out_of_budget_is_unknown_and_fails_the_run() {
    let mut sim = register_sim(7, None);
    sim.check_history(Linearizable::new(models::KeyValue::new()).budget_steps(3));
    let text = panic_text(
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sim.run())).unwrap_err(),
    );
    assert!(
        text.starts_with("sim: consistency: history `ops` could not be checked for linearizability (key-value map) within its budget of 3 model steps"),
        "{text}"
    );
    assert!(text.contains("key \"x\" undecided. Not a pass"), "{text}");
}

/// A store of lists whose transactions read a snapshot and then apply
/// their appends without checking for conflicts: a lost update.
fn lost_update_sim(seed: u64) -> Sim {
    let mut sim = Sim::with_config(SimConfig::with_seed(seed));
    sim.check_history(Transactional::list_append().isolation(Isolation::SnapshotIsolation));
    let list: Rc<std::cell::RefCell<Vec<i64>>> = Rc::default();
    for (client, value) in [("a", 1), ("b", 2)] {
        let list = list.clone();
        sim.client(client, async move {
            let steps = [Mop::read("x"), Mop::append("x", value)];
            history::op(Op::txn(steps), async {
                let snapshot = list.borrow().clone();
                tokio::time::sleep(Duration::from_millis(5)).await;
                list.borrow_mut().push(value);
                Ok::<_, ()>(vec![
                    Value::from(Mop::read_of("x", snapshot)),
                    Mop::append("x", value).into(),
                ])
            })
            .await
            .unwrap();
        });
    }
    let reader = list.clone();
    sim.client("c", async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        history::op(Op::txn([Mop::read("x")]), async {
            Ok::<_, ()>(vec![Value::from(Mop::read_of(
                "x",
                reader.borrow().clone(),
            ))])
        })
        .await
        .unwrap();
    });
    sim
}

#[test]
fn a_lost_update_is_named_with_its_cycle() {
    let text = panic_text(std::panic::catch_unwind(|| lost_update_sim(1).run()).unwrap_err());
    assert!(
        text.starts_with("sim: consistency: history `ops` shows anomalies SnapshotIsolation forbids, checked at the end"),
        "{text}"
    );
    assert!(
        text.contains("G-single (read skew: a cycle with one anti-dependency):"),
        "{text}"
    );
    assert!(text.contains("(rw): T"), "{text}");
    assert!(text.contains("(ww): T"), "{text}");
}

#[test]
fn each_record_is_a_note_of_the_trace() {
    let dir = std::env::temp_dir().join(format!("sim-history-notes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let path = dir.join("trace");
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var("SIM_TRACE", &path);
    let _ = std::panic::catch_unwind(|| register_sim(7, Some(4)).run());
    std::env::remove_var("SIM_TRACE");
    // Under cargo sim test, the file's name ends with the test's.
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let trace = std::fs::read_to_string(file).unwrap();
    assert!(
        trace.contains("history ops invoke #0 \"writer\" write \"x\" 1"),
        "{trace}"
    );
    assert!(
        trace.contains("history ops ok #0 \"writer\" write \"x\" -> nil"),
        "{trace}"
    );
    assert!(
        trace.lines().any(|l| l.contains("history ops illegal #")),
        "{trace}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
