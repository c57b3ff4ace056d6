//! The loop: [`Core::block_on`] is the whole scheduler.
//!
//! 1. Events already due at the current instant fire, in the order they
//!    were scheduled (they do not wait for the tasks to go idle).
//! 2. If some task is ready, the scheduler picks one (by default uniformly,
//!    from the seeded generator) and it is polled. A wake only queues a
//!    task; nothing is polled inline.
//! 3. Otherwise the clock jumps to the earliest pending event and every
//!    event due then fires, in the order it was scheduled.
//! 4. Otherwise nothing can ever happen again: a deadlock, reported with
//!    every pending task.
//!
//! Every step is recorded in the trace.

use super::context::{self, Enter};
use super::waker;
use super::{Core, TASK_BUDGET};
use crate::events::{Action, FETCH_AHEAD_EVENTS_MIN};
use crate::failure::{set_failure_class, FailureClass};
use crate::seams::os_layer;
use crate::task::{ABORT, DONE, QUEUED, ROOT_SLOT, RUNNING, THREAD};
use crate::trace::{EventKind, Label};
use crate::watch;
use std::cell::Cell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

/// How long a run out of work waits for a real thread's wake, in steps of
/// [`REAL_THREAD_WAIT_STEP`]: two seconds of real time at most.
const REAL_THREAD_WAITS_MAX: u32 = 2_000;
/// One step of that wait.
const REAL_THREAD_WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(1);

impl Core {
    /// Runs the simulation until `future` completes.
    ///
    /// # Panics
    /// On a deadlock, at the time limit, at the step limit, and when called
    /// inside a runtime.
    pub fn block_on<F: Future>(self: &Rc<Self>, future: F) -> F::Output {
        // On a simulated OS thread, the thread waits for its future while
        // the simulation runs on (the OS layer's threads).
        if let Some(os) = os_layer().filter(|os| os.on_sim_thread()) {
            let mut output = None;
            {
                let wrapped = pin!(async {
                    output = Some(future.await);
                });
                os.block_on_thread(self.id, wrapped as Pin<&mut dyn Future<Output = ()>>);
            }
            return output.expect("a thread's block_on returns once its future completed");
        }
        self.block_on_here(future, true)
    }

    /// Blocks on `future` as the runtime `scope`: the root future runs in
    /// that scope, and that runtime's `current_thread` tasks may run.
    pub fn block_on_in<F: Future>(self: &Rc<Self>, scope: u16, future: F) -> F::Output {
        let previous = self.set_scope(scope);
        let _restore = RestoreScope(self, previous);
        self.block_on(future)
    }

    /// Raises the run's failure ([`Core::fail_run`]) as the panic
    /// `block_on` ends with, its class set for the sweep.
    fn raise_failure(&self) -> ! {
        let (class, message) = self
            .failure
            .borrow_mut()
            .take()
            .expect("a failed run has its failure");
        set_failure_class(class);
        panic!("{message}");
    }

