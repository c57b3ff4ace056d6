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

/// How many publications of one key the history keeps: past it, the
/// oldest half goes (so at least the last half of this many are kept).
pub const HISTORY_PER_KEY_MAX: usize = 100_000;

/// One publication of a key: which host, when, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Publication {
    /// The publishing task's host.
    pub host: String,
    /// Virtual time since the run started.
    pub time: Duration,
    /// The published value, as text.
    pub value: String,
}

/// The published facts of a run: `(host, key) -> value`, and every
/// publication of each key in order.
#[derive(Default)]
pub(crate) struct Board {
    facts: RefCell<BTreeMap<(String, String), String>>,
    history: RefCell<BTreeMap<String, Vec<Publication>>>,
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

/// What checkers see: every host's published facts, each key's history,
/// and the time.
pub struct Observations<'a> {
    facts: &'a BTreeMap<(String, String), String>,
    history: &'a BTreeMap<String, Vec<Publication>>,
    now: Duration,
    /// The keys read, when a report wants to show them.
    read: Option<&'a RefCell<std::collections::BTreeSet<String>>>,
}

impl Observations<'_> {
    fn reading(&self, key: &str) {
        if let Some(read) = self.read {
            if !read.borrow().contains(key) {
                read.borrow_mut().insert(key.to_string());
            }
        }
    }

    /// Every publication of `key`, by any host, oldest first: a checker can
    /// state "a term never goes back" or "never two leaders in one term"
    /// without keeping a copy, and two equal values published one after
    /// the other are two entries. (Keeps at least the last
    /// `HISTORY_PER_KEY_MAX / 2` of each key.)
    ///
    /// ```
    /// # let mut sim = tokio::sim::Sim::new();
    /// sim.check("a host's term never goes back", |obs| {
    ///     let mut last = std::collections::BTreeMap::new();
    ///     for p in obs.history("term") {
    ///         let term: u64 = p.value.parse().unwrap_or(0);
    ///         let before = last.insert(p.host.as_str(), term).unwrap_or(0);
    ///         if term < before {
    ///             return Err(format!("{} went from term {before} to {term} at {:?}", p.host, p.time));
    ///         }
    ///     }
    ///     Ok(())
    /// });
    /// sim.client("node", async {
    ///     tokio::sim::publish("term", 1);
    ///     tokio::sim::publish("term", 2);
    /// });
    /// sim.run();
    /// ```
    pub fn history(&self, key: &str) -> &[Publication] {
        self.reading(key);
        self.history.get(key).map_or(&[], Vec::as_slice)
    }

    /// What `host` last published under `key`.
    pub fn get(&self, host: &str, key: &str) -> Option<&str> {
        self.reading(key);
        self.facts
            .get(&(host.to_string(), key.to_string()))
            .map(String::as_str)
    }

    /// Every host that published `key`, with its value, in host-name order.
    pub fn all(&self, key: &str) -> Vec<(&str, &str)> {
        self.reading(key);
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
    let history = board.history.borrow();
    Some(f(&Observations {
        facts: &facts,
        history: &history,
        now: now(),
        read: None,
    }))
}

/// Runs `f` with the current observations, and returns the keys it read.
pub(crate) fn with_observations_read<R>(
    f: impl FnOnce(&Observations<'_>) -> R,
) -> Option<(R, Vec<String>)> {
    let board = board()?;
    let facts = board.facts.borrow();
    let history = board.history.borrow();
    let read = RefCell::new(std::collections::BTreeSet::new());
    let result = f(&Observations {
        facts: &facts,
        history: &history,
        now: now(),
        read: Some(&read),
    });
    Some((result, read.into_inner().into_iter().collect()))
}

/// Publishes `value` under `key` for the running task's host, then runs the
/// checkers. Outside a simulation run it does nothing.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use tokio::sim::{publish, Sim};
///
/// let mut sim = Sim::new();
/// sim.check("at most one leader", |obs| {
///     let leaders = obs.all("leader").into_iter().filter(|(_, v)| *v == "true").count();
///     if leaders <= 1 { Ok(()) } else { Err(format!("{leaders} leaders at {:?}", obs.now())) }
/// });
/// sim.host("a", || async {
///     publish("leader", true);
///     tokio::time::sleep(Duration::from_secs(1)).await;
///     publish("leader", false);
///     std::future::pending::<()>().await;
/// });
/// sim.host("b", || async {
///     tokio::time::sleep(Duration::from_secs(2)).await;
///     publish("leader", true);
///     std::future::pending::<()>().await;
/// });
/// sim.client("client", async {
///     tokio::time::sleep(Duration::from_secs(3)).await;
/// });
/// sim.run();
/// ```
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
    {
        let mut history = board.history.borrow_mut();
        let publications = history.entry(key.to_string()).or_default();
        if publications.len() >= HISTORY_PER_KEY_MAX {
            publications.drain(..HISTORY_PER_KEY_MAX / 2);
        }
        publications.push(Publication {
            host: host.clone(),
            time: now(),
            value: value.clone(),
        });
    }
    board
        .facts
        .borrow_mut()
        .insert((host, key.to_string()), value);
    let subscriber = board.subscriber.borrow().clone();
    if let Some(subscriber) = subscriber {
        subscriber(&note);
    }
}
