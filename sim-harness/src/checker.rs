//! Checkers: the run's invariants, checked after every harness event (a
//! network delivery, a fault, a lifecycle event, a publication) and once
//! more at the end. A violation fails the run with class `correctness`,
//! naming the checker, with its message, the virtual time and the story
//! of what happened before it (the core's story).

use crate::observe::{now, subscribe, with_observations, Observations};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// An invariant over the published observations.
pub(crate) type CheckFn = Rc<dyn Fn(&Observations<'_>) -> Result<(), String>>;

#[derive(Default)]
struct Checks {
    checkers: RefCell<Vec<(String, CheckFn)>>,
    /// Set while checkers run: one that publishes does not re-enter.
    running: Cell<bool>,
}

fn checks() -> Option<Rc<Checks>> {
    sim_runtime::context::with_current(|core| core.extension(Checks::default))
}

/// Registers the run's checkers and has them run after every scheduled
/// callback. With none, nothing is hooked: a run without checkers pays
/// nothing.
pub(crate) fn install(checkers: Vec<(String, CheckFn)>) {
    if checkers.is_empty() {
        return;
    }
    let Some(checks) = checks() else { return };
    *checks.checkers.borrow_mut() = checkers;
    sim_runtime::context::with_current(|core| {
        core.set_after_call(Some(Rc::new(|label: &'static str| after_event(label))));
    });
    // A publication is a harness event too.
    subscribe(Rc::new(after_event));
}

/// A harness event happened: check every invariant.
fn after_event(_what: &str) {
    let Some(checks) = checks() else { return };
    if checks.checkers.borrow().is_empty() || checks.running.get() {
        return;
    }
    check_all(&checks);
}

/// Checks every invariant now (also at the end of a run).
pub(crate) fn check_now() {
    if let Some(checks) = checks() {
        if !checks.checkers.borrow().is_empty() && !checks.running.get() {
            check_all(&checks);
        }
    }
}

fn check_all(checks: &Checks) {
    checks.running.set(true);
    let checkers = checks.checkers.borrow().clone();
    let failure = with_observations(|obs| {
        checkers
            .iter()
            .find_map(|(name, check)| check(obs).err().map(|m| (name.clone(), m)))
    })
    .flatten();
    checks.running.set(false);
    if let Some((name, message)) = failure {
        sim_runtime::context::with_current(|core| {
            let report = format!(
                "sim: correctness: checker `{name}` failed at virtual time {:?} (seed {:#x}): \
                 {}\n{}",
                now(),
                core.config().seed,
                elide(&message),
                core.story_report().trim_end()
            );
            // The run stops at once, wherever the event happened (in a
            // task, a panic would only end that task).
            core.fail_run(sim_runtime::sweep::FailureClass::Correctness, report);
        });
    }
}

/// A checker's message cut to 240 bytes, at a space.
pub(crate) fn elide(text: &str) -> String {
    sim_runtime::trace::cut_at_word(text, 240)
}
