//! A run's side of the properties: each evaluation counted in the run (a
//! runtime extension, so a simulated thread's count goes to its run), a
//! broken `always` or a reached `unreachable` failing it, and what the run
//! reached when it ends.

use super::site::{sites, Kind, Reached, Site};
use crate::executor::Core;
use crate::failure::FailureClass;
use std::cell::RefCell;

impl Site {
    /// One evaluation: `holds` is the condition (`true` for the
    /// `reachable` and `unreachable` kinds, which have none). `details`
    /// renders the assertion's details, asked only for a failure report.
    #[inline]
    pub fn observe(&'static self, holds: bool, details: Option<&dyn Fn() -> String>) {
        let index = self.register();
        crate::context::with_simulation(|core| {
            let run = core.extension(RunCounts::default);
            let held = run.count(index, holds);
            if holds {
                run.maybe_branch(core, self, held);
            }
            if self.kind.fails_on(holds) {
                let report = self.failure_report(core, details);
                core.fail_run(FailureClass::Assertion, report);
            }
        });
    }

    fn failure_report(&self, core: &Core, details: Option<&dyn Fn() -> String>) -> String {
        let what = match self.kind {
            Kind::Unreachable => "was reached",
            _ => "did not hold",
        };
        let details = details.map_or(String::new(), |d| format!("\n  details: {}", d()));
        format!(
            "sim: assertion: {} \"{}\" {what} at {}, virtual time {:?} (seed {:#x}){details}",
            self.kind.as_str(),
            self.message,
            self.location(),
            std::time::Duration::from_nanos(core.now_ns()),
            core.config().seed,
        )
    }
}

/// What one run counted, per site index: evaluations that held and that
/// did not; and, in a branch run, the points it passed.
#[derive(Default)]
struct RunCounts {
    counts: RefCell<Vec<(u64, u64)>>,
    /// The branch points passed (of the process's plan).
    cuts_passed: std::cell::Cell<usize>,
    /// Each site's held count at the last point passed.
    held_at_cut: RefCell<Vec<u64>>,
}

impl RunCounts {
    /// Counts an evaluation; the site's held count now.
    fn count(&self, index: usize, holds: bool) -> u64 {
        let mut counts = self.counts.borrow_mut();
        if counts.len() <= index {
            counts.resize(index + 1, (0, 0));
        }
        let entry = &mut counts[index];
        if holds {
            entry.0 += 1;
        } else {
            entry.1 += 1;
        }
        entry.0
    }

    /// In a branch run, a satisfaction of `site` (its `held`-th) that is
    /// the plan's next point: every stream draws afresh from here.
    fn maybe_branch(&self, core: &Core, site: &Site, held: u64) {
        let Some(plan) = super::branch::plan() else {
            return;
        };
        let passed = self.cuts_passed.get();
        let Some(cut) = plan.cuts.get(passed) else {
            return;
        };
        if cut.nth != held || cut.location != site.location() {
            return;
        }
        // The plan's last point forks the job's other runs, if it has any.
        let salt = match passed + 1 == plan.cuts.len() {
            true => super::fork::serve(cut.salt),
            false => cut.salt,
        };
        crate::rng::branch(salt);
        self.cuts_passed.set(passed + 1);
        *self.held_at_cut.borrow_mut() = self.counts.borrow().iter().map(|c| c.0).collect();
        let note = format!(
            "branch {} at {} (satisfied {held}), salt {:#x}",
            passed + 1,
            cut.location,
            salt
        );
        core.trace(
            crate::trace::EventKind::Note,
            core.current_task(),
            crate::trace::Label::Str(&note),
        );
    }
}

/// The sites `core`'s run reached, with their counts, in site order.
pub fn reached(core: &Core) -> Vec<Reached> {
    let run = core.extension(RunCounts::default);
    let counts = run.counts.borrow();
    let at_cut = run.held_at_cut.borrow();
    let mut out: Vec<Reached> = sites()
        .into_iter()
        .filter_map(|site| {
            let index = site.index()?;
            let (held, broken) = *counts.get(index)?;
            let fresh = held - at_cut.get(index).copied().unwrap_or(0);
            (held + broken > 0).then_some(Reached {
                site,
                held,
                broken,
                fresh,
            })
        })
        .collect();
    out.sort_by_key(|r| (r.site.file, r.site.line, r.site.column));
    out
}
