//! The simulation core: one thread, one ready set, one event queue, one
//! virtual clock and one trace.
//!
//! The loop in [`Core::block_on`] is the whole scheduler:
//! 1. Events already due at the current instant fire, in the order they
//!    were scheduled (they do not wait for the tasks to go idle).
//! 2. If some task is ready, the policy picks one (by default uniformly,
//!    from the seeded generator) and it is polled. A wake only queues a task;
//!    nothing is polled inline.
//! 3. Otherwise the clock jumps to the earliest pending event and every event
//!    due then fires, in the order it was scheduled.
//! 4. Otherwise nothing can ever happen again: a deadlock, reported with
//!    every pending task.
//!
//! Every step is recorded in the trace.

use crate::config::SimConfig;
use crate::context::{self, Enter};
use crate::events::{Action, EventKey, EventQueue};
use crate::rng::Rng;
use crate::task::{
    Cell, Output, TaskCell, TaskMeta, TaskSlot, ABORT, DETACHED, DONE, OUTPUT_TAKEN, QUEUED,
    RUNNING,
};
use crate::trace::{EventKind, Label, Trace};
use crate::waker::{self, ROOT_SLOT, SLOT_MASK};
use std::cell::{Cell as StdCell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// How many polls of resources a task may make before it is made to yield
/// (tokio's cooperative budget has the same size).
pub const TASK_BUDGET: u32 = 128;

/// The flavor the runtime was built as. Both run on one thread; the flavor
/// decides only what tokio's API allows (`block_in_place`, `pause`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Built by `Builder::new_current_thread`.
    CurrentThread,
    /// Built by `Builder::new_multi_thread`.
    MultiThread,
}

/// Everything the runtime needs besides the seed.
#[derive(Clone, Copy, Debug)]
pub struct RuntimeOptions {
    /// The flavor tokio's builder asked for.
    pub flavor: Flavor,
    /// Whether `time::pause` is in force from the start.
    pub start_paused: bool,
    /// Built as a `LocalRuntime`: `spawn_local` needs no `LocalSet`.
    pub local: bool,
    /// Timers work (`Builder::enable_time`); otherwise using one panics, as
    /// in tokio.
    pub enable_time: bool,
    /// Sockets work (`Builder::enable_io`); otherwise using one panics.
    pub enable_io: bool,
}

/// One runtime of a simulation (see [`Core::add_scope`]).
#[derive(Clone, Copy, Debug)]
struct Scope {
    options: RuntimeOptions,
    shut_down: bool,
    /// How many `block_on`s of this runtime are on the stack.
    driving: u32,
}

/// A handle on a spawned task: plain data, valid on the thread of its
/// runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawTask {
    /// The runtime.
    pub core: u16,
    /// The slab slot.
    pub slot: u32,
    /// The slot's generation when the task was spawned.
    pub generation: u32,
    /// The task's id (counts up from 1 per runtime).
    pub id: u64,
}

/// The policy that picks the next task among the ready ones. Other policies
/// (PCT, for one) plug in here.
pub trait SchedulePolicy {
    /// Returns an index into `ready` (the ids of the ready tasks, in queue
    /// order; `0` is the root future).
    fn choose(&mut self, ready: &[u32], rng: &mut Rng) -> usize;

    /// A task was spawned into `slot` (which an ended task may have held).
    fn spawned(&mut self, _slot: u32) {}
}

/// PCT (see [`crate::config::Policy::Pct`]): priorities by slot, drawn on
/// first sight from the run's `pct` stream, and `depth - 1` change points.
pub struct Pct {
    /// Priority by slot (0: not drawn yet). First draws are at least
    /// `depth`; demoted tasks get `1..depth`.
    priorities: Vec<u64>,
    root_priority: u64,
    /// The decisions at which the running task is demoted, ascending.
    change_points: Vec<u64>,
    decisions: u64,
    depth: u32,
    rng: Rng,
}

impl Pct {
    /// PCT of `depth` over `horizon` decisions, drawn from `seed`'s `pct`
    /// stream.
    pub fn new(seed: u64, depth: u32, horizon: u64) -> Pct {
        let mut rng = Rng::named(seed, "pct");
        let mut change_points: Vec<u64> =
            (1..depth).map(|_| 1 + rng.below(horizon.max(1))).collect();
        change_points.sort_unstable();
        Pct {
            priorities: Vec::new(),
            root_priority: 0,
            change_points,
            decisions: 0,
            depth: depth.max(1),
            rng,
        }
    }

    fn draw(&mut self) -> u64 {
        // Far above the demoted range; ties (1 in 2^63) break by position.
        (self.rng.next_u64() >> 1) + u64::from(self.depth)
    }

    fn priority(&mut self, slot: u32) -> u64 {
        if slot == ROOT_SLOT {
            if self.root_priority == 0 {
                self.root_priority = self.draw();
            }
            return self.root_priority;
        }
        let index = slot as usize;
        if index >= self.priorities.len() {
            self.priorities.resize(index + 1, 0);
        }
        if self.priorities[index] == 0 {
            self.priorities[index] = self.draw();
        }
        self.priorities[index]
    }
}

impl SchedulePolicy for Pct {
    fn choose(&mut self, ready: &[u32], _rng: &mut Rng) -> usize {
        self.decisions += 1;
        let mut best = 0;
        let mut best_priority = 0;
        for (index, &slot) in ready.iter().enumerate() {
            let p = self.priority(slot);
            if p > best_priority {
                best = index;
                best_priority = p;
            }
        }
        // A change point: the chosen task drops below every first draw (the
        // i-th change point gives priority depth - i).
        if let Some(i) = self.change_points.iter().position(|&c| c == self.decisions) {
            let low = u64::from(self.depth) - 1 - i as u64;
            let slot = ready[best];
            if slot == ROOT_SLOT {
                self.root_priority = low.max(1);
            } else {
                self.priorities[slot as usize] = low.max(1);
            }
        }
        best
    }

    fn spawned(&mut self, slot: u32) {
        // A new task in a reused slot draws its own priority.
        if let Some(p) = self.priorities.get_mut(slot as usize) {
            *p = 0;
        }
    }
}

/// The default policy: every ready task is equally likely.
#[derive(Default)]
pub struct UniformRandom;

impl SchedulePolicy for UniformRandom {
    #[inline]
    fn choose(&mut self, ready: &[u32], rng: &mut Rng) -> usize {
        rng.below(ready.len() as u64) as usize
    }
}

struct LocalQueue {
    ready: Vec<u32>,
    waker: Option<Waker>,
    live: usize,
}

struct State {
    tasks: Vec<TaskSlot>,
    /// Each slot's name and kind, apart from the slots: only spawns, frees
    /// and reports read them, so a poll touches one 64-byte slot (which
    /// keeps the spawn site, for the hang watchdog's poll record).
    metas: Vec<Option<TaskMeta>>,
    free: Vec<u32>,
    live_tasks: usize,
    /// Ready slots of tasks run by the scheduler; `ROOT_SLOT` is the root.
    ready: Vec<u32>,
    root_queued: bool,
    sched_rng: Rng,
    /// Picks among two or more ready tasks so far.
    decisions: u64,
    user_rng: Rng,
    policy: Box<dyn SchedulePolicy>,
    events: EventQueue,
    next_task_id: u64,
    locals: Vec<Option<LocalQueue>>,
    steps: u64,
    /// What each pending task (by slot) waits on, and how many more waits
    /// its last poll noted.
    waits: Vec<Option<(WaitNote, u32)>>,
    /// Polls since the clock last moved (the livelock limit).
    steps_at_instant: u64,
}

/// What a pending task waits on, as the primitive it waits in notes it
/// (`Core::note_wait`): kept per task for the deadlock, time-limit,
/// step-limit and hang reports. Plain data: noting costs a few stores.
#[derive(Clone, Copy, Debug)]
pub struct WaitNote {
    /// The primitive and the call (`oneshot::Receiver`, `sleep`,
    /// `mpsc::Receiver::recv`, `TcpStream read`).
    pub what: &'static str,
    /// What it is about.
    pub detail: WaitDetail,
    /// Where the primitive was made or the call was written (a channel's
    /// `channel()`, a `sleep(...)`, a `notified()`), when known.
    pub site: Option<&'static std::panic::Location<'static>>,
}

/// The detail of a [`WaitNote`].
#[derive(Clone, Copy, Debug)]
pub enum WaitDetail {
    /// Nothing more.
    None,
    /// A deadline, in ns of true virtual time.
    UntilNs(u64),
    /// Another task, by id (a `JoinHandle`).
    Task(u64),
    /// A connection or socket: its local and peer addresses (the peer is
    /// the local one for a listener or an unconnected socket).
    Conn {
        /// The local address.
        local: std::net::SocketAddr,
        /// The peer's.
        peer: std::net::SocketAddr,
    },
}

impl WaitNote {
    fn describe(&self, more: u32) -> String {
        let detail = match self.detail {
            WaitDetail::None => String::new(),
            WaitDetail::UntilNs(ns) => {
                format!(" until {}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
            }
            WaitDetail::Task(id) => format!(" of task {id}"),
            WaitDetail::Conn { local, peer } if local == peer => format!(" on {local}"),
            WaitDetail::Conn { local, peer } => format!(" on {local}>{peer}"),
        };
        let site = self.site.map_or(String::new(), |l| {
            format!(" ({}:{}:{})", l.file(), l.line(), l.column())
        });
        let more = match more {
            0 => String::new(),
            1 => " (and 1 other wait, as in a select!)".to_string(),
            n => format!(" (and {n} other waits, as in a select!)"),
        };
        format!("on {}{detail}{site}{more}", self.what)
    }
}

/// A runtime's hooks (tokio's `Builder::on_thread_park` and the rest), run
/// where the one simulated thread does those things.
#[derive(Clone, Default)]
pub struct RuntimeHooks {
    /// Before the thread parks: nothing is ready and the clock must move.
    pub on_park: Option<Rc<dyn Fn()>>,
    /// After it unparks: the clock moved, or a park hook made work.
    pub on_unpark: Option<Rc<dyn Fn()>>,
    /// When the runtime shuts down (the thread stops).
    pub on_stop: Option<Rc<dyn Fn()>>,
}

/// The most polls a yielding task waits behind the others (see
/// [`Core::yield_task`]): tasks that keep waking each other at one instant
/// must not starve it.
pub const BEHIND_POLLS_MAX: u64 = 10_000;

/// A summary of a finished run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSummary {
    /// The seed.
    pub seed: u64,
    /// How many trace events were recorded.
    pub events: u64,
    /// The virtual time at the end, in ns.
    pub end_ns: u64,
    /// The SHA-256 of the trace, in hex.
    pub trace_hash: String,
    /// Scheduling decisions: picks among two or more ready tasks (what a
    /// PCT horizon counts).
    pub decisions: u64,
}

