//! `tokio::sim::history`: a run's history of client operations, recorded
//! as they happen, and checked at the end of the run (or as it goes) for
//! linearizability ([`Linearizable`]) or transactional anomalies
//! ([`Transactional`]), as Jepsen's checkers do.
//!
//! A client records each operation in one line: [`op`] wraps the future
//! that performs it, records its invocation, and its completion from
//! what the future returned (`Ok(v)`: it happened and returned `v`;
//! `Err(_)`: nobody knows whether it happened). An operation still open
//! when its host crashes, its future is dropped or the run ends counts as
//! unknown (`info`) by itself. Each record carries its client (the host,
//! and which of its tasks) and its virtual time; real-time order is the
//! order things happened in the run, exactly.
//!
//! - this file: recording ([`op`], [`invoke`], [`named`], [`Pending`],
//!   [`Completes`]);
//! - `checks.rs`: the checks `Sim::check_history` runs, and the reports
//!   of what they find.
//!
//! Every record is also a note in the run's trace (`history ops invoke #3
//! "client" write "x" 1`), so `cargo sim history TRACE` reads a run's
//! history back out of its trace, and the timeline draws it.
//!
//! # Examples
//!
//! A stale read: the client reads an old value after a newer write
//! completed. The check fails the run with class `consistency`.
//!
//! ```should_panic
//! use tokio::sim::history::{self, models, Linearizable, Op};
//! use tokio::sim::Sim;
//!
//! let mut sim = Sim::new();
//! sim.check_history(Linearizable::new(models::KeyValue::new()));
//! sim.client("client", async {
//!     history::op(Op::write("x", 1), async { Ok::<_, ()>(()) }).await.unwrap();
//!     history::op(Op::write("x", 2), async { Ok::<_, ()>(()) }).await.unwrap();
//!     // A replica that is behind answers the read.
//!     history::op(Op::read("x"), async { Ok::<_, ()>(1) }).await.unwrap();
//! });
//! sim.run();
//! ```

mod checks;

pub(crate) use checks::{check_at_end, install};
pub use checks::{Finding, HistoryCheck, Linearizable, Transactional};
pub use sim_history::elle::{Isolation, Workload};
pub use sim_history::linear::{models, Budget, Model};
pub use sim_history::{
    elle, linear, table, Event, History, Kind, Mop, MopKind, Op, Operation, Outcome, Value,
};

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::rc::Rc;

/// The history [`op`] and [`invoke`] record into, and checks read unless
/// told another.
pub const DEFAULT: &str = "ops";

/// The run's histories, and who their clients are.
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) histories: RefCell<BTreeMap<String, History>>,
    /// Each recording task's client name: `(host, task) -> name`.
    clients: RefCell<BTreeMap<(u32, u64), String>>,
    /// How many recording tasks each host has had.
    tasks_of_host: RefCell<BTreeMap<u32, u32>>,
    /// Told of each completion (the checks that run as they go).
    pub(crate) on_complete: RefCell<Option<OnComplete>>,
}

/// What is told of a completion: the history's name.
pub(crate) type OnComplete = Rc<dyn Fn(&str)>;

pub(crate) fn recorder() -> Option<Rc<Recorder>> {
    sim_runtime::context::with_current(|core| core.extension(Recorder::default))
}

impl Recorder {
    /// The recording task's client: its host's name, and `#2`, `#3`... for
    /// the second, third task of the host that records.
    fn client(&self) -> String {
        let host = sim_net::try_with_net(|net| net.current_host()).map_or(0, |h| h.0);
        let task = sim_runtime::context::with_current(|core| core.current_task()).unwrap_or(0);
        if let Some(name) = self.clients.borrow().get(&(host, task)) {
            return name.clone();
        }
        let host_name = sim_net::try_with_net(|net| net.host_name(sim_net::HostId(host)))
            .unwrap_or_else(|| "main".to_string());
        let mut counts = self.tasks_of_host.borrow_mut();
        let count = counts.entry(host).or_default();
        *count += 1;
        let name = if *count == 1 {
            host_name
        } else {
            format!("{host_name}#{count}")
        };
        self.clients.borrow_mut().insert((host, task), name.clone());
        name
    }

    fn record(&self, name: &str, event: impl FnOnce(&mut History, u64) -> u64) -> u64 {
        let now = sim_runtime::context::with_current(|core| core.now_ns()).unwrap_or(0);
        let (id, note) = {
            let mut histories = self.histories.borrow_mut();
            let history = histories.entry(name.to_string()).or_default();
            let id = event(history, now);
            let last = history.events().last().expect("an event was recorded");
            (id, sim_history::note::note(name, last))
        };
        note_in_trace(&note);
        id
    }
}

/// Writes `text` as a note of the run's trace.
pub(crate) fn note_in_trace(text: &str) {
    sim_runtime::context::with_current(|core| {
        core.trace(
            sim_runtime::EventKind::Note,
            core.current_task(),
            sim_runtime::Label::Str(text),
        );
    });
}

/// A history by name: `named("bank").op(...)` records into the history
/// `bank`, which `Linearizable::history("bank")` checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Named {
    name: &'static str,
}

/// The history named `name` (for a run that records several).
pub const fn named(name: &'static str) -> Named {
    Named { name }
}

