//! Observation: what service code publishes for the checkers to read.
//!
//! `tokio::sim::publish("leader", term)` records, for the publishing task's
//! host, that `leader` is now `term`. Checkers (`Sim::check`) and
//! liveness properties (`Sim::eventually`) read the board through
//! [`Observations`], so no test handle is threaded through a service's
//! constructors. Each publication is a `note` in the trace, and the
//! checkers run right after it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Display;
use std::rc::Rc;
use std::time::Duration;

/// What runs after each publication (the checkers subscribe).
pub(crate) type Subscriber = Rc<dyn Fn(&str)>;

/// The published facts of a run: `(host, key) -> value`.
#[derive(Default)]
pub(crate) struct Board {
    facts: RefCell<BTreeMap<(String, String), String>>,
    /// Told of each publication, with its trace note.
    subscriber: RefCell<Option<Subscriber>>,
}

/// Has `subscriber` told of every publication of the current run.
pub(crate) fn subscribe(subscriber: Subscriber) {
    if let Some(board) = board() {
        *board.subscriber.borrow_mut() = Some(subscriber);
    }
}

/// Virtual time since the run started (zero outside a run).
pub(crate) fn now() -> Duration {
    sim_runtime::context::with_current(|core| Duration::from_nanos(core.now_ns()))
        .unwrap_or_default()
}

pub(crate) fn board() -> Option<Rc<Board>> {
    sim_runtime::context::with_current(|core| core.extension(Board::default))
}

/// What checkers see: every host's published facts, and the time.
pub struct Observations<'a> {
    facts: &'a BTreeMap<(String, String), String>,
    now: Duration,
}

impl Observations<'_> {
    /// What `host` last published under `key`.
    pub fn get(&self, host: &str, key: &str) -> Option<&str> {
        self.facts
            .get(&(host.to_string(), key.to_string()))
            .map(String::as_str)
    }

    /// Every host that published `key`, with its value, in host-name order.
    pub fn all(&self, key: &str) -> Vec<(&str, &str)> {
        self.facts
            .iter()
            .filter(|((_, k), _)| k == key)
            .map(|((host, _), value)| (host.as_str(), value.as_str()))
            .collect()
    }

    /// Virtual time since the run started.
    pub fn now(&self) -> Duration {
        self.now
    }
}

/// Runs `f` with the current observations.
pub(crate) fn with_observations<R>(f: impl FnOnce(&Observations<'_>) -> R) -> Option<R> {
    let board = board()?;
    let facts = board.facts.borrow();
    Some(f(&Observations {
        facts: &facts,
        now: now(),
    }))
}

/// Publishes `value` under `key` for the running task's host, then runs the
/// checkers. Outside a simulation run it does nothing.
pub fn publish(key: &str, value: impl Display) {
    let host = sim_net::try_with_net(|net| net.host_name(net.current_host()))
        .unwrap_or_else(|| "main".to_string());
    record(&host, key, &value.to_string());
}

/// Records `value` under `key` for `host` (the harness's own facts use
/// names no host has, such as `rollout`), then runs the checkers.
pub(crate) fn record(host: &str, key: &str, value: &str) {
    let Some(board) = board() else { return };
    let (host, value) = (host.to_string(), value.to_string());
    let note = format!("publish {host} {key}={value}");
    sim_runtime::context::with_current(|core| {
        core.trace(
            sim_runtime::EventKind::Note,
            core.current_task(),
            sim_runtime::Label::Str(&note),
        );
    });
    board
        .facts
        .borrow_mut()
        .insert((host, key.to_string()), value);
    let subscriber = board.subscriber.borrow().clone();
    if let Some(subscriber) = subscriber {
        subscriber(&note);
    }
}
