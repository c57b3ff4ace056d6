//! The checks `Sim::check_history` runs over a run's histories: at the
//! end of the run, or as it goes (every so many completions, on the
//! history so far, its open operations unknown). What a check finds fails
//! the run with class `consistency`: the smallest window of operations
//! that cannot be linearized, as a table of clients by time, or each
//! anomaly's cycle, edge by edge.

use super::{note_in_trace, recorder, History, DEFAULT};
use sim_history::elle::{self, Isolation, Workload};
use sim_history::linear::{self, Budget, Model, Verdict};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// What a check found wrong: the report, and the operations to mark.
pub struct Finding {
    /// What went wrong, in a line: `history `ops` is not linearizable
    /// (key-value map)`.
    pub title: String,
    /// Why, in words and tables.
    pub body: String,
    /// The operations at fault (their ids), marked in the trace and the
    /// timeline.
    pub operations: Vec<u64>,
    /// `illegal`, `anomaly` or `unknown`: the word of the trace's note.
    pub verdict: &'static str,
}

/// A check over one history of the run.
pub trait HistoryCheck {
    /// The history it reads.
    fn history(&self) -> &str;

    /// Every how many completions it runs while the run goes on (`None`:
    /// only at the end).
    fn every(&self) -> Option<u64>;

    /// Checks `history` (at the end of the run, or so far); `None` when
    /// nothing is wrong.
    fn check(&self, history: &History) -> Option<Finding>;
}

/// Linearizability of a history against a [`Model`].
///
/// ```
/// use tokio::sim::history::{models, Linearizable};
/// use tokio::sim::Sim;
///
/// let mut sim = Sim::new();
/// sim.check_history(
///     Linearizable::new(models::KeyValue::new())
///         .history("kv")              // default: "ops"
///         .budget_steps(5_000_000)    // default: 10 million model steps
///         .as_it_goes(100),           // also every 100 completions
/// );
/// ```
pub struct Linearizable<M: Model> {
    model: M,
    history: String,
    budget: Budget,
    every: Option<u64>,
}

impl<M: Model> Linearizable<M> {
    /// Checks the default history (`ops`) against `model`, at the end of
    /// the run, within the default budget.
    pub fn new(model: M) -> Linearizable<M> {
        Linearizable {
            model,
            history: DEFAULT.to_string(),
            budget: Budget::default(),
            every: None,
        }
    }

    /// Checks the history `name` instead.
    pub fn history(mut self, name: &str) -> Self {
        self.history = name.to_string();
        self
    }

    /// The most model steps one check may take; past it the verdict is
    /// unknown, which fails the run too (counted in steps, so it replays).
    pub fn budget_steps(mut self, steps: u64) -> Self {
        self.budget = Budget { steps_max: steps };
        self
    }

    /// Also checks the history so far every `completions` completions, so
    /// a run fails close to where it went wrong.
    ///
    /// # Panics
    /// For 0.
    pub fn as_it_goes(mut self, completions: u64) -> Self {
        assert!(
            completions > 0,
            "sim: Linearizable::as_it_goes(0): check every 1 or more completions"
        );
        self.every = Some(completions);
        self
    }
}

impl<M: Model> HistoryCheck for Linearizable<M> {
    fn history(&self) -> &str {
        &self.history
    }

    fn every(&self) -> Option<u64> {
        self.every
    }

    fn check(&self, history: &History) -> Option<Finding> {
        let report = linear::check(&self.model, history, self.budget);
        let name = &self.history;
        match report.verdict {
            Verdict::Ok => None,
            Verdict::Illegal(illegal) => {
                let key = if illegal.partition.is_nil() {
                    String::new()
                } else {
                    format!(", on key {}", illegal.partition)
                };
                let minimal = if illegal.minimal {
                    ""
                } else {
                    " (the search for a smaller one ran out of budget)"
                };
                Some(Finding {
                    title: format!("history `{name}` is not linearizable ({})", report.model),
                    body: format!(
                        "The smallest window of operations that cannot be linearized, {} of {} \
                         operations{key}{minimal}:\n{}",
                        illegal.window.len(),
                        report.operations,
                        illegal.explain()
                    ),
                    operations: illegal.window.iter().map(|op| op.id).collect(),
                    verdict: "illegal",
                })
            }
            Verdict::Unknown { partition } => Some(Finding {
                title: format!(
                    "history `{name}` could not be checked for linearizability ({}) within its budget of \
                     {} model steps",
                    report.model, self.budget.steps_max
                ),
                body: format!(
                    "{} operations; key {partition} undecided. Not a pass: raise the budget \
                     (Linearizable::budget_steps) or record fewer operations per run.",
                    report.operations
                ),
                operations: Vec::new(),
                verdict: "unknown",
            }),
        }
    }
}