thread_local! {
    static LAST_SUMMARY: RefCell<Option<RunSummary>> = const { RefCell::new(None) };
    /// The last events of the last run that ended on this thread.
    static LAST_RECENT: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static RUNS_ON_THREAD: StdCell<u64> = const { StdCell::new(0) };
}

/// The last events (at most 16) of the last run that ended on this thread.
pub fn last_run_recent_events() -> Vec<String> {
    LAST_RECENT.with(|r| r.borrow().clone())
}

/// The summary of the last run that finished on this thread.
pub fn last_run() -> Option<RunSummary> {
    LAST_SUMMARY.with(|s| s.borrow().clone())
}

/// How a node's clocks differ from true (virtual) time. Timers, sleeps and
/// the trace stay on true time; only what the node's tasks read is shifted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeClock {
    /// The node's monotonic clock (`Instant`) reads this far ahead.
    pub monotonic_offset_ns: u64,
    /// The node's wall clock (`SystemTime`) reads this far off (a jump
    /// changes it, either way).
    pub wall_offset_ns: i64,
    /// The node's clocks run this many parts per million fast (or slow,
    /// below zero) from `drift_since_ns` on: a crystal's error.
    pub drift_ppm: i64,
    /// The true time from which `drift_ppm` counts.
    pub drift_since_ns: u64,
}

/// The largest clock drift a node may have, in ppm (10%: far past any real
/// crystal, and far from a clock that stops, which would break `Instant`).
pub const DRIFT_PPM_MAX: i64 = 100_000;

impl NodeClock {
    /// How far the drift has moved the node's clocks by true time `true_ns`.
    pub fn drift_ns(&self, true_ns: u64) -> i64 {
        let elapsed = true_ns.saturating_sub(self.drift_since_ns) as i128;
        (elapsed * self.drift_ppm as i128 / 1_000_000) as i64
    }

    /// What the node's monotonic clock reads at true time `true_ns`.
    pub fn local_ns(&self, true_ns: u64) -> u64 {
        let local =
            true_ns as i128 + self.monotonic_offset_ns as i128 + self.drift_ns(true_ns) as i128;
        local.clamp(0, u64::MAX as i128) as u64
    }

    /// The first true time at which the node's monotonic clock reads
    /// `local_ns` or more (the inverse of [`NodeClock::local_ns`]).
    pub fn true_ns_of(&self, local_ns: u64) -> u64 {
        let undrifted = local_ns.saturating_sub(self.monotonic_offset_ns);
        if self.drift_ppm == 0 || undrifted <= self.drift_since_ns {
            return undrifted;
        }
        debug_assert!(self.drift_ppm.abs() <= DRIFT_PPM_MAX);
        let span = (undrifted - self.drift_since_ns) as i128;
        let rate = 1_000_000 + self.drift_ppm as i128;
        let guess = self.drift_since_ns as i128 + (span * 1_000_000 + rate - 1) / rate;
        let mut t = guess.clamp(0, u64::MAX as i128) as u64;
        // Rounding in drift_ns may leave the guess a nanosecond short; the
        // local clock rises at least 0.9 ns per ns, so two steps are enough.
        for _ in 0..4 {
            if self.local_ns(t) >= local_ns {
                break;
            }
            t += 1;
        }
        t
    }
}

