//! `cargo sim history FILE [--name N] [--edn] [--check MODEL]`: a run's
//! history of client operations (`tokio::sim::history`), read out of its
//! trace (or a history file), printed as JSON lines or EDN, or checked as
//! `Sim::check_history` checks it.

use crate::cli::{CheckModel, HistoryArgs, IsolationArg};
use sim_history::elle::{self, Isolation, Workload};
use sim_history::linear::{self, models, Budget, Model, Verdict};
use sim_history::History;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// The default history's name (`tokio::sim::history::DEFAULT`).
const DEFAULT_NAME: &str = "ops";

pub fn command(args: &HistoryArgs) -> Result<ExitCode, String> {
    let histories = read(&args.file)?;
    let history = pick(&histories, args.name.as_deref(), &args.file)?;
    let Some(model) = args.check else {
        let text = if args.edn {
            history.to_edn()
        } else {
            history.to_jsonl()
        };
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    };
    let budget = Budget {
        steps_max: args.budget_steps,
    };
    let (valid, text) = match model {
        CheckModel::Register => linearizable(&models::Register::new(), history, budget),
        CheckModel::Kv => linearizable(&models::KeyValue::new(), history, budget),
        CheckModel::Set => linearizable(&models::Set::new(), history, budget),
        CheckModel::Queue => linearizable(&models::Queue::new(), history, budget),
        CheckModel::Counter => linearizable(&models::Counter::new(), history, budget),
        CheckModel::ListAppend => transactional(history, Workload::ListAppend, args.isolation),
        CheckModel::RwRegister => transactional(history, Workload::RwRegister, args.isolation),
    };
    println!("{text}");
    Ok(if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every history in `file`: a history file's one (named `ops`), or each a
/// trace's notes hold.
fn read(file: &Path) -> Result<BTreeMap<String, History>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let one = |history: Result<History, String>| {
        history
            .map(|h| BTreeMap::from([(DEFAULT_NAME.to_string(), h)]))
            .map_err(|e| format!("{}: {e}", file.display()))
    };
    match file.extension().and_then(|e| e.to_str()) {
        Some("jsonl" | "json") => return one(History::from_jsonl(&text)),
        Some("edn") => return one(History::from_edn(&text)),
        _ => {}
    }
    let notes: Vec<(u64, String)> = text
        .lines()
        .filter_map(crate::timeline::parse_line)
        .filter(|e| e.kind == "note" && e.label.starts_with("history "))
        .map(|e| (e.ns, e.label))
        .collect();
    sim_history::note::histories(notes.iter().map(|(ns, label)| (*ns, label.as_str())))
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// The history `name`, or the only one, or `ops`.
fn pick<'a>(
    histories: &'a BTreeMap<String, History>,
    name: Option<&str>,
    file: &Path,
) -> Result<&'a History, String> {
    let names: Vec<&str> = histories.keys().map(String::as_str).collect();
    let wanted = match (name, names.as_slice()) {
        (Some(name), _) => name,
        (None, [only]) => only,
        (None, _) => DEFAULT_NAME,
    };
    histories.get(wanted).ok_or_else(|| {
        if names.is_empty() {
            format!(
                "{} holds no history: a run records one with tokio::sim::history::op (a trace's notes \
                 `history NAME ...`, or a .jsonl/.edn file)",
                file.display()
            )
        } else {
            format!(
                "{} holds no history named '{wanted}'; it holds: {} (pick one with --name)",
                file.display(),
                names.join(", ")
            )
        }
    })
}

fn linearizable<M: Model>(model: &M, history: &History, budget: Budget) -> (bool, String) {
    let report = linear::check(model, history, budget);
    let head = format!(
        "{} operations in {} partitions, {} model steps",
        report.operations, report.partitions, report.steps
    );
    match report.verdict {
        Verdict::Ok => (true, format!("linearizable ({}): {head}", report.model)),
        Verdict::Illegal(illegal) => (
            false,
            format!(
                "not linearizable ({}): {head}; the smallest window that cannot be linearized, {} operations:\n{}",
                report.model,
                illegal.window.len(),
                illegal.explain()
            ),
        ),
        Verdict::Unknown { partition } => (
            false,
            format!(
                "unknown ({}): {head}; partition {partition} undecided within the budget (--budget-steps)",
                report.model
            ),
        ),
    }
}

fn transactional(history: &History, workload: Workload, isolation: IsolationArg) -> (bool, String) {
    let isolation = match isolation {
        IsolationArg::ReadCommitted => Isolation::ReadCommitted,
        IsolationArg::SnapshotIsolation => Isolation::SnapshotIsolation,
        IsolationArg::Serializable => Isolation::Serializable,
        IsolationArg::StrictSerializable => Isolation::StrictSerializable,
    };
    let report = elle::check(history, workload, isolation);
    if report.is_valid() {
        return (
            true,
            format!(
                "{isolation:?}: no anomaly it forbids in {} transactions",
                report.transactions
            ),
        );
    }
    (
        false,
        format!(
            "not {isolation:?}: {} transactions\n{}",
            report.transactions,
            report.explain().trim_end()
        ),
    )
}
