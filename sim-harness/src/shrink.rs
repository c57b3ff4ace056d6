//! What `cargo sim test --shrink` needs from a harness run. Each fault the
//! harness injects, a `Sim::at` fault or one action of the nemesis (a
//! crash and its restart, a cut and its heal), is a unit with a number, in
//! the order the units begin. The runner then asks for the same seed with
//! some units left out, and with links made fast:
//!
//! - `SIM_SHRINK_SKIP=3,7,12-`: units 3 and 7 do nothing, nor any unit
//!   from 12 on;
//! - `SIM_SHRINK_FAST_LINKS=1`: every link's latency is 0;
//! - `SIM_SHRINK_LATER=2:500000000`: unit 2 applies its fault 0.5 s after
//!   its time (a nemesis action starts that much later);
//! - `SIM_SHRINK_OUT=<file>`: the run appends each fault it applies, as
//!   `<unit> <virtual ns> <Rust code>` (a line for a `Sim::at` scenario).
//!
//! Leaving units out shifts no other unit's times: each generator draws
//! from its own stream of the seed tree.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::rc::Rc;

use sim_runtime::sweep::{
    SHRINK_FAST_LINKS_VAR as FAST_LINKS_VAR, SHRINK_LATER_VAR as LATER_VAR,
    SHRINK_SKIP_VAR as SKIP_VAR,
};
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Default)]
struct State {
    next: Cell<u64>,
    skip: RefCell<Option<(BTreeSet<u64>, Option<u64>)>>,
    later: RefCell<Option<BTreeMap<u64, u64>>>,
}

fn state() -> Option<Rc<State>> {
    sim_runtime::context::with_current(|core| core.extension(State::default))
}

/// The units left out: a list, and `N-` for every unit from `N` on.
fn skip_set() -> (BTreeSet<u64>, Option<u64>) {
    let text = sim_runtime::decision::var(SKIP_VAR)
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut units = BTreeSet::new();
    let mut from = None;
    for item in text.split(',').map(str::trim) {
        if let Some(n) = item.strip_suffix('-').and_then(|n| n.parse::<u64>().ok()) {
            from = Some(from.map_or(n, |f: u64| f.min(n)));
        } else if let Ok(n) = item.parse() {
            units.insert(n);
        }
    }
    (units, from)
}

fn later_map() -> BTreeMap<u64, u64> {
    sim_runtime::decision::var(LATER_VAR)
        .ok()
        .flatten()
        .map(|v| {
            v.split(',')
                .filter_map(|pair| {
                    let (unit, ns) = pair.trim().split_once(':')?;
                    Some((unit.parse().ok()?, ns.parse().ok()?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// How much later unit `unit` applies its fault (`SIM_SHRINK_LATER`).
pub(crate) fn delay_of(unit: u64) -> Duration {
    let Some(state) = state() else {
        return Duration::ZERO;
    };
    let mut later = state.later.borrow_mut();
    let ns = later.get_or_insert_with(later_map).get(&unit).copied();
    Duration::from_nanos(ns.unwrap_or(0))
}

/// Runs `f` now, or `delay` later on the event queue.
pub(crate) fn after(delay: Duration, label: &'static str, f: impl FnOnce() + 'static) {
    if delay.is_zero() {
        f();
    } else {
        sim_net::with_net(|net| net.after(delay, label, Box::new(f)));
    }
}

/// A new unit begins: its number, or `None` when it is to be skipped.
pub(crate) fn begin_unit() -> Option<u64> {
    let Some(state) = state() else {
        return Some(0);
    };
    let unit = state.next.get();
    state.next.set(unit + 1);
    let mut skip = state.skip.borrow_mut();
    let (units, from) = skip.get_or_insert_with(skip_set);
    if units.contains(&unit) || from.is_some_and(|f| unit >= f) {
        sim_runtime::context::with_current(|core| {
            core.trace(
                sim_runtime::EventKind::Note,
                core.current_task(),
                sim_runtime::Label::Str(&format!("shrink: fault unit {unit} left out")),
            )
        });
        return None;
    }
    Some(unit)
}

/// Unit `unit` applies `fault` now: a scenario line appended to the
/// `SIM_SHRINK_OUT` file at once (a failing run still lists its faults).
pub(crate) fn applied(unit: u64, fault: &crate::fault::Fault) {
    let Some(path) = sim_runtime::settings::SHRINK_OUT.value_os() else {
        return;
    };
    let now = sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(0);
    let line = format!(
        "{unit} {now} sim.at(Duration::from_nanos({now}), {});\n",
        fault.to_code()
    );
    // The runner's file: on the real disk, whatever the run's disks are.
    let _ = sim_runtime::outside::outside(|| {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
    });
}

/// Whether links are made fast.
pub(crate) fn fast_links() -> bool {
    sim_runtime::decision::var(FAST_LINKS_VAR).is_ok_and(|v| v.as_deref() == Some("1"))
}