/// Transactional anomalies, as Elle finds them, in a history of
/// transactions (`Op::txn`).
///
/// ```
/// use tokio::sim::history::{Isolation, Transactional};
/// use tokio::sim::Sim;
///
/// let mut sim = Sim::new();
/// sim.check_history(
///     Transactional::list_append()              // or ::rw_register()
///         .isolation(Isolation::SnapshotIsolation) // default: Serializable
///         .history("txns")                       // default: "ops"
///         .as_it_goes(50),                       // also every 50 completions
/// );
/// ```
pub struct Transactional {
    workload: Workload,
    isolation: Isolation,
    history: String,
    every: Option<u64>,
}

impl Transactional {
    /// Transactions that append unique values to lists and read whole
    /// lists; checked for serializability.
    pub fn list_append() -> Transactional {
        Transactional::new(Workload::ListAppend)
    }

    /// Transactions that write unique values to registers and read them;
    /// checked for serializability.
    pub fn rw_register() -> Transactional {
        Transactional::new(Workload::RwRegister)
    }

    fn new(workload: Workload) -> Transactional {
        Transactional {
            workload,
            isolation: Isolation::Serializable,
            history: DEFAULT.to_string(),
            every: None,
        }
    }

    /// The isolation level the store promises: what the check forbids.
    pub fn isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// Checks the history `name` instead of the default.
    pub fn history(mut self, name: &str) -> Self {
        self.history = name.to_string();
        self
    }

    /// Also checks the history so far every `completions` completions.
    ///
    /// # Panics
    /// For 0.
    pub fn as_it_goes(mut self, completions: u64) -> Self {
        assert!(
            completions > 0,
            "sim: Transactional::as_it_goes(0): check every 1 or more completions"
        );
        self.every = Some(completions);
        self
    }
}

impl HistoryCheck for Transactional {
    fn history(&self) -> &str {
        &self.history
    }

    fn every(&self) -> Option<u64> {
        self.every
    }

    fn check(&self, history: &History) -> Option<Finding> {
        let report = elle::check(history, self.workload, self.isolation);
        if report.is_valid() {
            return None;
        }
        let counts: Vec<String> = report
            .counts
            .iter()
            .map(|(kind, n)| format!("{} {n}", kind.name()))
            .collect();
        let operations = report
            .anomalies
            .iter()
            .flat_map(|a| a.transactions.iter())
            .filter_map(|t| t.strip_prefix('T')?.split(' ').next()?.parse().ok())
            .collect();
        Some(Finding {
            title: format!(
                "history `{}` shows anomalies {:?} forbids",
                self.history, self.isolation
            ),
            body: format!(
                "{} transactions; found: {}.\n{}",
                report.transactions,
                counts.join(", "),
                report.explain().trim_end()
            ),
            operations,
            verdict: "anomaly",
        })
    }
}

/// The run's checks, and how many completions each history has had.
#[derive(Default)]
struct Installed {
    checks: RefCell<Vec<Rc<dyn HistoryCheck>>>,
    completions: RefCell<BTreeMap<String, u64>>,
}

fn installed() -> Option<Rc<Installed>> {
    sim_runtime::context::with_current(|core| core.extension(Installed::default))
}

/// Registers the run's checks; those that run as they go are told of each
/// completion. With none, nothing is hooked.
pub(crate) fn install(checks: Vec<Rc<dyn HistoryCheck>>) {
    if checks.is_empty() {
        return;
    }
    let (Some(state), Some(recorder)) = (installed(), recorder()) else {
        return;
    };
    if checks.iter().any(|c| c.every().is_some()) {
        *recorder.on_complete.borrow_mut() = Some(Rc::new(completed));
    }
    *state.checks.borrow_mut() = checks;
}

/// A completion of history `name`: the checks of it that run as they go,
/// when their count comes round.
fn completed(name: &str) {
    let Some(installed) = installed() else { return };
    let count = {
        let mut completions = installed.completions.borrow_mut();
        let count = completions.entry(name.to_string()).or_default();
        *count += 1;
        *count
    };
    let checks = installed.checks.borrow().clone();
    for check in checks {
        let due = check.history() == name && check.every().is_some_and(|every| count % every == 0);
        if due && run_check(check.as_ref(), "so far") {
            return;
        }
    }
}

/// Every check, on the whole history, at the end of the run.
pub(crate) fn check_at_end() {
    let Some(installed) = installed() else { return };
    let checks = installed.checks.borrow().clone();
    for check in checks {
        if run_check(check.as_ref(), "at the end of the run") {
            return;
        }
    }
}

/// Runs one check on its history now; true when it failed the run.
fn run_check(check: &dyn HistoryCheck, when: &str) -> bool {
    let history = super::snapshot(check.history());
    let Some(finding) = check.check(&history) else {
        return false;
    };
    note_in_trace(&sim_history::note::verdict_note(
        check.history(),
        finding.verdict,
        &finding.operations,
    ));
    sim_runtime::context::with_current(|core| {
        let report = format!(
            "sim: consistency: {}, checked {when}, at virtual time {} (seed {:#x}).\n{}\n{}",
            finding.title,
            sim_history::table::seconds(core.now_ns()),
            core.config().seed,
            finding.body.trim_end(),
            core.story_report().trim_end()
        );
        core.fail_run(sim_runtime::sweep::FailureClass::Consistency, report);
    });
    true
}
