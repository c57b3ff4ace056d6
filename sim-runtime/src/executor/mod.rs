//! The core: one simulation, made of parts, and the loop that drives them.
//!
//! [`Core`] owns the parts and wires them together; each part is a type of
//! its own with its own state:
//! - the scheduler ([`crate::scheduler`]): the ready set and the policies;
//! - time ([`crate::time`]): the virtual clock, each host's clock and the
//!   one event queue;
//! - tasks (`task/table.rs`): slots, names, spawn sites, wait notes;
//! - scopes ([`crate::scopes`]): the runtimes sharing the simulation;
//! - hosts ([`crate::hosts`]): the running code's host, crash listeners;
//! - streams (`streams.rs`) and the trace ([`crate::trace`]).
//!
//! The loop is in `run.rs` ([`Core::block_on`]): events due now fire; a
//! ready task is picked and polled; otherwise the clock jumps to the next
//! event; otherwise nothing can ever happen again (a deadlock). The rest of
//! `Core`'s impl is wiring, one file per concern: `build.rs` (a run's
//! start and end), `spawn.rs` (tasks and local sets), `timers.rs`,
//! `draws.rs` (the seed's streams and the decision log), `report.rs`
//! (failure reports), `waker.rs` (wakers), `work_time.rs` (what polls
//! and reads of the clock cost in virtual time) and `context.rs` (which
//! simulation a thread is in).

mod background;
mod build;
pub mod context;
mod draws;
mod report;
mod run;
mod spawn;
mod timers;
mod waker;
mod work_time;

pub use background::block_in_background;
pub use run::ScopeDriving;

use crate::config::SimConfig;
use crate::failure::FailureClass;
use crate::hosts::{CrashListener, Hosts};
use crate::scheduler::{SchedulePolicy, Scheduler};
use crate::scopes::{Flavor, RuntimeOptions, Scopes};
use crate::seams::{DecisionLog, RunObserver};
use crate::story::Told;
use crate::streams::Streams;
use crate::task::table::{Tasks, WakerCounts};
use crate::task::wait::WaitNote;
use crate::time::host_clock::NodeClock;
use crate::time::Time;
use crate::trace::{EventKind, Label, Trace};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// How many polls of resources a task may make before it is made to yield
/// (tokio's cooperative budget has the same size).
pub const TASK_BUDGET: u32 = 128;

/// `Core::polling_slot` when no task is being polled (nor when the root
/// future is: its waits are not kept).
const NOT_POLLING: u32 = u32::MAX;

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