    /// [`Core::block_on`] on the simulator's own thread. `drive_scope`: the
    /// current scope's runtime is blocked on (its `current_thread` tasks
    /// may run); false for a drive in the background (`background.rs`).
    pub(super) fn block_on_here<F: Future>(
        self: &Rc<Self>,
        future: F,
        drive_scope: bool,
    ) -> F::Output {
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
        // tasks may run (see `Scheduler::next`).
        let _scope_driving = drive_scope.then(|| ScopeDriving::new(self));
        // Re-entered from a blocking section of one of its own tasks: this
        // call's future is the root until it returns; the outer root is
        // queued again then (a spare wake is harmless).
        let _outer = self.in_block_on.get().then(|| {
            self.scheduler.borrow_mut().unqueue_root();
            OuterRoot(self)
        });
        let _enter = Enter::new(self.clone());
        let _running = Flag::set(&self.in_block_on);
        let _watched = Watched(watch::block_on_started(
            self.config.seed,
            self.time.now_ns(),
        ));
        watch::run_story(&self.story);
        let mut future = pin!(future);
        self.scheduler.borrow_mut().queue_root();
        let root_waker = waker::waker(self.id, ROOT_SLOT, 0);
        loop {
            if self.failed.get() {
                drop(_running);
                self.raise_failure();
            }
            // An event already due (a delivery at the current instant, a
            // timer set for now) fires before the next pick: it does not wait
            // for every task to be idle. The clock itself moves only when
            // nothing is ready.
            if self.time.due_now() {
                self.fire_due();
            }
            // Yielders run again once the tasks ready before them have.
            let yielders = self.scheduler.borrow_mut().yielders_due();
            for waker in yielders {
                waker.wake();
            }
            if self.workers.get() {
                self.release_worker_yielders();
            }
            if let Some(class) = self.count_step() {
                drop(_running);
                let message = if class == FailureClass::StepLimit {
                    self.step_limit_message()
                } else {
                    self.livelock_message()
                };
                set_failure_class(class);
                panic!("{message}");
            }
            match self.next_ready() {
                Some(ROOT_SLOT) => {
                    self.scheduler.borrow_mut().root_polled();
                    self.polled_by.set((self.scopes.current(), 0));
                    self.trace(EventKind::Poll, 0, Label::None);
                    let previous = self.current_task.replace(0);
                    self.budget.set(TASK_BUDGET);
                    let mut cx = Context::from_waker(&root_waker);
                    watch::poll_started(0, None);
                    let result = future.as_mut().poll(&mut cx);
                    watch::poll_finished();
                    self.current_task.set(previous);
                    if !self.deferred.borrow().is_empty() {
                        self.run_deferred();
                    }
                    self.charge_busy();
                    self.charge_poll(true);
                    if let Poll::Ready(output) = result {
                        self.scheduler.borrow_mut().root_done();
                        self.trace.borrow_mut().flush();
                        // A failure in the root's last poll (a checker run
                        // once more at the end) fails the run all the same.
                        if self.failed.get() {
                            drop(_running);
                            self.raise_failure();
                        }
                        return output;
                    }
                }
                Some(slot) => {
                    self.poll_task(slot);
                    if self.workers.get() {
                        self.scheduler.borrow_mut().poll_done();
                    }
                    self.charge_busy();
                    self.charge_poll(false);
                }
                None => self.park(),
            }
        }
    }