/// What runs after each scheduled callback, with its label (see
/// [`Core::set_after_call`]).
pub type AfterCall = Rc<dyn Fn(&'static str)>;

/// What a task waits on, for reports (see [`Core::set_wait_describer`]).
pub type WaitDescriber = Rc<dyn Fn(u64) -> Option<String>>;

/// What runs when a node crashes (see [`Core::on_node_crash`]).
pub type CrashListener = Rc<dyn Fn(u32)>;

/// One simulation.
pub struct Core {
    id: u16,
    config: SimConfig,
    options: StdCell<RuntimeOptions>,
    now_ns: StdCell<u64>,
    paused: StdCell<bool>,
    current_task: StdCell<u64>,
    current_local: StdCell<u32>,
    budget: StdCell<u32>,
    unconstrained: StdCell<bool>,
    in_block_on: StdCell<bool>,
    shut_down: StdCell<bool>,
    /// How many times the scheduler found nothing ready and moved the
    /// clock (what tokio counts as parks of its one worker).
    parks: StdCell<u64>,
    /// The node (simulated host) of the task being polled.
    current_node: StdCell<u32>,
    /// The runtime scope of the running code (see [`Core::add_scope`]);
    /// `options` holds its options.
    current_scope: StdCell<u16>,
    /// Every runtime sharing this simulation, by scope: 0 is the one that
    /// made it. More than one only when a test builds a second runtime
    /// while the first is alive.
    scopes: RefCell<Vec<Scope>>,
    /// Whether more than one scope exists (the scheduler then checks which
    /// ready tasks may run).
    multi_scope: StdCell<bool>,
    /// State of subsystems above the runtime (the network), one value per
    /// type, created on first use.
    extensions: RefCell<Vec<Rc<dyn std::any::Any>>>,
    /// What else a crash of a node takes down (its disk's unsynced state),
    /// in registration order.
    crash_listeners: RefCell<Vec<CrashListener>>,
    wait_describer: RefCell<Option<WaitDescriber>>,
    /// Per slot: the generation and how many clones of its waker live.
    waker_counts: RefCell<Vec<(u32, u32)>>,
    /// Calls to make after the current poll (see [`Core::defer`]).
    deferred: RefCell<Vec<Box<dyn FnOnce()>>>,
    base_instant: std::time::Instant,
    /// The named streams of the seed tree (`rng::child_seed`), made on
    /// first use: harness decisions and tests draw from these, so a new
    /// stream shifts no other.
    streams: RefCell<BTreeMap<Box<str>, Rng>>,
    /// Called after every scheduled callback (see [`Core::set_after_call`]).
    after_call: RefCell<Option<AfterCall>>,
    /// Per-node clock offsets (see [`NodeClock`]); `any_clock` is false while
    /// every node reads true time, so clock reads stay one add.
    clocks: RefCell<BTreeMap<u32, NodeClock>>,
    any_clock: StdCell<bool>,
    /// Set by [`Core::fail_run`]: the loop stops at its next turn.
    failed: StdCell<bool>,
    /// The decision log, when the run records or replays one.
    decisions: RefCell<Option<crate::decision::Decisions>>,
    deciding: StdCell<bool>,
    replaying: StdCell<bool>,
    /// The `tracing` dispatcher that writes logs into the trace file.
    logs: RefCell<Option<crate::logs::Installed>>,
    /// The runtime's hooks.
    hooks: RefCell<RuntimeHooks>,
    /// Tasks that yielded (`yield_now`): they run again once every task
    /// that was ready has run (see `Core::yield_task`).
    behind: RefCell<Vec<Waker>>,
    /// Polls since the first of `behind` yielded.
    behind_polls: StdCell<u64>,
    /// The first wait the running poll noted, and how many more.
    poll_note: StdCell<Option<WaitNote>>,
    poll_note_more: StdCell<u32>,
    failure: RefCell<Option<(crate::sweep::FailureClass, String)>>,
    state: RefCell<State>,
    trace: RefCell<Trace>,
    run_name: String,
}

impl Core {
    /// Builds a simulation, registers it with this thread and announces its
    /// seed and replay command on stderr.
    pub fn new(config: SimConfig, options: RuntimeOptions) -> Rc<Core> {
        let thread = std::thread::current();
        let thread_name = thread.name().filter(|name| *name != "main");
        let run_index = RUNS_ON_THREAD.with(|r| {
            r.set(r.get() + 1);
            r.get()
        });
        let trace_path = crate::sweep::trace_override(config.seed, run_index).or_else(|| {
            std::env::var(crate::config::TRACE_VAR)
                .ok()
                .filter(|p| !p.is_empty())
                .map(|base| crate::trace::trace_path(&base, thread_name, run_index))
        });
        let run_name = thread_name.unwrap_or("main").to_string();
        crate::interpose::keep_linked();
        crate::sweep::run_started(config.seed);
        // A program's run says its seed first; a test's stays quiet unless it
        // fails (the panic hook prints the seed then) or SIM_VERBOSE is set.
        if thread_name.is_none() || crate::sweep::verbose() {
            crate::seed::announce(config.seed, thread_name);
        }
        let seed = config.seed;
        let decisions = crate::decision::Decisions::new(
            seed,
            run_index,
            crate::decision::record_path(thread_name, run_index),
        )
        .map(|mut d| {
            for (name, value) in config.settings() {
                d.set(name, value);
            }
            d
        });
        let core = Rc::new(Core {
            id: context::next_core_id(),
            paused: StdCell::new(options.start_paused),
            options: StdCell::new(options),
            now_ns: StdCell::new(0),
            current_task: StdCell::new(0),
            current_local: StdCell::new(0),
            budget: StdCell::new(TASK_BUDGET),
            unconstrained: StdCell::new(false),
            in_block_on: StdCell::new(false),
            shut_down: StdCell::new(false),
            parks: StdCell::new(0),
            current_node: StdCell::new(0),
            current_scope: StdCell::new(0),
            scopes: RefCell::new(vec![Scope {
                options,
                shut_down: false,
                driving: 0,
            }]),
            multi_scope: StdCell::new(false),
            extensions: RefCell::new(Vec::new()),
            crash_listeners: RefCell::new(Vec::new()),
            wait_describer: RefCell::new(None),
            waker_counts: RefCell::new(Vec::new()),
            deferred: RefCell::new(Vec::new()),
            base_instant: std::time::Instant::now(),
            streams: RefCell::new(BTreeMap::new()),
            after_call: RefCell::new(None),
            clocks: RefCell::new(BTreeMap::new()),
            any_clock: StdCell::new(false),
            failed: StdCell::new(false),
            deciding: StdCell::new(decisions.is_some()),
            replaying: StdCell::new(decisions.as_ref().is_some_and(|d| d.replaying())),
            decisions: RefCell::new(decisions),
            logs: RefCell::new(None),
            hooks: RefCell::new(RuntimeHooks::default()),
            behind: RefCell::new(Vec::new()),
            behind_polls: StdCell::new(0),
            poll_note: StdCell::new(None),
            poll_note_more: StdCell::new(0),
            failure: RefCell::new(None),
            state: RefCell::new(State {
                tasks: Vec::new(),
                metas: Vec::new(),
                free: Vec::new(),
                live_tasks: 0,
                ready: Vec::new(),
                root_queued: false,
                sched_rng: Rng::new(seed, 1),
                user_rng: Rng::new(seed, 2),
                policy: match config.policy {
                    crate::config::Policy::Random => Box::new(UniformRandom),
                    crate::config::Policy::Pct { depth, horizon } => {
                        Box::new(Pct::new(seed, depth, horizon))
                    }
                },
                events: EventQueue::default(),
                next_task_id: 1,
                locals: Vec::new(),
                steps: 0,
                waits: Vec::new(),
                decisions: 0,
                steps_at_instant: 0,
            }),
            trace: RefCell::new(Trace::new(trace_path)),
            config,
            run_name,
        });
        // The std clock of a simulation build reads the virtual clock while
        // a runtime is current: take the base `Instant` that way, so that
        // tokio's `Instant` and std's agree and neither holds wall time.
        let core = {
            let _enter = Enter::new(core.clone());
            let base = std::time::Instant::now();
            // Safety of the write: no other reference to the core exists
            // yet besides the guard's clone, and nothing reads `base_instant`
            // before this point.
            let mut core = core;
            drop(_enter);
            Rc::get_mut(&mut core)
                .expect("the new core is not shared yet")
                .base_instant = base;
            core
        };
        core.trace(EventKind::Start, 0, Label::Num(seed));
        if core.trace.borrow().path().is_some() {
            if let Some(level) = crate::logs::level_from_env() {
                *core.logs.borrow_mut() = Some(crate::logs::install(level));
            }
        }
        context::register(core.clone());
        core
    }

    /// This runtime's id.
    #[inline]
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The run's configuration.
    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The flavor tokio's builder asked for (the current scope's runtime).
    pub fn flavor(&self) -> Flavor {
        self.options.get().flavor
    }

    // ----- runtime scopes ----------------------------------------------------

    /// Adds a runtime to this simulation, as a scope: a runtime built while
    /// this one is alive on the thread shares its clock, its one event
    /// queue, its trace, network and disks. Its own are its options
    /// (flavor, drivers), its tasks, its shutdown, and when its tasks run:
    /// a `current_thread` runtime's only while it is blocked on, as tokio.
    pub fn add_scope(&self, options: RuntimeOptions) -> u16 {
        let mut scopes = self.scopes.borrow_mut();
        assert!(
            scopes.len() < usize::from(u16::MAX),
            "sim: more than {} runtimes in one simulation",
            u16::MAX
        );
        scopes.push(Scope {
            options,
            shut_down: false,
            driving: 0,
        });
        self.multi_scope.set(true);
        (scopes.len() - 1) as u16
    }

    /// The runtime scope of the running code.
    #[inline]
    pub fn current_scope(&self) -> u16 {
        self.current_scope.get()
    }

    /// Makes `scope` current (its options answer `flavor`, `time_enabled`,
    /// ...); returns the previous one.
    pub fn set_scope(&self, scope: u16) -> u16 {
        let previous = self.current_scope.replace(scope);
        if previous != scope {
            let options = self.scopes.borrow()[usize::from(scope)].options;
            self.options.set(options);
        }
        previous
    }

    /// Runs `f` in `scope`.
    pub fn with_scope<R>(&self, scope: u16, f: impl FnOnce() -> R) -> R {
        let previous = self.set_scope(scope);
        let result = f();
        self.set_scope(previous);
        result
    }

    /// Whether the scope's runtime was shut down (the simulation's own
    /// shutdown shuts every scope).
    pub fn scope_shut_down(&self, scope: u16) -> bool {
        self.shut_down.get()
            || self
                .scopes
                .borrow()
                .get(usize::from(scope))
                .is_none_or(|s| s.shut_down)
    }

    /// How many of the simulation's runtimes are alive.
    pub fn live_scopes(&self) -> usize {
        self.scopes.borrow().iter().filter(|s| !s.shut_down).count()
    }

    /// How many tasks of `scope` are alive.
    pub fn scope_live_tasks(&self, scope: u16) -> usize {
        if !self.multi_scope.get() {
            return self.live_tasks();
        }
        let st = self.state.borrow();
        st.tasks
            .iter()
            .filter(|t| t.id != 0 && t.flags & DONE == 0 && t.scope == scope)
            .count()
    }

    /// Shuts one runtime of the simulation down: its tasks are cancelled at
    /// once; the others' run on. (The last one's drop shuts the simulation
    /// down: `Core::close`.)
    pub fn shutdown_scope(self: &Rc<Self>, scope: u16) {
        {
            let mut scopes = self.scopes.borrow_mut();
            let Some(entry) = scopes.get_mut(usize::from(scope)) else {
                return;
            };
            if entry.shut_down {
                return;
            }
            entry.shut_down = true;
        }
        let _enter = Enter::new(self.clone());
        // A spawn onto a shut-down runtime is cancelled at once.
        self.cancel_live_tasks(|t| t.scope == scope);
    }

    /// Cancels every live task `which` selects, in slot order. A cancelled
    /// future's drop may spawn or wake, so it scans again until none is
    /// left (bounded: spawns after a shutdown are refused or cancelled).
    fn cancel_live_tasks(&self, which: impl Fn(&TaskSlot) -> bool) {
        for _round in 0..1024 {
            let victims: Vec<RawTask> = {
                let st = self.state.borrow();
                st.tasks
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.id != 0 && t.flags & DONE == 0 && which(t))
                    .map(|(slot, t)| RawTask {
                        core: self.id,
                        slot: slot as u32,
                        generation: t.generation,
                        id: t.id,
                    })
                    .collect()
            };
            if victims.is_empty() {
                break;
            }
            for raw in victims {
                self.cancel_now(raw);
            }
        }
    }

    /// Blocks on `future` as the runtime `scope`: the root future runs in
    /// that scope, and that runtime's `current_thread` tasks may run.
    pub fn block_on_in<F: Future>(self: &Rc<Self>, scope: u16, future: F) -> F::Output {
        let previous = self.set_scope(scope);
        let _restore = RestoreScope(self, previous);
        self.block_on(future)
    }

    /// The ready tasks that may run now, when runtimes share the
    /// simulation: a `current_thread` runtime's only while it is blocked on.
    fn runnable(&self, ready: &[u32], tasks: &[TaskSlot]) -> Option<Vec<u32>> {
        if !self.multi_scope.get() {
            return None;
        }
        let scopes = self.scopes.borrow();
        let runs = |slot: u32| {
            if slot == ROOT_SLOT {
                return true;
            }
            let s = &scopes[usize::from(tasks[slot as usize].scope)];
            s.options.flavor == Flavor::MultiThread || s.driving > 0
        };
        if ready.iter().all(|&slot| runs(slot)) {
            return None;
        }
        Some(ready.iter().copied().filter(|&slot| runs(slot)).collect())
    }

    /// The per-simulation value of type `T`, made by `init` on first use.
    pub fn extension<T: 'static>(&self, init: impl FnOnce() -> T) -> Rc<T> {
        // Hot (every socket call finds the network here): the type is
        // compared first, so only the match is cloned.
        if let Some(found) = self
            .extensions
            .borrow()
            .iter()
            .find(|e| (***e).is::<T>())
            .and_then(|e| e.clone().downcast::<T>().ok())
        {
            return found;
        }
        let value = Rc::new(init());
        self.extensions.borrow_mut().push(value.clone());
        value
    }

    /// The node (simulated host) of the running task; 0 outside tasks.
    #[inline]
    pub fn current_node(&self) -> u32 {
        self.current_node.get()
    }

    /// Makes `node` the running code's host; returns the previous one (a
    /// simulated thread's turn puts it back).
    #[cfg_attr(not(simulation), allow(dead_code))]
    pub(crate) fn set_node(&self, node: u32) -> u32 {
        self.current_node.replace(node)
    }

    /// Runs `f` as if on `node` (for code that acts for a host outside its
    /// tasks, such as a restart).
    pub fn with_node<R>(&self, node: u32, f: impl FnOnce() -> R) -> R {
        let previous = self.current_node.replace(node);
        let result = f();
        self.current_node.set(previous);
        result
    }

    /// Cancels every task of `node` at once, in slot order: what a crash of
    /// that host does.
    pub fn cancel_node(&self, node: u32) {
        let victims: Vec<RawTask> = {
            let st = self.state.borrow();
            st.tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| t.id != 0 && t.node == node && t.flags & DONE == 0)
                .map(|(slot, t)| RawTask {
                    core: self.id,
                    slot: slot as u32,
                    generation: t.generation,
                    id: t.id,
                })
                .collect()
        };
        for raw in victims {
            self.cancel_now(raw);
        }
    }

    /// Registers `listener` to run on every [`Core::crash_node`], after the
    /// node's tasks are gone (so their handles are dropped first).
    pub fn on_node_crash(&self, listener: CrashListener) {
        self.crash_listeners.borrow_mut().push(listener);
    }

    /// A crash of `node`: its tasks are cancelled at once, then each crash
    /// listener (the disk, ...) resolves what the crash does to its state.
    pub fn crash_node(&self, node: u32) {
        self.cancel_node(node);
        let listeners: Vec<CrashListener> = self.crash_listeners.borrow().clone();
        for listener in listeners {
            listener(node);
        }
    }

    /// Whether this is a `LocalRuntime`.
    pub fn is_local_runtime(&self) -> bool {
        self.options.get().local
    }

    /// Whether timers were enabled (`Builder::enable_time`).
    #[inline]
    pub fn time_enabled(&self) -> bool {
        self.options.get().enable_time
    }

    /// Whether sockets were enabled (`Builder::enable_io`).
    #[inline]
    pub fn io_enabled(&self) -> bool {
        self.options.get().enable_io
    }

    /// How many times the scheduler went idle and moved the clock.
    pub fn parks(&self) -> u64 {
        self.parks.get()
    }

    /// The virtual time, in ns since the start of the run.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.now_ns.get()
    }

    /// The `std::time::Instant` at virtual time zero.
    #[inline]
    pub fn base_instant(&self) -> std::time::Instant {
        self.base_instant
    }

    /// The id of the task being polled, or 0 for the root future (or none).
    #[inline]
    pub fn current_task(&self) -> u64 {
        self.current_task.get()
    }

    /// Names host `node` in the trace file's lines.
    pub fn set_node_name(&self, node: u32, name: &str) {
        self.trace.borrow_mut().set_node_name(node, name);
    }

    /// Names the host at `ip` in messages' text (see [`trace::Message`]).
    pub fn name_address(&self, ip: std::net::IpAddr, name: &str) {
        self.trace.borrow_mut().name_address(ip, name);
    }

    /// `addr` as the trace shows it (`name:port` for a named host).
    pub fn describe_address(&self, addr: &std::net::SocketAddr) -> String {
        self.trace.borrow().describe_address(addr)
    }

    /// Records an event in the trace, stamped with the current task if
    /// `task` is `None`.
    #[inline]
    pub fn trace(&self, kind: EventKind, task: u64, label: Label<'_>) {
        self.trace
            .borrow_mut()
            .record(self.now_ns.get(), kind, task, label);
    }

    /// Writes a line of the service's log into the trace file (not an
    /// event: the hash does not cover it). See [`crate::logs`].
    pub fn trace_log(&self, text: &str) {
        if let Ok(mut trace) = self.trace.try_borrow_mut() {
            trace.log(self.now_ns.get(), self.current_task.get(), text);
        }
    }

    /// The last events of the run (at most 16), oldest first.
    pub fn recent_events(&self) -> Vec<String> {
        let lines = self
            .trace
            .try_borrow()
            .map(|t| t.recent_lines())
            .unwrap_or_default();
        // Name the tasks still known ("task 3 'server'").
        let Ok(st) = self.state.try_borrow() else {
            return lines;
        };
        lines
            .into_iter()
            .map(|line| {
                let Some((head, rest)) = line.split_once(" task ") else {
                    return line;
                };
                let (id, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let name = id.parse::<u64>().ok().and_then(|id| {
                    if id == 0 {
                        return Some("root");
                    }
                    st.tasks
                        .iter()
                        .position(|t| t.id == id)
                        .and_then(|slot| st.metas[slot].as_ref())
                        .map(|m| m.name.as_deref().unwrap_or(m.kind))
                });
                match name {
                    Some(name) => format!("{head} task {id} '{name}' {tail}"),
                    None => line,
                }
            })
            .collect()
    }

    /// The SHA-256 of the trace so far.
    pub fn trace_hash(&self) -> String {
        self.trace.borrow().hash_hex()
    }

    /// A uniform draw from the scheduler's stream in `0..n` (for choices
    /// that are scheduling decisions, like `select!`'s branch order).
    #[inline]
    pub fn sched_below(&self, n: u64) -> u64 {
        if self.deciding.get() {
            return self.decide(crate::decision::SELECT, n, || {
                self.state.borrow_mut().sched_rng.below(n)
            });
        }
        self.state.borrow_mut().sched_rng.below(n)
    }

    /// The next choice in `0..n` (`n == 0`: any 64 bits) of `stream` in the
    /// decision log: the replayed value, clamped to the range, or `draw()`.
    /// Without a log, `draw()`.
    pub fn decide(&self, stream: &str, n: u64, draw: impl FnOnce() -> u64) -> u64 {
        if !self.deciding.get() {
            return draw();
        }
        let mut decisions = self.decisions.borrow_mut();
        let Some(decisions) = decisions.as_mut() else {
            return draw();
        };
        let value = decisions.next(stream, || crate::decision::Value::Num(draw()));
        crate::decision::clamp(value, n)
    }

    /// Picks the next task among the ready ones (two or more) through the
    /// decision log: its index in `ready`. The log names a pick by the
    /// task's id (0: the root future), so that a replay whose earlier picks
    /// were edited still means the same tasks; an id that is not ready, or
    /// `min`, is the first ready task.
    fn pick(&self, ready: &[u32], tasks: &[TaskSlot], choose: impl FnOnce() -> usize) -> usize {
        use crate::decision::Value;
        let id_of = |slot: u32| {
            if slot == ROOT_SLOT {
                0
            } else {
                tasks[slot as usize].id
            }
        };
        let chosen = StdCell::new(None);
        let mut decisions = self.decisions.borrow_mut();
        let decisions = decisions
            .as_mut()
            .expect("picks through the log only with one");
        let value = decisions.next(crate::decision::SCHEDULE, || {
            let index = choose();
            chosen.set(Some(index));
            Value::Num(id_of(ready[index]))
        });
        if let Some(index) = chosen.get() {
            return index;
        }
        match value {
            Value::Min => 0,
            Value::Num(id) => ready.iter().position(|&s| id_of(s) == id).unwrap_or(0),
        }
    }

    /// Takes `ready[index]` out of a ready queue. A replay keeps the queue
    /// in wake order (so its first task is the FIFO pick); otherwise the
    /// last task fills the gap, as the policies' draws expect.
    fn take_ready(&self, ready: &mut Vec<u32>, index: usize) -> u32 {
        if self.replaying.get() {
            ready.remove(index)
        } else {
            ready.swap_remove(index)
        }
    }

    /// Sets `node`'s clock offsets from now on.
    pub fn set_node_clock(&self, node: u32, clock: NodeClock) {
        self.clocks.borrow_mut().insert(node, clock);
        self.any_clock.set(true);
    }

    /// `node`'s clock offsets.
    pub fn node_clock(&self, node: u32) -> NodeClock {
        if !self.any_clock.get() {
            return NodeClock::default();
        }
        self.clocks.borrow().get(&node).copied().unwrap_or_default()
    }

    /// What the current node's monotonic clock reads, in ns from the run's
    /// start, at the current true time.
    #[inline]
    pub fn local_now_ns(&self) -> u64 {
        let now = self.now_ns.get();
        if !self.any_clock.get() {
            return now;
        }
        self.node_clock(self.current_node.get()).local_ns(now)
    }

    /// The true time at which the current node's monotonic clock reads
    /// `local_ns` (for timers set from a node's `Instant`s).
    #[inline]
    pub fn true_ns_of_local(&self, local_ns: u64) -> u64 {
        if !self.any_clock.get() {
            return local_ns;
        }
        self.node_clock(self.current_node.get())
            .true_ns_of(local_ns)
    }

    /// How far the current node's wall clock is off true time, in ns.
    #[inline]
    pub fn wall_offset_ns(&self) -> i64 {
        if !self.any_clock.get() {
            return 0;
        }
        let clock = self.node_clock(self.current_node.get());
        (clock.monotonic_offset_ns as i64)
            .saturating_add(clock.drift_ns(self.now_ns.get()))
            .saturating_add(clock.wall_offset_ns)
    }

    /// Fails the run: `block_on` panics with `message` at its next turn,
    /// outside any task (a panic inside a task would only fail that task).
    /// The first failure wins.
    pub fn fail_run(&self, class: crate::sweep::FailureClass, message: String) {
        if !self.failed.replace(true) {
            *self.failure.borrow_mut() = Some((class, message));
        }
    }

    /// Sets what runs after every scheduled callback (a network delivery, a
    /// fault, a disk completion): the harness checks its invariants there.
    pub fn set_after_call(&self, hook: Option<AfterCall>) {
        *self.after_call.borrow_mut() = hook;
    }

    /// The next draw in `0..n` from the stream named `label` of this run's
    /// seed tree. The same seed and label give the same draws in every
    /// run, whatever other streams drew.
    pub fn stream_below(&self, label: &str, n: u64) -> u64 {
        assert!(
            n > 0,
            "a draw from stream {label:?} needs a non-empty range"
        );
        if self.deciding.get() {
            return self.decide(label, n, || self.with_stream(label, |rng| rng.below(n)));
        }
        self.with_stream(label, |rng| rng.below(n))
    }

    /// The next 64 bits from the stream named `label` (see
    /// [`Core::stream_below`]).
    pub fn stream_u64(&self, label: &str) -> u64 {
        if self.deciding.get() {
            return self.decide(label, 0, || self.with_stream(label, Rng::next_u64));
        }
        self.with_stream(label, Rng::next_u64)
    }

    /// Runs `f` on the stream named `label`, made on first use (the name is
    /// copied once per stream, not once per draw).
    fn with_stream<R>(&self, label: &str, f: impl FnOnce(&mut Rng) -> R) -> R {
        let mut streams = self.streams.borrow_mut();
        if let Some(rng) = streams.get_mut(label) {
            return f(rng);
        }
        f(streams
            .entry(label.into())
            .or_insert_with(|| Rng::named(self.config.seed, label)))
    }

    /// Fills `buf` from the run's stream for user randomness (what
    /// `getrandom` returns during a run).
    pub fn fill_random(&self, buf: &mut [u8]) {
        if !self.deciding.get() {
            self.state.borrow_mut().user_rng.fill(buf);
            return;
        }
        // Drawn as a run does, then logged 8 bytes per value; a replay
        // takes the bytes from the log.
        let mut drawn = vec![0u8; buf.len()];
        self.state.borrow_mut().user_rng.fill(&mut drawn);
        for (chunk, fresh) in buf.chunks_mut(8).zip(drawn.chunks(8)) {
            let mut bytes = [0u8; 8];
            bytes[..fresh.len()].copy_from_slice(fresh);
            let value = self.decide(crate::decision::RANDOM, 0, || u64::from_le_bytes(bytes));
            chunk.copy_from_slice(&value.to_le_bytes()[..chunk.len()]);
        }
    }

    /// Replaces the scheduling policy.
    pub fn set_policy(&self, policy: Box<dyn SchedulePolicy>) {
        self.state.borrow_mut().policy = policy;
    }

    // ----- tasks -----------------------------------------------------------

    /// Spawns `future` onto this runtime (`owner` 0) or onto a local set.
    pub fn spawn<F>(&self, future: F, meta: TaskMeta, owner: u32) -> RawTask
    where
        F: Future + 'static,
    {
        self.spawn_cell(Cell::boxed(future), meta, owner, self.current_node.get())
    }

    /// Spawns `future` as a task of `node` (a simulated host).
    pub fn spawn_on_node<F>(&self, future: F, meta: TaskMeta, node: u32) -> RawTask
    where
        F: Future + 'static,
    {
        self.spawn_cell(Cell::boxed(future), meta, 0, node)
    }

    fn spawn_cell(
        &self,
        cell: Box<dyn TaskCell>,
        meta: TaskMeta,
        owner: u32,
        node: u32,
    ) -> RawTask {
        let mut st = self.state.borrow_mut();
        let id = st.next_task_id;
        st.next_task_id += 1;
        let slot = match st.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = st.tasks.len() as u32;
                assert!(
                    slot < ROOT_SLOT,
                    "sim: more than {ROOT_SLOT} live tasks in one simulation"
                );
                st.tasks.push(TaskSlot {
                    generation: 0,
                    id: 0,
                    flags: 0,
                    owner: 0,
                    node: 0,
                    scope: 0,
                    cell: None,
                    join_waker: None,
                    site: None,
                });
                st.metas.push(None);
                slot
            }
        };
        self.trace
            .borrow_mut()
            .record_spawn(self.now_ns.get(), id, &meta, node);
        let task = &mut st.tasks[slot as usize];
        debug_assert!(task.id == 0 && task.cell.is_none(), "a free slot is empty");
        task.id = id;
        task.flags = QUEUED;
        task.owner = owner;
        task.node = node;
        task.scope = self.current_scope.get();
        task.cell = Some(cell);
        task.site = Some(meta.location);
        let generation = task.generation;
        st.metas[slot as usize] = Some(meta);
        st.policy.spawned(slot);
        {
            let mut counts = self.waker_counts.borrow_mut();
            if counts.len() <= slot as usize {
                counts.resize(slot as usize + 1, (u32::MAX, 0));
            }
            counts[slot as usize] = (generation & SLOT_MASK, 0);
        }
        st.live_tasks += 1;
        if owner == 0 {
            st.ready.push(slot);
        } else {
            let local = st.locals[owner as usize - 1]
                .as_mut()
                .expect("spawn onto a live local set");
            local.ready.push(slot);
            local.live += 1;
            if let Some(waker) = local.waker.take() {
                drop(st);
                waker.wake();
            }
        }
        RawTask {
            core: self.id,
            slot,
            generation,
            id,
        }
    }

    /// Queues a task after a wake. Called by wakers.
    /// Counts a clone (`+1`) or a drop (`-1`) of a task's waker.
    #[inline]
    pub(crate) fn count_waker(&self, slot: u32, generation: u32, delta: i32) {
        // Its own cell, never borrowed around a clone: a waker may be
        // cloned while the runtime's state is borrowed.
        let mut counts = self.waker_counts.borrow_mut();
        if let Some((g, count)) = counts.get_mut(slot as usize) {
            if *g == generation {
                *count = count.wrapping_add_signed(delta);
            }
        }
    }

    /// For a parked task (not ready, not running, not done): how many
    /// clones of its waker are alive, so how many things could wake it.
    /// `None` for a task that can run, or is gone.
    pub fn parked_wakers(&self, id: u64) -> Option<u32> {
        let st = self.state.borrow();
        let slot = st.tasks.iter().position(|t| t.id == id)?;
        let task = &st.tasks[slot];
        let count = self.waker_counts.borrow().get(slot).map_or(0, |(_, c)| *c);
        // Timers keep a task's waker uncounted (see `waker::keep`).
        let data = crate::waker::data_of(self.id, slot as u32, task.generation & SLOT_MASK);
        let timers = st.events.timers_keeping(data);
        (task.flags & (QUEUED | RUNNING | DONE) == 0).then_some(count + timers)
    }

    /// Whether `waker` is task `id`'s own (not a combinator's wrapper).
    pub fn is_own_waker(&self, id: u64, waker: &Waker) -> bool {
        let st = self.state.borrow();
        let Some(slot) = st.tasks.iter().position(|t| t.id == id) else {
            return false;
        };
        let own = waker::waker(self.id, slot as u32, st.tasks[slot].generation & SLOT_MASK);
        // (A packed waker owns nothing: forgetting it leaks nothing, and
        // its drop must not count.)
        let same = own.will_wake(waker);
        std::mem::forget(own);
        same
    }

    /// Runs `f` right after the current poll (of a task or the root
    /// future) returns: a check that needs the task parked.
    pub fn defer(&self, f: Box<dyn FnOnce()>) {
        self.deferred.borrow_mut().push(f);
    }

    fn run_deferred(&self) {
        // Bounded: what a deferred call defers runs in the next round.
        for _ in 0..16 {
            let calls = std::mem::take(&mut *self.deferred.borrow_mut());
            if calls.is_empty() {
                return;
            }
            for call in calls {
                call();
            }
        }
    }

    /// "task 3 'name' spawned at file:line:col", for reports.
    pub fn describe_task(&self, id: u64) -> String {
        let st = self.state.borrow();
        match st
            .tasks
            .iter()
            .position(|t| t.id == id)
            .and_then(|slot| st.metas[slot].as_ref())
        {
            Some(meta) => format!(
                "task {id} '{}' spawned at {}:{}:{}",
                meta.name.as_deref().unwrap_or(meta.kind),
                meta.location.file(),
                meta.location.line(),
                meta.location.column()
            ),
            None if id == 0 => "the root future".to_string(),
            None => format!("task {id}"),
        }
    }

    /// Sets what failure reports ask about each pending task: what it
    /// waits on, and where (the facade's lock and wait registry).
    pub fn set_wait_describer(&self, describer: WaitDescriber) {
        *self.wait_describer.borrow_mut() = Some(describer);
    }

    /// What `task` waits on, if the describer knows.
    pub fn describe_wait(&self, task: u64) -> Option<String> {
        let describer = self.wait_describer.borrow().clone();
        if let Some(lock) = describer.and_then(|d| d(task)) {
            return Some(lock);
        }
        let st = self.state.borrow();
        let slot = st.tasks.iter().position(|t| t.id == task)?;
        let (note, more) = st.waits.get(slot).copied().flatten()?;
        Some(note.describe(more))
    }

    /// The running task yields (`tokio::task::yield_now`): `waker` (its own)
    /// is woken once no task that is ready now is left to run, so every task
    /// ready when it yielded runs before it resumes, in the seed's order, as
    /// at the back of tokio's queue. Bounded: after [`BEHIND_POLLS_MAX`]
    /// polls with the ready set never empty, the yielders run anyway.
    pub fn yield_task(&self, waker: &Waker) {
        let mut behind = self.behind.borrow_mut();
        if behind.is_empty() {
            self.behind_polls.set(0);
        }
        behind.push(waker.clone());
    }

    /// Takes the options of the runtime that adopts this core: one made
    /// before any runtime (for a `LocalSet` used first outside one), now
    /// taken by the runtime built next on its thread.
    pub fn adopt_options(&self, options: RuntimeOptions) {
        self.options.set(options);
        self.scopes.borrow_mut()[0].options = options;
        self.paused.set(options.start_paused);
    }

    /// Sets the runtime's hooks.
    pub fn set_hooks(&self, hooks: RuntimeHooks) {
        *self.hooks.borrow_mut() = hooks;
    }

    /// Wakes the tasks that yielded, in the order they did.
    fn release_behind(&self) {
        let wakers = std::mem::take(&mut *self.behind.borrow_mut());
        for waker in wakers {
            waker.wake();
        }
    }

    /// The running task waits on `note` (a primitive returning `Pending`
    /// says so). The first note of a poll is kept, the others counted.
    #[inline]
    pub fn note_wait(&self, note: WaitNote) {
        if self.poll_note.get().is_none() {
            self.poll_note.set(Some(note));
        } else {
            self.poll_note_more.set(self.poll_note_more.get() + 1);
        }
    }

    pub(crate) fn wake_slot(&self, slot: u32, generation: u32) {
        let mut st = self.state.borrow_mut();
        if slot == ROOT_SLOT {
            if !st.root_queued && self.in_block_on.get() {
                st.root_queued = true;
                st.ready.push(ROOT_SLOT);
                drop(st);
                self.trace(EventKind::Wake, 0, Label::None);
            }
            return;
        }
        let Some(task) = st.tasks.get_mut(slot as usize) else {
            return;
        };
        if task.generation & SLOT_MASK != generation || task.id == 0 {
            return;
        }
        if task.flags & (QUEUED | DONE) != 0 {
            return;
        }
        task.flags |= QUEUED;
        let (id, owner) = (task.id, task.owner);
        let mut local_waker = None;
        if owner == 0 {
            st.ready.push(slot);
        } else if let Some(local) = st.locals[owner as usize - 1].as_mut() {
            local.ready.push(slot);
            local_waker = local.waker.take();
        }
        drop(st);
        self.trace(EventKind::Wake, id, Label::None);
        if let Some(waker) = local_waker {
            waker.wake();
        }
    }

    fn poll_task(&self, slot: u32) {
        let (mut cell, id, generation, abort, node, scope, site) = {
            let mut st = self.state.borrow_mut();
            let task = &mut st.tasks[slot as usize];
            task.flags &= !QUEUED;
            if task.flags & DONE != 0 || task.cell.is_none() {
                return;
            }
            task.flags |= RUNNING;
            (
                task.cell.take().expect("checked above"),
                task.id,
                task.generation,
                task.flags & ABORT != 0,
                task.node,
                task.scope,
                task.site,
            )
        };
        let previous_node = self.current_node.replace(node);
        let _restore_node = RestoreNode(&self.current_node, previous_node);
        // The task runs in its runtime's scope (its options, its handle).
        let _restore_scope =
            (scope != self.current_scope.get()).then(|| RestoreScope(self, self.set_scope(scope)));
        if abort {
            self.trace(EventKind::Cancel, id, Label::None);
            let previous = self.current_task.replace(id);
            cell.cancel();
            self.current_task.set(previous);
            self.finish(slot, cell, true);
            return;
        }
        let previous = self.current_task.replace(id);
        self.budget.set(TASK_BUDGET);
        self.trace(EventKind::Poll, id, Label::None);
        // Never dropped: only clones count as held (see `TaskSlot::wakers`).
        let waker = std::mem::ManuallyDrop::new(waker::waker(self.id, slot, generation));
        let mut cx = Context::from_waker(&waker);
        crate::sweep::poll_started(id, site);
        // A poll inside a poll (a LocalSet's task) keeps the outer's notes.
        let outer_note = self.poll_note.replace(None);
        let outer_more = self.poll_note_more.replace(0);
        let result = cell.poll(&mut cx);
        let note = self.poll_note.replace(outer_note);
        let more = self.poll_note_more.replace(outer_more);
        crate::sweep::poll_finished();
        self.current_task.set(previous);
        match result {
            Poll::Pending => {
                let mut st = self.state.borrow_mut();
                let task = &mut st.tasks[slot as usize];
                task.flags &= !RUNNING;
                task.cell = Some(cell);
                let index = slot as usize;
                if st.waits.len() <= index {
                    st.waits.resize(index + 1, None);
                }
                st.waits[index] = note.map(|n| (n, more));
            }
            Poll::Ready(()) => {
                self.trace(EventKind::Complete, id, Label::None);
                self.finish(slot, cell, false);
            }
        }
        if !self.deferred.borrow().is_empty() {
            self.run_deferred();
        }
    }

    /// Marks a task done, wakes its joiner, and frees it if nobody will
    /// read its output.
    fn finish(&self, slot: u32, cell: Box<dyn TaskCell>, _cancelled: bool) {
        let mut st = self.state.borrow_mut();
        let task = &mut st.tasks[slot as usize];
        task.flags = (task.flags | DONE) & !(RUNNING | QUEUED);
        let join_waker = task.join_waker.take();
        let owner = task.owner;
        let id = task.id;
        let mut dead_cell = None;
        if task.flags & DETACHED != 0 {
            dead_cell = Some(cell);
            Self::free_slot(&mut st, slot);
        } else {
            task.cell = Some(cell);
        }
        if owner != 0 {
            if let Some(local) = st.locals[owner as usize - 1].as_mut() {
                local.live -= 1;
            }
        }
        drop(st);
        // The output (or the panic payload) may run user code when dropped.
        if let Some(cell) = dead_cell {
            self.drop_output(id, cell);
        }
        if let Some(waker) = join_waker {
            waker.wake();
        }
    }

    fn free_slot(st: &mut State, slot: u32) {
        let task = &mut st.tasks[slot as usize];
        task.generation = task.generation.wrapping_add(1);
        task.id = 0;
        task.flags = 0;
        task.owner = 0;
        task.node = 0;
        task.join_waker = None;
        task.site = None;
        st.metas[slot as usize] = None;
        if let Some(wait) = st.waits.get_mut(slot as usize) {
            *wait = None;
        }
        st.free.push(slot);
        st.live_tasks -= 1;
    }

    fn with_live_task<R>(
        &self,
        raw: RawTask,
        f: impl FnOnce(&mut State, &mut TaskSlot) -> R,
    ) -> Option<R> {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let mut task = std::mem::replace(
            st.tasks.get_mut(raw.slot as usize)?,
            TaskSlot {
                generation: 0,
                id: 0,
                flags: 0,
                owner: 0,
                node: 0,
                scope: 0,
                cell: None,
                join_waker: None,
                site: None,
            },
        );
        let result = if task.generation == raw.generation && task.id == raw.id {
            Some(f(st, &mut task))
        } else {
            None
        };
        st.tasks[raw.slot as usize] = task;
        result
    }

    /// Polls a join handle: moves the output into `dst` when the task is
    /// done, or registers the waker. A task this runtime no longer knows was
    /// cancelled by a shutdown.
    ///
    /// # Safety
    /// `dst` must point to an `Output<T>` where `T` is the output type of
    /// the future spawned as `raw`.
    pub unsafe fn poll_join(&self, raw: RawTask, cx: &mut Context<'_>, dst: *mut ()) -> Poll<()> {
        let result = self.with_live_task(raw, |_, task| {
            if task.flags & DONE != 0 {
                if task.flags & OUTPUT_TAKEN == 0 {
                    task.flags |= OUTPUT_TAKEN;
                    if let Some(cell) = task.cell.as_mut() {
                        // Safety: the caller's contract.
                        unsafe { cell.take_output(dst) };
                    }
                }
                Poll::Ready(())
            } else {
                match &task.join_waker {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => task.join_waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        });
        result.unwrap_or(Poll::Ready(()))
    }

    /// The join handle is gone: free the task when it is done, or mark it
    /// so that it is freed when it finishes.
    pub fn join_drop(&self, raw: RawTask) {
        let mut dead_cell = None;
        {
            let mut st = self.state.borrow_mut();
            let Some(task) = st.tasks.get_mut(raw.slot as usize) else {
                return;
            };
            if task.generation != raw.generation || task.id != raw.id {
                return;
            }
            task.join_waker = None;
            if task.flags & DONE != 0 {
                dead_cell = task.cell.take();
                Self::free_slot(&mut st, raw.slot);
            } else {
                task.flags |= DETACHED;
            }
        }
        if let Some(cell) = dead_cell {
            self.drop_output(raw.id, cell);
        }
    }

    /// Drops a finished task's cell (its output or panic payload), which
    /// may run user code: as the task (`task::id()` names it), and a panic
    /// there stays here, as in tokio.
    fn drop_output(&self, id: u64, cell: Box<dyn TaskCell>) {
        let previous = self.current_task.replace(id);
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(cell)));
        self.current_task.set(previous);
        drop(dropped);
    }

    /// Whether the task finished (or is gone with a shutdown).
    pub fn is_finished(&self, raw: RawTask) -> bool {
        self.with_live_task(raw, |_, task| task.flags & DONE != 0)
            .unwrap_or(true)
    }

    /// Requests cancellation: the task is dropped at its next turn, as if it
    /// returned `Cancelled` at its next `.await`.
    pub fn abort(&self, raw: RawTask) {
        let wake = self
            .with_live_task(raw, |_, task| {
                if task.flags & (DONE | ABORT) != 0 {
                    return false;
                }
                task.flags |= ABORT;
                true
            })
            .unwrap_or(false);
        if wake {
            self.wake_slot(raw.slot, raw.generation & SLOT_MASK);
        }
    }

    /// How many tasks (and the root future) are queued to run.
    pub fn ready_count(&self) -> usize {
        self.state.borrow().ready.len()
    }

    /// How many tasks are alive (spawned, not yet finished and freed).
    pub fn live_tasks(&self) -> usize {
        self.state.borrow().live_tasks
    }

    // ----- local sets -------------------------------------------------------

    /// Creates a local set and returns its owner number.
    pub fn local_new(&self) -> u32 {
        let mut st = self.state.borrow_mut();
        let queue = LocalQueue {
            ready: Vec::new(),
            waker: None,
            live: 0,
        };
        if let Some(index) = st.locals.iter().position(Option::is_none) {
            st.locals[index] = Some(queue);
            index as u32 + 1
        } else {
            st.locals.push(Some(queue));
            st.locals.len() as u32
        }
    }

    /// The local set being run, if any (what `spawn_local` spawns onto).
    pub fn current_local(&self) -> u32 {
        self.current_local.get()
    }

    /// Makes `owner` the current local set; returns the previous one.
    pub fn set_current_local(&self, owner: u32) -> u32 {
        self.current_local.replace(owner)
    }

    /// How many tasks of a local set have not finished.
    pub fn local_live(&self, owner: u32) -> usize {
        let st = self.state.borrow();
        st.locals
            .get(owner as usize - 1)
            .and_then(Option::as_ref)
            .map_or(0, |l| l.live)
    }

    /// Runs one ready task of the local set, picked by the policy. Returns
    /// whether more are ready; registers `waker` for later wakes otherwise.
    pub fn local_tick(&self, owner: u32, waker: &Waker) -> bool {
        let slot = {
            let mut st = self.state.borrow_mut();
            let st = &mut *st;
            let Some(local) = st
                .locals
                .get_mut(owner as usize - 1)
                .and_then(Option::as_mut)
            else {
                return false;
            };
            local.waker = Some(waker.clone());
            if local.ready.is_empty() {
                return false;
            }
            st.decisions += 1;
            if self.deciding.get() && local.ready.len() > 1 {
                let (policy, rng) = (&mut st.policy, &mut st.sched_rng);
                let index = self.pick(&local.ready, &st.tasks, || policy.choose(&local.ready, rng));
                self.take_ready(&mut local.ready, index)
            } else {
                let index = st.policy.choose(&local.ready, &mut st.sched_rng);
                local.ready.swap_remove(index)
            }
        };
        let previous = self.set_current_local(owner);
        self.poll_task(slot);
        self.set_current_local(previous);
        let st = self.state.borrow();
        st.locals[owner as usize - 1]
            .as_ref()
            .is_some_and(|l| !l.ready.is_empty())
    }

    /// Drops a local set: its unfinished tasks are cancelled.
    pub fn local_drop(&self, owner: u32) {
        let victims: Vec<RawTask> = {
            let st = self.state.borrow();
            st.tasks
                .iter()
                .enumerate()
                .filter(|(_, t)| t.id != 0 && t.owner == owner && t.flags & DONE == 0)
                .map(|(slot, t)| RawTask {
                    core: self.id,
                    slot: slot as u32,
                    generation: t.generation,
                    id: t.id,
                })
                .collect()
        };
        for raw in victims {
            self.cancel_now(raw);
        }
        self.state.borrow_mut().locals[owner as usize - 1] = None;
    }

    fn cancel_now(&self, raw: RawTask) {
        let cell = self
            .with_live_task(raw, |_, task| {
                if task.flags & (DONE | RUNNING) != 0 {
                    None
                } else {
                    task.cell.take()
                }
            })
            .flatten();
        if let Some(mut cell) = cell {
            self.trace(EventKind::Cancel, raw.id, Label::None);
            let previous = self.current_task.replace(raw.id);
            cell.cancel();
            self.current_task.set(previous);
            self.finish(raw.slot, cell, true);
        }
    }

    // ----- cooperative budget -------------------------------------------------

    /// Spends one unit of the task's budget, or asks it to yield (waking it
    /// at once) when the budget is spent.
    #[inline]
    pub fn poll_budget(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.unconstrained.get() {
            return Poll::Ready(());
        }
        let budget = self.budget.get();
        if budget == 0 {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.budget.set(budget - 1);
        Poll::Ready(())
    }

    /// Gives back one unit of budget (an operation that spent it made no
    /// progress after all).
    pub fn restore_budget(&self) {
        if !self.unconstrained.get() {
            self.budget.set((self.budget.get() + 1).min(TASK_BUDGET));
        }
    }

    /// Whether the current task has budget left.
    pub fn has_budget(&self) -> bool {
        self.unconstrained.get() || self.budget.get() > 0
    }

    /// Turns budgeting off (or back on); returns the previous setting.
    pub fn set_unconstrained(&self, on: bool) -> bool {
        self.unconstrained.replace(on)
    }

    // ----- timers and events ------------------------------------------------

    /// Registers a timer at `deadline_ns` that wakes `waker`.
    pub fn timer_insert(&self, deadline_ns: u64, waker: Option<&Waker>) -> EventKey {
        self.insert_timer(deadline_ns, waker.map(crate::waker::keep))
    }

    /// Inserts a timer with a waker already in its kept form.
    fn insert_timer(&self, deadline_ns: u64, waker: Option<Waker>) -> EventKey {
        let (key, seq) = self
            .state
            .borrow_mut()
            .events
            .insert(deadline_ns, Action::Wake(waker));
        self.trace(
            EventKind::TimerSet,
            self.current_task.get(),
            Label::Timer {
                id: seq,
                at_ns: deadline_ns,
            },
        );
        key
    }

    /// Moves a timer to a new deadline, keeping its waker (if it is still
    /// pending) so a task waiting on it is woken at the new time.
    pub fn timer_reset(&self, key: EventKey, deadline_ns: u64) -> EventKey {
        let action = self.state.borrow_mut().events.take(key);
        let waker = match action {
            Some(Action::Wake(waker)) => waker,
            _ => None,
        };
        // A deadline already reached wakes the waiting task at once, inside
        // the reset, as tokio's does.
        if deadline_ns <= self.now_ns.get() {
            if let Some(waker) = waker {
                waker.wake();
            }
            return self.insert_timer(deadline_ns, None);
        }
        self.insert_timer(deadline_ns, waker)
    }

    /// Replaces a pending timer's waker.
    pub fn timer_set_waker(&self, key: EventKey, waker: &Waker) -> bool {
        self.state.borrow_mut().events.set_waker(key, waker)
    }

    /// Cancels a pending timer or event.
    pub fn event_cancel(&self, key: EventKey) -> bool {
        self.state.borrow_mut().events.cancel(key)
    }

    /// Whether a timer or event is still pending.
    pub fn event_pending(&self, key: EventKey) -> bool {
        self.state.borrow().events.contains(key)
    }

    /// Schedules `callback` to run at `at_ns` in this runtime's context.
    pub fn schedule(
        &self,
        at_ns: u64,
        label: &'static str,
        callback: Box<dyn FnOnce()>,
    ) -> EventKey {
        let at_ns = at_ns.max(self.now_ns.get());
        self.state
            .borrow_mut()
            .events
            .insert(at_ns, Action::Call(callback, label))
            .0
    }

    fn fire_due(&self) {
        // Bounded by the events due now; each fired event is removed.
        loop {
            let fired = self.state.borrow_mut().events.pop_due(self.now_ns.get());
            let Some(fired) = fired else { break };
            match fired.action {
                Action::Wake(waker) => {
                    self.trace_u64(EventKind::TimerFire, fired.seq);
                    if let Some(waker) = waker {
                        waker.wake();
                    }
                }
                Action::Call(callback, label) => {
                    self.trace(EventKind::Callback, 0, Label::Str(label));
                    callback();
                    // The harness's checkers look at the world after each
                    // delivery, fault and lifecycle event.
                    let hook = self.after_call.borrow().clone();
                    if let Some(hook) = hook {
                        hook(label);
                    }
                }
            }
        }
    }

    fn trace_u64(&self, kind: EventKind, value: u64) {
        self.trace(kind, 0, Label::Num(value));
    }

    fn set_now(&self, now_ns: u64) {
        let limit_ns = self.config.time_limit.as_nanos().min(u64::MAX as u128) as u64;
        if now_ns > limit_ns {
            let message = format!(
                "sim: time limit: the run would pass {:?} of virtual time (the next event is at \
                 {:?}) with its root future still pending. Seed {:#x}. Raise the limit with {}=<seconds> \
                 if the run really needs longer; otherwise something waits forever on a timer.\n{}",
                self.config.time_limit,
                Duration::from_nanos(now_ns),
                self.config.seed,
                crate::config::TIME_LIMIT_VAR,
                self.pending_tasks_report().trim_end(),
            );
            crate::sweep::set_failure_class(crate::sweep::FailureClass::TimeLimit);
            panic!("{message}");
        }
        debug_assert!(now_ns >= self.now_ns.get(), "the clock never goes back");
        if now_ns > self.now_ns.get() {
            self.state.borrow_mut().steps_at_instant = 0;
        }
        self.now_ns.set(now_ns);
        self.trace_u64(EventKind::Advance, now_ns);
    }

    /// Jumps to the next event and fires everything due. Returns false when
    /// nothing is pending at all. (Also what the simulator's thread does
    /// while a std call blocks it on simulated threads that sleep.)
    pub(crate) fn advance_to_next_event(&self) -> bool {
        let remote = waker::take_remote_wakes(self.id);
        if !remote.is_empty() {
            for (slot, generation) in remote {
                self.wake_slot(slot, generation);
            }
            return true;
        }
        let next = self.state.borrow_mut().events.next_deadline();
        let Some(deadline) = next else {
            return false;
        };
        self.parks.set(self.parks.get() + 1);
        if deadline > self.now_ns.get() {
            self.set_now(deadline);
        }
        self.fire_due();
        true
    }

    /// `tokio::time::advance`: moves the clock forward by `by` at once and
    /// fires every event due by then.
    pub fn advance_clock(&self, by: Duration) {
        let target = self
            .now_ns
            .get()
            .saturating_add(by.as_nanos().min(u64::MAX as u128) as u64);
        // Fire events in deadline order first, as time passes over them.
        loop {
            let next = self.state.borrow_mut().events.next_deadline();
            match next {
                Some(deadline) if deadline <= target => {
                    if deadline > self.now_ns.get() {
                        self.set_now(deadline);
                    }
                    self.fire_due();
                }
                _ => break,
            }
        }
        if target > self.now_ns.get() {
            self.set_now(target);
        }
    }

    /// Whether `time::pause` is in force.
    pub fn is_paused(&self) -> bool {
        self.paused.get()
    }

    /// Sets the paused flag (for `time::pause` and `time::resume`).
    pub fn set_paused(&self, paused: bool) {
        self.paused.set(paused);
    }

    // ----- the loop -------------------------------------------------------

    /// Whether a `block_on` is running on this runtime.
    pub fn in_block_on(&self) -> bool {
        self.in_block_on.get()
    }

    /// Runs the simulation until `future` completes.
    ///
    /// # Panics
    /// On a deadlock, at the time limit, at the step limit, and when called
    /// inside a runtime.
    pub fn block_on<F: Future>(self: &Rc<Self>, future: F) -> F::Output {
        // On a simulated OS thread, the thread waits for its future while
        // the simulation runs on (`threads.rs`).
        #[cfg(all(
            simulation,
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        ))]
        if crate::threads::on_sim_thread() {
            return crate::threads::block_on(self, future);
        }
        // Inside a blocking section (block_in_place, spawn_blocking) a
        // runtime may be blocked on, this one included, as in tokio.
        if context::with_current(|c| c.in_block_on()).unwrap_or(false)
            && !context::in_blocking_section()
        {
            panic!(
                "Cannot start a runtime from within a runtime. This happens because a function \
                 (like `block_on`) attempted to block the current thread while the thread is \
                 being used to drive asynchronous tasks."
            );
        }
        assert!(
            !self.shut_down.get(),
            "sim: block_on on a runtime that was shut down"
        );
        let _driving = context::Driving::new();
        // The current scope's runtime is blocked on: its `current_thread`
        // tasks may run (see `Core::runnable`).
        let _scope_driving = ScopeDriving::new(self);
        // Re-entered from a blocking section of one of its own tasks: this
        // call's future is the root until it returns; the outer root is
        // queued again then (a spare wake is harmless).
        let _outer = self.in_block_on.get().then(|| {
            let mut st = self.state.borrow_mut();
            st.ready.retain(|&s| s != ROOT_SLOT);
            st.root_queued = false;
            OuterRoot(self)
        });
        let _enter = Enter::new(self.clone());
        let _running = Flag::set(&self.in_block_on);
        let _watched = Watched(crate::sweep::block_on_started(self.config.seed));
        let mut future = pin!(future);
        {
            let mut st = self.state.borrow_mut();
            if !st.root_queued {
                st.root_queued = true;
                st.ready.push(ROOT_SLOT);
            }
        }
        let root_waker = waker::waker(self.id, ROOT_SLOT, 0);
        let step_limit = self.config.step_limit;
        loop {
            if self.failed.get() {
                let (class, message) = self
                    .failure
                    .borrow_mut()
                    .take()
                    .expect("a failed run has its failure");
                drop(_running);
                crate::sweep::set_failure_class(class);
                panic!("{message}");
            }
            // An event already due (a delivery at the current instant, a
            // timer set for now) fires before the next pick: it does not wait
            // for every task to be idle. The clock itself moves only when
            // nothing is ready.
            let due_now = self
                .state
                .borrow_mut()
                .events
                .next_deadline()
                .is_some_and(|deadline| deadline <= self.now_ns.get());
            if due_now {
                self.fire_due();
            }
            // Yielders run again once the tasks ready before them have.
            if !self.behind.borrow().is_empty() {
                let polls = self.behind_polls.get() + 1;
                self.behind_polls.set(polls);
                if self.state.borrow().ready.is_empty() || polls > BEHIND_POLLS_MAX {
                    self.release_behind();
                }
            }
            let over = {
                let mut st = self.state.borrow_mut();
                st.steps += 1;
                st.steps_at_instant += 1;
                if st.steps > step_limit {
                    Some(crate::sweep::FailureClass::StepLimit)
                } else if st.steps_at_instant > self.config.instant_step_limit {
                    Some(crate::sweep::FailureClass::Livelock)
                } else {
                    None
                }
            };
            if let Some(class) = over {
                drop(_running);
                let message = if class == crate::sweep::FailureClass::StepLimit {
                    self.step_limit_message()
                } else {
                    self.livelock_message()
                };
                crate::sweep::set_failure_class(class);
                panic!("{message}");
            }
            let next = {
                let mut st = self.state.borrow_mut();
                let st = &mut *st;
                if let Some(runnable) = self.runnable(&st.ready, &st.tasks) {
                    // Runtimes share the simulation and some ready tasks
                    // may not run now: pick among the others.
                    let index = match runnable.len() {
                        0 => None,
                        1 => Some(0),
                        _ => {
                            st.decisions += 1;
                            let (policy, rng) = (&mut st.policy, &mut st.sched_rng);
                            Some(if self.deciding.get() {
                                self.pick(&runnable, &st.tasks, || policy.choose(&runnable, rng))
                            } else {
                                policy.choose(&runnable, rng)
                            })
                        }
                    };
                    index.map(|i| {
                        let slot = runnable[i];
                        let at = st
                            .ready
                            .iter()
                            .position(|&s| s == slot)
                            .expect("a ready slot");
                        st.ready.remove(at)
                    })
                } else {
                    match st.ready.len() {
                        0 => None,
                        1 => st.ready.pop(),
                        _ if self.deciding.get() => {
                            st.decisions += 1;
                            let (policy, rng, ready) =
                                (&mut st.policy, &mut st.sched_rng, &st.ready);
                            let index = self.pick(ready, &st.tasks, || policy.choose(ready, rng));
                            Some(self.take_ready(&mut st.ready, index))
                        }
                        _ => {
                            st.decisions += 1;
                            let index = st.policy.choose(&st.ready, &mut st.sched_rng);
                            Some(st.ready.swap_remove(index))
                        }
                    }
                }
            };
            match next {
                Some(ROOT_SLOT) => {
                    self.state.borrow_mut().root_queued = false;
                    self.trace(EventKind::Poll, 0, Label::None);
                    let previous = self.current_task.replace(0);
                    self.budget.set(TASK_BUDGET);
                    let mut cx = Context::from_waker(&root_waker);
                    crate::sweep::poll_started(0, None);
                    let result = future.as_mut().poll(&mut cx);
                    crate::sweep::poll_finished();
                    self.current_task.set(previous);
                    if !self.deferred.borrow().is_empty() {
                        self.run_deferred();
                    }
                    if let Poll::Ready(output) = result {
                        self.state.borrow_mut().ready.retain(|&s| s != ROOT_SLOT);
                        self.trace.borrow_mut().flush();
                        return output;
                    }
                }
                Some(slot) => {
                    self.poll_task(slot);
                    self.charge_poll();
                }
                None => {
                    // The thread parks: the park hook runs first, and may
                    // make work (then the clock stays).
                    let hooks = self.hooks.borrow().clone();
                    if let Some(park) = &hooks.on_park {
                        park();
                        if !self.state.borrow().ready.is_empty() || !self.behind.borrow().is_empty()
                        {
                            if let Some(unpark) = &hooks.on_unpark {
                                unpark();
                            }
                            continue;
                        }
                    }
                    let advanced = self.advance_to_next_event();
                    if let Some(unpark) = &hooks.on_unpark {
                        unpark();
                    }
                    if !advanced {
                        let report = self.deadlock_report();
                        crate::sweep::set_failure_class(crate::sweep::FailureClass::Deadlock);
                        panic!("{report}");
                    }
                }
            }
        }
    }

    fn step_limit_message(&self) -> String {
        format!(
            "sim: step limit: {} polls without the root future finishing (virtual time {:?}, \
             seed {:#x}). Some task is likely spinning (yielding in a loop) so the clock can \
             never move. Raise the limit with {}=<count> if the run really needs more.\n{}",
            self.config.step_limit,
            Duration::from_nanos(self.now_ns.get()),
            self.config.seed,
            crate::config::STEP_LIMIT_VAR,
            self.pending_tasks_report().trim_end(),
        )
    }

    /// Charges one poll's cost to the clock, when polls have one
    /// (`SimConfig::poll_cost_max_ns`): work takes virtual time, so a timer
    /// can come due in the middle of it. Drawn from its own stream.
    #[inline]
    fn charge_poll(&self) {
        let max = self.config.poll_cost_max_ns;
        if max == 0 {
            return;
        }
        let cost = self.stream_below("poll cost", max + 1);
        if cost > 0 {
            self.set_now(self.now_ns.get() + cost);
        }
    }

    fn livelock_message(&self) -> String {
        format!(
            "sim: livelock: {} polls at virtual time {:?} without the clock moving (seed {:#x}). \
             Tasks keep waking each other (a retry or yield loop with no sleep), so no timer can \
             ever fire. Raise the limit with {}=<count> if the run really does that much work \
             in one instant.\n{}",
            self.config.instant_step_limit,
            Duration::from_nanos(self.now_ns.get()),
            self.config.seed,
            crate::config::INSTANT_STEP_LIMIT_VAR,
            self.pending_tasks_report().trim_end(),
        )
    }

    fn deadlock_report(&self) -> String {
        let mut out = format!(
            "sim: deadlock: the root future is waiting, but no task can run and no timer or \
             event is pending, so nothing can ever wake it (virtual time {:?}, seed {:#x}).\n",
            Duration::from_nanos(self.now_ns.get()),
            self.config.seed
        );
        out.push_str(&self.pending_tasks_report());
        out.push_str(&format!(
            "Each waits on something no one will ever signal (a channel whose sender is kept \
             alive, a lock never released, a Notify never notified). Replay with SIM_SEED={:#x}.",
            self.config.seed
        ));
        out
    }

    /// The pending tasks, each with its spawn site and (where the facade
    /// knows) what it waits for, where, and who holds it; at most 50.
    pub fn pending_tasks_report(&self) -> String {
        use std::fmt::Write;
        let ids: Vec<(u64, bool)> = {
            let st = self.state.borrow();
            let mut ids: Vec<(u64, bool)> = st
                .tasks
                .iter()
                .filter(|t| t.id != 0 && t.flags & DONE == 0)
                .map(|t| (t.id, t.owner != 0))
                .collect();
            ids.sort_unstable();
            ids
        };
        if ids.is_empty() {
            return "No spawned task is pending; the root future waits alone.\n".to_string();
        }
        let mut out = format!("Pending tasks ({}):\n", ids.len());
        for &(id, local) in ids.iter().take(50) {
            let _ = writeln!(
                out,
                "  {}{}",
                self.describe_task(id),
                if local {
                    " (a task of a LocalSet, which runs only while the LocalSet is driven)"
                } else {
                    ""
                }
            );
            if let Some(wait) = self.describe_wait(id) {
                let _ = writeln!(out, "    waits {wait}");
            }
        }
        if ids.len() > 50 {
            let _ = writeln!(out, "  ... and {} more", ids.len() - 50);
        }
        out
    }

    /// Cancels every task, drops every pending event, and reports the run.
    /// Called when the runtime is dropped or shut down; idempotent.
    pub fn shutdown(self: &Rc<Self>) {
        if self.shut_down.replace(true) {
            return;
        }
        let _enter = Enter::new(self.clone());
        drop(std::mem::take(&mut *self.behind.borrow_mut()));
        let stop = self.hooks.borrow_mut().on_stop.take();
        // A spawn after shutdown is refused below.
        self.cancel_live_tasks(|_| true);
        let actions = self.state.borrow_mut().events.clear();
        drop(actions);
        let cells: Vec<Box<dyn TaskCell>> = {
            let mut st = self.state.borrow_mut();
            st.ready.clear();
            st.tasks.iter_mut().filter_map(|t| t.cell.take()).collect()
        };
        drop(cells);
        self.trace(EventKind::End, 0, Label::None);
        self.logs.borrow_mut().take();
        let summary = {
            let mut trace = self.trace.borrow_mut();
            trace.flush();
            RunSummary {
                seed: self.config.seed,
                events: trace.len(),
                end_ns: self.now_ns.get(),
                trace_hash: trace.hash_hex(),
                decisions: self.state.borrow().decisions,
            }
        };
        if self.run_name == "main" || crate::sweep::verbose() {
            crate::seed::report(
                &self.run_name,
                &summary,
                self.trace.borrow().path(),
                self.config.policy,
            );
        }
        crate::sweep::run_finished(&summary);
        let recorded = self.decisions.borrow_mut().as_mut().and_then(|d| d.write());
        if let Some(path) = recorded {
            if self.run_name == "main" || crate::sweep::verbose() {
                eprintln!("sim: decisions recorded to {}", path.display());
            }
        }
        let recent = self.trace.borrow().recent_lines();
        LAST_RECENT.with(|r| *r.borrow_mut() = recent);
        LAST_SUMMARY.with(|s| *s.borrow_mut() = Some(summary));
        if let Some(stop) = stop {
            stop();
        }
    }

    /// Shuts the runtime down and removes it from the thread's registry.
    pub fn close(id: u16) {
        if let Some(core) = context::unregister(id) {
            core.shutdown();
        }
    }

    /// Whether this runtime was shut down.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down.get()
    }
}