/// What runs after each scheduled callback, with its label (see
/// [`Core::set_after_call`]).
pub type AfterCall = Rc<dyn Fn(&'static str)>;

/// What a task waits on, for reports (see [`Core::set_wait_describer`]).
pub type WaitDescriber = Rc<dyn Fn(u64) -> Option<String>>;

/// One simulation.
pub struct Core {
    id: u16,
    config: SimConfig,

    // ----- the parts -----
    scheduler: RefCell<Scheduler>,
    tasks: RefCell<Tasks>,
    /// Apart from `tasks`: a waker may be cloned while the table is
    /// borrowed.
    waker_counts: RefCell<WakerCounts>,
    time: Time,
    scopes: Scopes,
    hosts: Hosts,
    streams: RefCell<Streams>,
    trace: RefCell<Trace>,

    // ----- the running poll -----
    /// The id of the task being polled, or 0 for the root future (or none).
    current_task: Cell<u64>,
    current_local: Cell<u32>,
    budget: Cell<u32>,
    unconstrained: Cell<bool>,
    /// The first wait the running poll noted, and how many more.
    /// The slot of the task being polled (`NOT_POLLING` for none, or the
    /// root future): what it notes it waits on goes straight into its
    /// entry of the task table (a note is about 100 bytes: copied through
    /// the poll, it cost more than the rest of the poll's bookkeeping).
    polling_slot: Cell<u32>,

    // ----- the loop -----
    /// Whether some runtime of the simulation has workers (`scheduler`).
    workers: Cell<bool>,
    in_block_on: Cell<bool>,
    /// The loop runs in the background of a thread blocked outside
    /// `block_on` (`background.rs`).
    background: Cell<bool>,
    /// Set when that drive found nothing in the simulation to do.
    background_idle: Cell<bool>,
    /// Woken when any task finishes (a shutdown waiting for the blocking
    /// pool's closures).
    finish_waiters: RefCell<Vec<std::task::Waker>>,
    shut_down: Cell<bool>,
    /// Polls so far (the step limit).
    steps: Cell<u64>,
    /// Polls since an event last moved the clock (the livelock limit; a
    /// poll's own cost, `charge_work`, is not one).
    steps_at_instant: Cell<u64>,
    /// Salts the cost of a poll on a clock that is not paused
    /// (`run.rs`, `charge_work`), from the seed.
    work_salt: u64,
    /// The runtime (scope) and worker of the latest poll, which its cost
    /// is charged to.
    polled_by: Cell<(u16, u16)>,
    /// The virtual ns each worker spent polling, by scope then worker
    /// (`RuntimeMetrics::worker_total_busy_duration`).
    busy_ns: RefCell<Vec<Vec<u64>>>,
    /// Set by [`Core::fail_run`]: the loop stops at its next turn.
    failed: Cell<bool>,
    failure: RefCell<Option<(FailureClass, String)>>,
    /// Calls to make after the current poll (see [`Core::defer`]).
    deferred: RefCell<Vec<Box<dyn FnOnce()>>>,

    // ----- the layers above (seams) and the runtime's hooks -----
    /// The decision log, when the run records or replays one.
    decisions: RefCell<Option<Box<dyn DecisionLog>>>,
    deciding: Cell<bool>,
    replaying: Cell<bool>,
    /// Who hears how the run ended.
    observer: Option<Box<dyn RunObserver>>,
    /// What the OS layer keeps for the run (the `tracing` capture).
    os_guard: RefCell<Option<Box<dyn Any>>>,
    hooks: RefCell<RuntimeHooks>,
    /// Called after every scheduled callback (see [`Core::set_after_call`]).
    after_call: RefCell<Option<AfterCall>>,
    /// What a failure report tells of the run (its notes, faults,
    /// messages and tasks): shared with the hang watchdog.
    story: crate::story::SharedStory,
    /// The story's record of each task's origin, written at each spawn
    /// without the story's lock, and the last origin recorded.
    origins: std::sync::Arc<crate::story::Origins>,
    last_origin: Cell<crate::story::LastOrigin>,
    /// Whether a callback of the simulation runs (a delivery, a fault):
    /// its notes are not a task's.
    calling: Cell<bool>,
    wait_describer: RefCell<Option<WaitDescriber>>,
    /// State of subsystems above the runtime (the network), one value per
    /// type, created on first use.
    /// Each extension with its type, compared without a virtual call.
    extensions: RefCell<Vec<(std::any::TypeId, Rc<dyn Any>)>>,
}

impl Core {
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
        self.scopes.options().flavor
    }

    /// Whether this is a `LocalRuntime`.
    pub fn is_local_runtime(&self) -> bool {
        self.scopes.options().local
    }

    /// Whether timers were enabled (`Builder::enable_time`).
    #[inline]
    pub fn time_enabled(&self) -> bool {
        self.scopes.options().enable_time
    }

    /// Whether sockets were enabled (`Builder::enable_io`).
    #[inline]
    pub fn io_enabled(&self) -> bool {
        self.scopes.options().enable_io
    }

    /// Takes the options of the runtime that adopts this core: one made
    /// before any runtime (for a `LocalSet` used first outside one), now
    /// taken by the runtime built next on its thread.
    pub fn adopt_options(&self, options: RuntimeOptions) {
        self.scopes.adopt(options);
        self.time.set_paused(options.start_paused);
        self.add_workers(0, options);
    }

    /// Gives harness host `node` `count` simulated workers of its own: a
    /// host is a process, and a production process runs a `multi_thread`
    /// runtime. Its tasks run on them from now on.
    pub fn add_host_workers(&self, node: u32, count: u16) {
        self.scheduler.borrow_mut().add_host_workers(node, count);
        self.workers.set(true);
    }

    /// Gives a `multi_thread` runtime (scope `scope`) its workers.
    fn add_workers(&self, scope: u16, options: RuntimeOptions) {
        if options.flavor == Flavor::MultiThread && options.workers > 0 {
            self.scheduler
                .borrow_mut()
                .add_workers(scope, options.workers);
            self.workers.set(true);
        }
    }

    /// Sets the runtime's hooks.
    pub fn set_hooks(&self, hooks: RuntimeHooks) {
        *self.hooks.borrow_mut() = hooks;
    }

    /// Whether a `block_on` is running on this runtime.
    pub fn in_block_on(&self) -> bool {
        self.in_block_on.get()
    }

    /// Whether this runtime was shut down.
    pub fn is_shut_down(&self) -> bool {
        self.shut_down.get()
    }

    // ----- runtime scopes (see `crate::scopes`) --------------------------------

    /// Adds a runtime to this simulation, as a scope: a runtime built while
    /// this one is alive on the thread shares its clock, its one event
    /// queue, its trace, network and disks.
    pub fn add_scope(&self, options: RuntimeOptions) -> u16 {
        let scope = self.scopes.add(options);
        self.add_workers(scope, options);
        scope
    }

    /// The runtime scope of the running code.
    #[inline]
    pub fn current_scope(&self) -> u16 {
        self.scopes.current()
    }

    /// Makes `scope` current (its options answer `flavor`, `time_enabled`,
    /// ...); returns the previous one.
    pub fn set_scope(&self, scope: u16) -> u16 {
        self.scopes.set(scope)
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
    #[inline]
    pub fn scope_shut_down(&self, scope: u16) -> bool {
        self.shut_down.get() || self.scopes.is_shut_down(scope)
    }

    /// How many of the simulation's runtimes are alive.
    pub fn live_scopes(&self) -> usize {
        self.scopes.live()
    }

    /// How many tasks of `scope` are alive.
    pub fn scope_live_tasks(&self, scope: u16) -> usize {
        if !self.scopes.multi() {
            return self.live_tasks();
        }
        self.tasks.borrow().count_unfinished(|t| t.scope == scope)
    }

    // ----- hosts (see `crate::hosts`) ------------------------------------------

    /// The node (simulated host) of the running task; 0 outside tasks.
    #[inline]
    pub fn current_node(&self) -> u32 {
        self.hosts.current()
    }

    /// Makes `node` the running code's host; returns the previous one (a
    /// simulated thread's turn puts it back).
    pub fn set_node(&self, node: u32) -> u32 {
        self.hosts.set_current(node)
    }

    /// Runs `f` as if on `node` (for code that acts for a host outside its
    /// tasks, such as a restart).
    pub fn with_node<R>(&self, node: u32, f: impl FnOnce() -> R) -> R {
        let previous = self.hosts.set_current(node);
        let result = f();
        self.hosts.set_current(previous);
        result
    }

    /// Registers `listener` to run on every [`Core::crash_node`], after the
    /// node's tasks are gone (so their handles are dropped first).
    pub fn on_node_crash(&self, listener: CrashListener) {
        self.hosts.on_crash(listener);
    }

    /// Names host `node` in the trace file's lines.
    pub fn set_node_name(&self, node: u32, name: &str) {
        self.trace.borrow_mut().set_node_name(node, name);
        self.with_story(|story| story.name_node(node, name));
    }

    /// Names the host at `ip` in messages' text (see `trace::Message`).
    pub fn name_address(&self, ip: std::net::IpAddr, name: &str) {
        self.trace.borrow_mut().name_address(ip, name);
        self.with_story(|story| story.name_address(ip, name));
    }

    /// `addr` as the trace shows it (`name:port` for a named host).
    pub fn describe_address(&self, addr: &std::net::SocketAddr) -> String {
        self.trace.borrow().describe_address(addr)
    }

    // ----- time (see `crate::time`) ----------------------------------------------

    /// The virtual time, in ns since the start of the run.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.time.now_ns()
    }

    /// The `std::time::Instant` at virtual time zero.
    #[inline]
    pub fn base_instant(&self) -> std::time::Instant {
        self.time.base_instant()
    }

    /// The virtual time each worker of runtime `scope` spent polling, by
    /// worker (the root future's polls count for worker 0; a worker past
    /// the end has not polled).
    pub fn busy_ns(&self, scope: u16) -> Vec<u64> {
        let busy = self.busy_ns.borrow();
        busy.get(usize::from(scope)).cloned().unwrap_or_default()
    }

    /// How many times the scheduler went idle and moved the clock.
    pub fn parks(&self) -> u64 {
        self.time.parks()
    }

    /// Whether `time::pause` is in force.
    pub fn is_paused(&self) -> bool {
        self.time.is_paused()
    }

    /// Sets the paused flag (for `time::pause` and `time::resume`).
    pub fn set_paused(&self, paused: bool) {
        self.time.set_paused(paused);
    }

    /// Sets `node`'s clock offsets from now on.
    pub fn set_node_clock(&self, node: u32, clock: NodeClock) {
        self.time.set_host_clock(node, clock);
    }

    /// `node`'s clock offsets.
    pub fn node_clock(&self, node: u32) -> NodeClock {
        self.time.host_clock(node)
    }

    /// What the current node's monotonic clock reads, in ns from the run's
    /// start, at the current true time.
    #[inline]
    pub fn local_now_ns(&self) -> u64 {
        self.time.local_now_ns(self.hosts.current())
    }

    /// The true time at which the current node's monotonic clock reads
    /// `local_ns` (for timers set from a node's `Instant`s).
    #[inline]
    pub fn true_ns_of_local(&self, local_ns: u64) -> u64 {
        self.time.true_ns_of_local(self.hosts.current(), local_ns)
    }

    /// How far the current node's wall clock is off true time, in ns.
    #[inline]
    pub fn wall_offset_ns(&self) -> i64 {
        self.time.wall_offset_ns(self.hosts.current())
    }

    // ----- the trace ------------------------------------------------------------

    /// Records an event in the trace.
    #[inline]
    pub fn trace(&self, kind: EventKind, task: u64, label: Label<'_>) {
        self.trace
            .borrow_mut()
            .record(self.time.now_ns(), kind, task, label);
        if kind == EventKind::Note {
            self.tell_story(task, label);
        }
    }

    /// Tells the story a note (see the story module).
    fn tell_story(&self, task: u64, label: Label<'_>) {
        let number;
        let told = match label {
            Label::Str(text) => Told::Text(text),
            Label::Msg(message) => Told::Message(message),
            Label::Num(n) => {
                number = n.to_string();
                Told::Text(&number)
            }
            Label::None | Label::Timer { .. } => return,
        };
        self.with_story(|story| {
            story.tell(
                self.time.now_ns(),
                self.hosts.current(),
                self.note_task(task),
                told,
            )
        });
    }

    /// The task a note is by: none for a callback of the simulation.
    fn note_task(&self, task: u64) -> u64 {
        if self.calling.get() {
            crate::story::BY_CALLBACK
        } else {
            task
        }
    }

    /// Records a fault as a note (`partition a->b`), and the hosts it
    /// touched: a failure report names the last faults of the failing
    /// host and its peers, however long before.
    pub fn note_fault(&self, hosts: &[u32], text: &str) {
        let task = self.current_task.get();
        self.trace
            .borrow_mut()
            .record(self.time.now_ns(), EventKind::Note, task, Label::Str(text));
        self.with_story(|story| {
            story.tell(
                self.time.now_ns(),
                self.hosts.current(),
                self.note_task(task),
                Told::Fault(text, hosts),
            )
        });
    }

    /// A message a link holds, with its payload, for failure reports (its
    /// note says only its number and ends).
    pub fn story_held(
        &self,
        msg: u64,
        ends: (std::net::SocketAddr, std::net::SocketAddr),
        data: &[u8],
    ) {
        self.with_story(|story| story.held(self.time.now_ns(), msg, ends, data));
    }

    /// Runs `f` on the story; `None` once the hang watchdog froze it to
    /// write its report (the process ends then).
    #[inline]
    fn with_story<R>(&self, f: impl FnOnce(&mut crate::story::Story) -> R) -> Option<R> {
        self.story.with(f)
    }

    /// The story of the run so far, for a failure report: the last notes,
    /// the earlier faults of the failing task's host and its peers, the
    /// held messages and the last crashes (empty when nothing was noted).
    pub fn story_report(&self) -> String {
        let failing = self.hosts.current();
        self.with_story(|story| story.report(Some(failing)))
            .unwrap_or_default()
    }

    /// The last crashes, each with its host's last disk operations and
    /// what its disk kept.
    pub fn crash_lines(&self) -> Vec<String> {
        self.with_story(|story| story.crash_lines())
            .unwrap_or_default()
    }

    /// Task `id` by the name a user finds: its `Builder` name or its
    /// spawn site (`src/client.rs:40`).
    pub fn task_name(&self, id: u64) -> Option<String> {
        self.with_story(|story| story.task_name(id)).flatten()
    }

    /// Writes a line of the service's log into the trace file (not an
    /// event: the hash does not cover it).
    pub fn trace_log(&self, text: &str) {
        if let Ok(mut trace) = self.trace.try_borrow_mut() {
            trace.log(self.time.now_ns(), self.current_task.get(), text);
        }
    }

    /// The SHA-256 of the trace so far.
    pub fn trace_hash(&self) -> String {
        self.trace.borrow().hash_hex()
    }

    // ----- the running task -------------------------------------------------------

    /// The id of the task being polled, or 0 for the root future (or none).
    #[inline]
    pub fn current_task(&self) -> u64 {
        self.current_task.get()
    }

    /// How many tasks (and the root future) are queued to run.
    pub fn ready_count(&self) -> usize {
        self.scheduler.borrow().ready_len()
    }

    /// How many turns the loop took so far (polls of tasks and of the root
    /// future, and idle turns).
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    /// How many tasks are alive (spawned, not yet finished and freed).
    pub fn live_tasks(&self) -> usize {
        self.tasks.borrow().live()
    }

    /// The running task waits on `note` (a primitive returning `Pending`
    /// says so). The first note of a poll is kept, the others counted.
    #[inline]
    pub fn note_wait(&self, note: WaitNote) {
        let slot = self.polling_slot.get();
        if slot == NOT_POLLING {
            return;
        }
        self.tasks.borrow_mut().note_wait(slot, note);
    }

    /// The running task yields (`tokio::task::yield_now`): see
    /// [`Scheduler::yielded`] (on a worker, behind that worker's tasks).
    pub fn yield_task(&self, waker: &Waker) {
        self.scheduler.borrow_mut().yielded(waker);
    }

    /// Replaces the scheduling policy.
    pub fn set_policy(&self, policy: Box<dyn SchedulePolicy>) {
        self.scheduler.borrow_mut().set_policy(policy);
    }

    /// Runs `f` right after the current poll (of a task or the root
    /// future) returns: a check that needs the task parked.
    pub fn defer(&self, f: Box<dyn FnOnce()>) {
        self.deferred.borrow_mut().push(f);
    }

    /// Runs the deferred calls.
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

    // ----- cooperative budget -------------------------------------------------

    /// Spends one unit of the task's budget, or makes it yield when the
    /// budget is spent: as `yield_now`, behind every task that is ready
    /// (tokio defers the wake the same way), so the tasks it kept waiting
    /// run first under every policy, PCT's priorities included.
    #[inline]
    pub fn poll_budget(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.unconstrained.get() {
            return Poll::Ready(());
        }
        let budget = self.budget.get();
        if budget == 0 {
            self.scheduler.borrow_mut().yielded(cx.waker());
            return Poll::Pending;
        }
        self.budget.set(budget - 1);
        Poll::Ready(())
    }

    /// Gives back one unit of budget (an operation that spent it made no
    /// progress after all).
    #[inline]
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

    // ----- the layers above ---------------------------------------------------

    /// The per-simulation value of type `T`, made by `init` on first use.
    #[inline]
    pub fn extension<T: 'static>(&self, init: impl FnOnce() -> T) -> Rc<T> {
        // Hot (every socket call finds the network here): the types are
        // compared as plain values, and only the match is cloned.
        let wanted = std::any::TypeId::of::<T>();
        if let Some((_, found)) = self.extensions.borrow().iter().find(|(t, _)| *t == wanted) {
            let raw = Rc::into_raw(found.clone()).cast::<T>();
            // SAFETY: the entry's type id is `T`'s, so the value is a `T`:
            // the pointer is the same allocation, typed as what it holds.
            return unsafe { Rc::from_raw(raw) };
        }
        let value = Rc::new(init());
        self.extensions
            .borrow_mut()
            .push((wanted, value.clone() as Rc<dyn Any>));
        value
    }

    /// Fails the run: `block_on` panics with `message` at its next turn,
    /// outside any task (a panic inside a task would only fail that task).
    /// The first failure wins.
    pub fn fail_run(&self, class: FailureClass, message: String) {
        if !self.failed.replace(true) {
            *self.failure.borrow_mut() = Some((class, message));
        }
    }

    /// Sets what runs after every scheduled callback (a network delivery, a
    /// fault, a disk completion): the harness checks its invariants there.
    pub fn set_after_call(&self, hook: Option<AfterCall>) {
        *self.after_call.borrow_mut() = hook;
    }

    /// Sets what failure reports ask about each pending task: what it
    /// waits on, and where (the facade's lock and wait registry).
    pub fn set_wait_describer(&self, describer: WaitDescriber) {
        *self.wait_describer.borrow_mut() = Some(describer);
    }
}