    /// Counts one turn of the loop against the step and livelock limits;
    /// the class of the limit passed, if one was.
    fn count_step(&self) -> Option<FailureClass> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        let at_instant = self.steps_at_instant.get() + 1;
        self.steps_at_instant.set(at_instant);
        if steps > self.config.step_limit {
            Some(FailureClass::StepLimit)
        } else if at_instant > self.config.instant_step_limit {
            Some(FailureClass::Livelock)
        } else {
            None
        }
    }

    /// Wakes the workers' yielders that are due, each onto the back of its
    /// own worker's queue.
    fn release_worker_yielders(&self) {
        let due = self.scheduler.borrow_mut().worker_yielders_due();
        for (worker, wakers) in due {
            self.scheduler.borrow_mut().set_releasing(Some(worker));
            for waker in wakers {
                waker.wake();
            }
            self.scheduler.borrow_mut().set_releasing(None);
        }
    }

    /// The next ready slot to poll (the scheduler's pick), or `None`.
    fn next_ready(&self) -> Option<u32> {
        let multi = self.scopes.multi();
        let deciding = self.deciding.get();
        if !multi && !deciding {
            // The hot path: one runtime, no decision log.
            let mut scheduler = self.scheduler.borrow_mut();
            let slot = scheduler.next(None, None, false);
            if let Some((first, second)) = scheduler.likely_next() {
                self.tasks.borrow().prefetch(first, second);
            }
            return slot;
        }
        let mut scheduler = self.scheduler.borrow_mut();
        // Runtimes share the simulation: a `current_thread` runtime's tasks
        // run only while it is blocked on.
        let running = multi.then(|| self.scopes.running());
        let tasks = self.tasks.borrow();
        let tasks = &*tasks;
        let runs = running.as_ref().map(|running| {
            move |slot: u32| {
                if slot == ROOT_SLOT {
                    return true;
                }
                let task = tasks.slot(slot);
                running[usize::from(task.scope)] || task.flags & THREAD != 0
            }
        });
        let runs = runs.as_ref().map(|r| r as &dyn Fn(u32) -> bool);
        if !deciding {
            return scheduler.next(runs, None, false);
        }
        let mut log =
            |among: &[u32], choose: &mut dyn FnMut() -> usize| self.log_pick(among, tasks, choose);
        scheduler.next(runs, Some(&mut log), self.replaying.get())
    }

    /// Nothing may run: the thread parks. The park hook runs first and may
    /// make work (then the clock stays); otherwise the clock jumps to the
    /// next event, or the run is a deadlock.
    fn park(&self) {
        // The two hooks a park runs, cloned (a hook may set hooks): at
        // every park, where cloning all three was a call.
        let (on_park, on_unpark) = {
            let hooks = self.hooks.borrow();
            (hooks.on_park.clone(), hooks.on_unpark.clone())
        };
        if let Some(park) = &on_park {
            park();
            let scheduler = self.scheduler.borrow();
            if scheduler.ready_len() > 0 || scheduler.has_yielders() {
                drop(scheduler);
                if let Some(unpark) = &on_unpark {
                    unpark();
                }
                return;
            }
        }
        let advanced = self.advance_to_next_event();
        if let Some(unpark) = &on_unpark {
            unpark();
        }
        if !advanced && self.background_idles() {
            return;
        }
        if !advanced && !self.wake_from_real_threads() {
            let report = self.deadlock_report();
            set_failure_class(FailureClass::Deadlock);
            panic!("{report}");
        }
    }

    /// Out of work with a real thread alive (one started outside any run,
    /// which may still wake a task, as a `blocking_send` into a channel the
    /// run receives from): waits a moment of real time for its wake.
    /// Nothing in the run moves meanwhile, so what it does next does not
    /// depend on when the wake came. True when a wake came.
    fn wake_from_real_threads(&self) -> bool {
        let Some(os) = crate::seams::os_layer() else {
            return false;
        };
        for _ in 0..REAL_THREAD_WAITS_MAX {
            if os.other_real_threads() == 0 {
                return false;
            }
            os.real_sleep(REAL_THREAD_WAIT_STEP);
            if self.advance_to_next_event() {
                return true;
            }
        }
        false
    }

    /// Runs `f` (a poll or cancel of a task of `scope`) where the task runs:
    /// a runtime's task on its home thread (`on_home_thread`); a thread's or
    /// the blocking pool's task (`unscoped`, flag `THREAD`) here, as a
    /// thread of its own, never on a runtime's home thread.
    fn on_own_thread<R>(&self, scope: u16, unscoped: bool, f: impl FnOnce() -> R) -> R {
        if unscoped {
            f()
        } else {
            self.on_home_thread(scope, f)
        }
    }

    /// Polls the task in `slot` (or cancels it, when it was aborted).
    pub(super) fn poll_task(&self, slot: u32) {
        let (mut cell, id, generation, abort, node, scope, site, unscoped) = {
            let mut tasks = self.tasks.borrow_mut();
            let task = tasks.slot_mut(slot);
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
                task.flags & THREAD != 0,
            )
        };
        let _restore_node = RestoreNode(self, self.hosts.set_current(node));
        // The task runs in its runtime's scope (its options, its handle).
        let _restore_scope =
            (scope != self.scopes.current()).then(|| RestoreScope(self, self.scopes.set(scope)));
        if abort {
            self.trace(EventKind::Cancel, id, Label::None);
            let previous = self.current_task.replace(id);
            self.on_own_thread(scope, unscoped, || cell.cancel());
            self.current_task.set(previous);
            self.finish(slot, cell);
            return;
        }
        let previous = self.current_task.replace(id);
        self.budget.set(TASK_BUDGET);
        // A worker's poll names its worker.
        let worker = if self.workers.get() {
            self.scheduler.borrow().running_worker()
        } else {
            None
        };
        self.polled_by.set((scope, worker.unwrap_or(0)));
        match worker {
            Some(w) => self.trace(EventKind::Poll, id, Label::Num(u64::from(w))),
            None => self.trace(EventKind::Poll, id, Label::None),
        }
        // Never dropped: only clones count as held (see `WakerCounts`).
        let waker = std::mem::ManuallyDrop::new(waker::waker(self.id, slot, generation));
        let mut cx = Context::from_waker(&waker);
        watch::poll_started(id, site);
        // This poll's notes replace the last one's; a poll inside a poll (a
        // LocalSet's task) notes for its own task, then the outer's go on.
        self.tasks.borrow_mut().clear_wait(slot);
        let outer_slot = self.polling_slot.replace(slot);
        let result = self.on_own_thread(scope, unscoped, || cell.poll(&mut cx));
        self.polling_slot.set(outer_slot);
        watch::poll_finished();
        self.current_task.set(previous);
        match result {
            Poll::Pending => {
                let mut tasks = self.tasks.borrow_mut();
                let task = tasks.slot_mut(slot);
                task.flags &= !RUNNING;
                task.cell = Some(cell);
            }
            Poll::Ready(()) => {
                self.trace(EventKind::Complete, id, Label::None);
                self.finish(slot, cell);
            }
        }
        if !self.deferred.borrow().is_empty() {
            self.run_deferred();
        }
    }

    /// Runs `f` (a poll or a cancel of a task of runtime `scope`) on the
    /// simulated OS thread that blocks on that runtime, when it is not this
    /// one: a `current_thread` runtime's tasks run on the thread in its
    /// `block_on` (`thread::current()`, thread-locals), as in tokio.
    #[inline]
    fn on_home_thread<R>(&self, scope: u16, f: impl FnOnce() -> R) -> R {
        let Some(home) = self.scopes.home(scope) else {
            return f();
        };
        let Some(os) = os_layer().filter(|os| os.current_thread() != Some(home)) else {
            return f();
        };
        let mut f = Some(f);
        let mut output = None;
        let ran = {
            let mut call = || output = Some(f.take().expect("a task's poll runs once")());
            os.run_on_thread(home, &mut call)
        };
        match (ran, output) {
            (true, Some(output)) => output,
            // The thread cannot take it (it ended): polled here.
            _ => f.take().expect("not run on the thread")(),
        }
    }

    /// Fires every event due now, in the order they were scheduled.
    fn fire_due(&self) {
        // Bounded by the events due now; each fired event is removed.
        while let Some(fired) = self.time.pop_due() {
            self.prefetch_next_event();
            match fired.action {
                Action::Wake(waker) => {
                    self.trace(EventKind::TimerFire, 0, Label::Num(fired.seq));
                    if let Some(waker) = waker {
                        waker.wake();
                    }
                }
                // Not an event of the trace: what a callback does (a
                // delivery, a loss, a fault, a disk outcome) is its own
                // note, and the wakes it makes are events.
                Action::Call(callback, label) => {
                    let calling = self.calling.replace(true);
                    callback();
                    self.calling.set(calling);
                    self.after_callback(label);
                }
                Action::CallWith(handler, arg, label) => {
                    let calling = self.calling.replace(true);
                    (handler.run)(arg);
                    self.calling.set(calling);
                    self.after_callback(label);
                }
            }
        }
    }

    /// The harness's checkers look at the world after each delivery, fault
    /// and lifecycle event.
    #[inline]
    fn after_callback(&self, label: &'static str) {
        let hook = self.after_call.borrow().clone();
        if let Some(hook) = hook {
            hook(label);
        }
    }

    /// Fetches what the next event will touch, while this one is carried
    /// out: the task slot a timer wakes, or a callback's boxed closure (the
    /// event's own slot was fetched by the queue).
    #[inline]
    fn prefetch_next_event(&self) {
        self.time.with_next_action(|action| match action {
            Action::Wake(Some(waker)) => {
                if let Some(slot) = waker::task_slot(waker) {
                    self.tasks.borrow().prefetch_slot(slot);
                }
            }
            Action::Wake(None) => {}
            Action::Call(callback, _) => {
                crate::prefetch::line((&**callback as *const dyn FnOnce()).cast::<u8>());
            }
            Action::CallWith(handler, arg, _) => {
                if self.time.pending() > FETCH_AHEAD_EVENTS_MIN {
                    (handler.fetch)(*arg);
                }
            }
        });
    }

    /// Moves the clock to `now_ns` (never back), within the time limit.
    pub(super) fn set_now(&self, now_ns: u64) {
        if self.move_clock(now_ns) {
            self.steps_at_instant.set(0);
            watch::clock_moved(now_ns);
        }
    }

    /// Moves the clock to `now_ns` within the time limit; whether it moved.
    /// Alone (a poll's work, `charge_work`), it neither resets the livelock
    /// count nor tells the hang watchdog: neither is an event.
    pub(super) fn move_clock(&self, now_ns: u64) -> bool {
        if now_ns > self.time_limit_ns() {
            let message = self.time_limit_message(now_ns);
            set_failure_class(FailureClass::TimeLimit);
            panic!("{message}");
        }
        self.time.move_to(now_ns)
    }

    /// The run's time limit, in virtual ns.
    pub(super) fn time_limit_ns(&self) -> u64 {
        self.config.time_limit.as_nanos().min(u64::MAX as u128) as u64
    }

    /// Jumps to the next event and fires everything due. Returns false when
    /// nothing is pending at all. (Also what the simulator's thread does
    /// while a std call blocks it on simulated threads that sleep.)
    pub fn advance_to_next_event(&self) -> bool {
        let remote = waker::take_remote_wakes(self.id);
        if !remote.is_empty() {
            for (slot, generation) in remote {
                self.wake_slot(slot, generation);
            }
            return true;
        }
        let Some(deadline) = self.time.next_deadline() else {
            return false;
        };
        self.time.park();
        if deadline > self.time.now_ns() {
            self.set_now(deadline);
        }
        self.fire_due();
        true
    }

    /// When the next pending event (a timer, a sleep, a delivery) is due,
    /// in virtual ns, if any.
    pub fn next_event_ns(&self) -> Option<u64> {
        self.time.next_deadline()
    }

    /// `tokio::time::advance`: moves the clock forward by `by` at once and
    /// fires every event due by then.
    pub fn advance_clock(&self, by: Duration) {
        let target = self
            .time
            .now_ns()
            .saturating_add(by.as_nanos().min(u64::MAX as u128) as u64);
        // Fire events in deadline order first, as time passes over them.
        // Bounded: each turn fires at least the earliest event.
        while let Some(deadline) = self.time.next_deadline().filter(|&d| d <= target) {
            if deadline > self.time.now_ns() {
                self.set_now(deadline);
            }
            self.fire_due();
        }
        if target > self.time.now_ns() {
            self.set_now(target);
        }
    }
}

