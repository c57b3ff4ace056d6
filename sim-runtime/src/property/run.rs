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
            run.count(index, holds);
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
/// did not.
#[derive(Default)]
struct RunCounts {
    counts: RefCell<Vec<(u64, u64)>>,
}

impl RunCounts {
    fn count(&self, index: usize, holds: bool) {
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
    }
}

/// The sites `core`'s run reached, with their counts, in site order.
pub fn reached(core: &Core) -> Vec<Reached> {
    let run = core.extension(RunCounts::default);
    let counts = run.counts.borrow();
    let mut out: Vec<Reached> = sites()
        .into_iter()
        .filter_map(|site| {
            let (held, broken) = *counts.get(site.index()?)?;
            (held + broken > 0).then_some(Reached { site, held, broken })
        })
        .collect();
    out.sort_by_key(|r| (r.site.file, r.site.line, r.site.column));
    out
}
