//! The harness chapter's history example, exactly as the guide shows it:
//! every recording call and every check builder, with its arguments.
//! Simulation build only: `tokio::sim` is the facade's.
#![cfg(simulation)]

// guide-history:start
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::sim::history::{
    self, models, Completion, Isolation, Linearizable, Mop, Op, Transactional,
};
use tokio::sim::Sim;

/// Two histories in one run: a register (checked as it goes) and lists
/// written by transactions (checked for snapshot isolation).
#[test]
fn a_register_and_transactions_on_lists() {
    let mut sim = Sim::new();
    sim.check_history(
        Linearizable::new(models::Register::new())
            .history("register") // default: "ops"
            .budget_steps(1_000_000) // default: 10 million model steps
            .as_it_goes(10), // also every 10 completions, not only at the end
    );
    sim.check_history(
        Transactional::list_append() // or Transactional::rw_register()
            .isolation(Isolation::SnapshotIsolation) // default: Serializable
            .history("lists")
            .as_it_goes(5),
    );
    let register = Rc::new(RefCell::new(0i64));
    let lists: Rc<RefCell<HashMap<&str, Vec<i64>>>> = Rc::default();
    for client in ["a", "b"] {
        let (register, lists) = (register.clone(), lists.clone());
        sim.client(client, async move {
            for n in 1..=10i64 {
                let value = n * 10 + i64::from(client == "b");
                // One line per operation: the future's Ok(v) is "it happened
                // and returned v"; an Err would be "nobody knows".
                let write = async {
                    *register.borrow_mut() = value;
                    Ok::<_, ()>(())
                };
                history::named("register")
                    .op(Op::write("r", value), write)
                    .await
                    .unwrap();
                tokio::time::sleep(Duration::from_millis(1)).await;
                let read = async { Ok::<_, ()>(*register.borrow()) };
                history::named("register")
                    .op(Op::read("r"), read)
                    .await
                    .unwrap();
                // Or by hand: invoke, then ok / fail / info (dropped: info).
                let txn = history::named("lists")
                    .invoke(Op::txn([Mop::read("x"), Mop::append("x", value)]));
                let seen = lists.borrow().get("x").cloned().unwrap_or_default();
                lists.borrow_mut().entry("x").or_default().push(value);
                txn.ok(vec![Mop::read_of("x", seen), Mop::append("x", value)]);
                // A refusal the client is sure of never happened.
                history::named("lists")
                    .op(Op::txn([Mop::append("y", value)]), async {
                        Completion::Fail
                    })
                    .await;
            }
        });
    }
    let report = sim.run();
    assert_eq!(report.histories["register"].operations().len(), 40);
    assert_eq!(report.histories["lists"].operations().len(), 40);
}
// guide-history:end

#[test]
fn the_guide_shows_this_example() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/guide_history.rs"
    ))
    .unwrap();
    let between = |text: &str, start: &str, end: &str| -> String {
        let from = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
        let to = text[from..].find(end).unwrap_or_else(|| panic!("no {end}")) + from;
        text[from..to].to_string()
    };
    let code = between(&source, "// guide-history:start\n", "// guide-history:end");
    let guide = sim_test_support::docs();
    let shown = between(
        &guide,
        "<!-- history-builders:start",
        "<!-- history-builders:end",
    );
    assert!(
        shown.contains(code.trim()),
        "docs/harness.md's history example differs from examples/tests/guide_history.rs"
    );
}
