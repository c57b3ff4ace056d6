//! A run's start and end: building a core from its configuration and the
//! layers' seams, and shutting it (or one of its runtimes) down.

use super::context::{self, Enter};
use super::{Core, RuntimeHooks, NOT_POLLING, TASK_BUDGET};
use crate::config::{Policy, SimConfig};
use crate::hosts::Hosts;
use crate::rng::Rng;
use crate::scheduler::{Fifo, Pct, SchedulePolicy, Scheduler, UniformRandom};
use crate::scopes::{RuntimeOptions, Scopes};
use crate::seams::{os_layer, RunEnd, Setup};
use crate::streams::Streams;
use crate::summary::{set_last_run, RunSummary};
use crate::task::table::{Tasks, WakerCounts};
use crate::task::TaskCell;
use crate::time::Time;
use crate::trace::{EventKind, Label, Trace};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

impl Core {
    /// Builds a simulation from its configuration and what the layers above
    /// give it (the launch layer, `launch.rs`, assembles `setup` from the environment),
    /// and registers it with this thread.
    pub fn new(config: SimConfig, options: RuntimeOptions, setup: Setup) -> Rc<Core> {
        let seed = config.seed;
        // A run starts unbranched (a branch run's points come as it goes).
        crate::rng::reset_branch();
        let policy: Box<dyn SchedulePolicy> = match config.policy {
            Policy::Random => Box::new(UniformRandom),
            Policy::Pct { depth, horizon } => Box::new(Pct::new(seed, depth, horizon)),
            Policy::Fifo => Box::new(Fifo::default()),
        };
        let Setup {
            trace_path,
            decisions,
            observer,
        } = setup;
        let origins = std::sync::Arc::new(crate::story::Origins::default());
        let story = crate::story::Story::shared(origins.clone());
        let core = Rc::new(Core {
            id: context::next_core_id(),
            scheduler: RefCell::new(Scheduler::new(
                Rng::new(seed, 1),
                Rng::named(seed, "worker stalls"),
                policy,
            )),
            tasks: RefCell::new(Tasks::new()),
            waker_counts: RefCell::new(WakerCounts::default()),
            time: Time::new(options.start_paused),
            scopes: Scopes::new(options),
            hosts: Hosts::default(),
            streams: RefCell::new(Streams::new(seed)),
            trace: RefCell::new(Trace::new(trace_path)),
            current_task: Cell::new(0),
            current_local: Cell::new(0),
            budget: Cell::new(TASK_BUDGET),
            unconstrained: Cell::new(false),
            polling_slot: Cell::new(NOT_POLLING),
            workers: Cell::new(false),
            in_block_on: Cell::new(false),
            background: Cell::new(false),
            background_idle: Cell::new(false),
            finish_waiters: RefCell::new(Vec::new()),
            shut_down: Cell::new(false),
            steps: Cell::new(0),
            steps_at_instant: Cell::new(0),
            work_salt: crate::rng::child_seed(seed, "work time"),
            polled_by: Cell::new((0, 0)),
            busy_ns: RefCell::new(Vec::new()),
            failed: Cell::new(false),
            failure: RefCell::new(None),
            deferred: RefCell::new(Vec::new()),
            deciding: Cell::new(decisions.is_some()),
            replaying: Cell::new(decisions.as_ref().is_some_and(|d| d.replaying())),
            decisions: RefCell::new(decisions),
            observer,
            os_guard: RefCell::new(None),
            hooks: RefCell::new(RuntimeHooks::default()),
            after_call: RefCell::new(None),
            story,
            origins,
            last_origin: Cell::new(crate::story::LastOrigin::default()),
            calling: Cell::new(false),
            wait_describer: RefCell::new(None),
            extensions: RefCell::new(Vec::new()),
            config,
        });
        // The std clock of a simulation build reads the virtual clock while
        // a runtime is current: take the base `Instant` that way, so that
        // tokio's `Instant` and std's agree and neither holds wall time.
        let core = {
            let enter = Enter::new(core.clone());
            let base = std::time::Instant::now();
            drop(enter);
            let mut core = core;
            Rc::get_mut(&mut core)
                .expect("the new core is not shared yet")
                .time
                .set_base_instant(base);
            core
        };
        core.add_workers(0, options);
        core.trace(EventKind::Start, 0, Label::Num(seed));
        if let Some(os) = os_layer() {
            let trace_file = core.trace.borrow().path().is_some();
            *core.os_guard.borrow_mut() = os.run_started(trace_file);
        }
        context::register(core.clone());
        core
    }

    /// Shuts one runtime of the simulation down: its tasks are cancelled at
    /// once; the others' run on. (The last one's drop shuts the simulation
    /// down: `Core::close`.)
    pub fn shutdown_scope(self: &Rc<Self>, scope: u16) {
        if !self.scopes.shut_down(scope) {
            return;
        }
        let _enter = Enter::new(self.clone());
        // A spawn onto a shut-down runtime is cancelled at once. The tasks
        // are dropped in their runtime's scope (a drop may ask for
        // `Handle::current`).
        self.with_scope(scope, || self.cancel_live_tasks(|t| t.scope == scope));
    }

    /// Cancels every task, drops every pending event, and reports the run.
    /// Called when the runtime is dropped or shut down; idempotent.
    pub fn shutdown(self: &Rc<Self>) {
        if self.shut_down.replace(true) {
            return;
        }
        let _enter = Enter::new(self.clone());
        let yielders = self.scheduler.borrow_mut().take_yielders();
        drop(yielders);
        let stop = self.hooks.borrow_mut().on_stop.take();
        // A spawn after shutdown is refused below.
        self.cancel_live_tasks(|_| true);
        let actions = self.time.clear();
        drop(actions);
        self.scheduler.borrow_mut().clear_ready();
        // Outputs a join handle has yet to read outlive the runtime.
        let unread = self.tasks.borrow_mut().take_unread_outputs();
        for (id, cell) in unread {
            crate::task::orphans::keep(self.id, id, cell);
        }
        let cells: Vec<Box<dyn TaskCell>> = self.tasks.borrow_mut().take_cells();
        drop(cells);
        self.trace(EventKind::End, 0, Label::None);
        self.os_guard.borrow_mut().take();
        let summary = {
            let mut trace = self.trace.borrow_mut();
            trace.flush();
            RunSummary {
                seed: self.config.seed,
                events: trace.len(),
                end_ns: self.time.now_ns(),
                trace_hash: trace.hash_hex(),
                decisions: self.scheduler.borrow().decisions(),
            }
        };
        let decisions_path = self
            .decisions
            .borrow_mut()
            .as_mut()
            .and_then(|d| d.finish());
        if let Some(observer) = &self.observer {
            let trace = self.trace.borrow();
            let properties = crate::property::reached(self);
            observer.run_finished(&RunEnd {
                summary: &summary,
                trace_path: trace.path(),
                policy: self.config.policy,
                decisions_path: decisions_path.as_deref(),
                properties: &properties,
            });
        }
        // Kept undecoded: only a failure reported after the run reads it.
        let report = crate::summary::LastRunReport {
            recent: self.trace.borrow().recent_snapshot(),
            story: self.story.clone(),
            failing_host: self.hosts.current(),
        };
        set_last_run(summary, report);
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
}