/// Queues the outer root future again when a nested `block_on` ends.
struct OuterRoot<'a>(&'a Core);

impl Drop for OuterRoot<'_> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.0.state.try_borrow_mut() {
            st.ready.retain(|&s| s != ROOT_SLOT);
            st.root_queued = true;
            st.ready.push(ROOT_SLOT);
        }
    }
}

/// Puts the previous node back when a poll ends (also on an early return).
struct RestoreNode<'a>(&'a StdCell<u32>, u32);

/// Counts a `block_on` of the current scope's runtime while it runs.
pub(crate) struct ScopeDriving<'a>(&'a Core, u16);

impl<'a> ScopeDriving<'a> {
    pub(crate) fn new(core: &'a Core) -> ScopeDriving<'a> {
        let scope = core.current_scope.get();
        core.scopes.borrow_mut()[usize::from(scope)].driving += 1;
        ScopeDriving(core, scope)
    }
}

impl Drop for ScopeDriving<'_> {
    fn drop(&mut self) {
        if let Ok(mut scopes) = self.0.scopes.try_borrow_mut() {
            scopes[usize::from(self.1)].driving -= 1;
        }
    }
}

/// Puts the previous runtime scope back after a task's poll.
struct RestoreScope<'a>(&'a Core, u16);

impl Drop for RestoreScope<'_> {
    fn drop(&mut self) {
        self.0.set_scope(self.1);
    }
}

impl Drop for RestoreNode<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

/// Tells the watchdog (`sweep.rs`) when a `block_on` ends, also by panic.
struct Watched(bool);

impl Drop for Watched {
    fn drop(&mut self) {
        crate::sweep::block_on_ended(self.0);
    }
}

/// Sets a flag until dropped, then puts back what it was (a nested
/// `block_on` leaves the outer one's flag set).
struct Flag<'a>(&'a StdCell<bool>, bool);

impl<'a> Flag<'a> {
    fn set(cell: &'a StdCell<bool>) -> Flag<'a> {
        Flag(cell, cell.replace(true))
    }
}

impl Drop for Flag<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}

/// Reads a finished task's output: a helper for typed join handles.
pub fn new_output<T>() -> Output<T> {
    None
}