impl Named {
    /// The history's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Records `op`'s invocation now; the returned [`Pending`] records its
    /// completion (or, dropped first, that nobody knows).
    pub fn invoke(&self, op: Op) -> Pending {
        let Some(recorder) = recorder() else {
            return Pending {
                name: self.name,
                id: None,
            };
        };
        let client = recorder.client();
        let id = recorder.record(self.name, |history, now| history.invoke(&client, now, op));
        Pending {
            name: self.name,
            id: Some(id),
        }
    }

    /// Performs `op` by awaiting `future`: records the invocation, then the
    /// completion from its output ([`Completes`]), and returns the output.
    pub async fn op<F>(&self, op: Op, future: F) -> F::Output
    where
        F: Future,
        F::Output: Completes,
    {
        let pending = self.invoke(op);
        let output = future.await;
        let completion = output.completion();
        pending.complete(completion.0, completion.1);
        output
    }
}

/// Performs `op` by awaiting `future`, recorded in the default history
/// (see [`Named::op`]).
///
/// ```
/// use tokio::sim::history::{self, Op};
///
/// # let mut sim = tokio::sim::Sim::new();
/// # sim.client("client", async {
/// let mut store = std::collections::HashMap::new();
/// history::op(Op::write("x", 1), async { store.insert("x", 1); Ok::<_, ()>(()) }).await.unwrap();
/// let got = history::op(Op::read("x"), async { Ok::<_, ()>(store.get("x").copied()) }).await;
/// assert_eq!(got, Ok(Some(1)));
/// # });
/// # sim.run();
/// ```
pub async fn op<F>(op: Op, future: F) -> F::Output
where
    F: Future,
    F::Output: Completes,
{
    named(DEFAULT).op(op, future).await
}

/// Records `op`'s invocation in the default history (see
/// [`Named::invoke`]).
pub fn invoke(op: Op) -> Pending {
    named(DEFAULT).invoke(op)
}

/// The history named `name` as recorded so far in this run (empty
/// outside a run).
pub fn snapshot(name: &str) -> History {
    recorder()
        .and_then(|r| r.histories.borrow().get(name).cloned())
        .unwrap_or_default()
}

/// An invoked operation: complete it with [`Pending::ok`],
/// [`Pending::fail`] or [`Pending::info`]. Dropped without one (a crash,
/// a cancelled future), it is recorded as unknown.
#[derive(Debug)]
#[must_use = "an operation dropped at once is recorded as unknown"]
pub struct Pending {
    name: &'static str,
    /// `None` outside a run, or once completed.
    id: Option<u64>,
}

impl Pending {
    /// It happened and returned `output`.
    pub fn ok(self, output: impl Into<Value>) {
        self.complete(Kind::Ok, output.into());
    }

    /// It surely did not happen.
    pub fn fail(self) {
        self.complete(Kind::Fail, Value::Nil);
    }

    /// Nobody knows whether it happened (a timeout, a lost connection).
    pub fn info(self) {
        self.complete(Kind::Info, Value::Nil);
    }

    /// Completes it as `kind` with `output`.
    pub fn complete(mut self, kind: Kind, output: Value) {
        self.finish(kind, output);
    }

    fn finish(&mut self, kind: Kind, output: Value) {
        let Some(id) = self.id.take() else { return };
        let Some(recorder) = recorder() else { return };
        recorder.record(self.name, |history, now| {
            history.complete(id, kind, now, output);
            id
        });
        let hook = recorder.on_complete.borrow().clone();
        if let Some(hook) = hook {
            hook(self.name);
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.id.is_some() && !std::thread::panicking() {
            self.finish(Kind::Info, Value::Nil);
        }
    }
}

/// What a future's output says of the operation it performed: how it
/// completed and what it returned.
///
/// `Ok(v)` happened and returned `v`; `Err(_)` is unknown (a timeout or a
/// lost connection may have happened or not: a client that knows an error
/// means "surely not" returns [`Completion::Fail`] instead). A plain value
/// happened and returned itself.
pub trait Completes {
    /// The completion's kind and result.
    fn completion(&self) -> (Kind, Value);
}

/// An explicit completion, for a future whose output cannot say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Completion {
    /// It happened and returned this.
    Ok(Value),
    /// It surely did not happen.
    Fail,
    /// Nobody knows.
    Info,
}

impl Completes for Completion {
    fn completion(&self) -> (Kind, Value) {
        match self {
            Completion::Ok(v) => (Kind::Ok, v.clone()),
            Completion::Fail => (Kind::Fail, Value::Nil),
            Completion::Info => (Kind::Info, Value::Nil),
        }
    }
}

impl<T: Clone + Into<Value>, E> Completes for Result<T, E> {
    fn completion(&self) -> (Kind, Value) {
        match self {
            Ok(v) => (Kind::Ok, v.clone().into()),
            Err(_) => (Kind::Info, Value::Nil),
        }
    }
}

macro_rules! completes_as_itself {
    ($($t:ty),*) => {$(
        impl Completes for $t {
            fn completion(&self) -> (Kind, Value) {
                (Kind::Ok, self.clone().into())
            }
        }
    )*};
}
completes_as_itself!(
    (),
    bool,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
    usize,
    String,
    Value
);

impl<T: Clone + Into<Value>> Completes for Option<T> {
    fn completion(&self) -> (Kind, Value) {
        (Kind::Ok, self.clone().into())
    }
}

impl<T: Clone + Into<Value>> Completes for Vec<T> {
    fn completion(&self) -> (Kind, Value) {
        (Kind::Ok, self.clone().into())
    }
}