/// Queues the outer root future again when a nested `block_on` ends.
struct OuterRoot<'a>(&'a Core);

impl Drop for OuterRoot<'_> {
    fn drop(&mut self) {
        if let Ok(mut scheduler) = self.0.scheduler.try_borrow_mut() {
            scheduler.requeue_root();
        }
    }
}

/// Counts a `block_on` of the current scope's runtime while it runs.
pub struct ScopeDriving<'a>(&'a Core, u16, Option<u64>);

impl<'a> ScopeDriving<'a> {
    /// The current scope's runtime is blocked on until the guard drops.
    pub fn new(core: &'a Core) -> ScopeDriving<'a> {
        let scope = core.scopes.current();
        core.scopes.drive(scope, None);
        ScopeDriving(core, scope, None)
    }

    /// The current scope's runtime is blocked on by the simulated OS thread
    /// `thread` (the OS layer's token): a `current_thread` runtime's tasks
    /// are then polled on that thread, while it waits in its `block_on`
    /// ([`ScopeDriving::set_idle`]).
    pub fn on_thread(core: &'a Core, thread: u64) -> ScopeDriving<'a> {
        let scope = core.scopes.current();
        core.scopes.drive(scope, Some(thread));
        ScopeDriving(core, scope, Some(thread))
    }

    /// The thread that blocks on the runtime waits in its `block_on`
    /// (`true`: the runtime's tasks may be polled there) or runs its future.
    pub fn set_idle(&self, idle: bool) {
        if self.2.is_some() && self.0.scopes.home(self.1) == self.2 {
            self.0.scopes.set_home_idle(self.1, idle);
        }
    }
}

impl Drop for ScopeDriving<'_> {
    fn drop(&mut self) {
        self.0.scopes.undrive(self.1, self.2);
    }
}

/// Puts the previous runtime scope back after a task's poll.
pub(super) struct RestoreScope<'a>(pub(super) &'a Core, pub(super) u16);

impl Drop for RestoreScope<'_> {
    fn drop(&mut self) {
        self.0.scopes.set(self.1);
    }
}

/// Puts the previous host back when a poll ends (also on an early return).
struct RestoreNode<'a>(&'a Core, u32);

impl Drop for RestoreNode<'_> {
    fn drop(&mut self) {
        self.0.hosts.set_current(self.1);
    }
}

/// Tells the watchdog (`crate::watch`) when a `block_on` ends, also by
/// panic.
struct Watched(bool);

impl Drop for Watched {
    fn drop(&mut self) {
        watch::block_on_ended(self.0);
    }
}

/// Sets a flag until dropped, then puts back what it was (a nested
/// `block_on` leaves the outer one's flag set).
struct Flag<'a>(&'a Cell<bool>, bool);

impl<'a> Flag<'a> {
    fn set(cell: &'a Cell<bool>) -> Flag<'a> {
        Flag(cell, cell.replace(true))
    }
}

impl Drop for Flag<'_> {
    fn drop(&mut self) {
        self.0.set(self.1);
    }
}
