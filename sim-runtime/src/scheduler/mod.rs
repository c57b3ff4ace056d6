//! The scheduler, a part of the core: the ready set, the policy that picks
//! from it, the local sets' own ready queues, and the tasks that yielded.
//!
//! A wake only queues a task here; the core's loop asks [`Scheduler::next`]
//! which one to poll. Every pick among two or more ready tasks is a
//! scheduling decision: it draws from the scheduler's own stream of the
//! seed (through the policy), or comes from the decision log.
//!
//! A `multi_thread` runtime's tasks run on simulated workers
//! (`workers.rs`): each worker has tokio's queues, and a pick is among the
//! `block_on` thread's ready tasks and each worker's next task, so the seed
//! decides which worker polls next, and a worker may stall.
//!
//! - `policy.rs`: the policy trait and the default, uniform randomness;
//! - `pct.rs`: PCT;
//! - `workers.rs`: the workers of a `multi_thread` runtime.

mod pct;
mod policy;
mod workers;

pub use pct::Pct;
pub use policy::{Fifo, SchedulePolicy, UniformRandom};
pub use workers::{GLOBAL_QUEUE_INTERVAL, LIFO_POLLS_MAX, WORKERS_DEFAULT, WORKERS_MAX};

use policy::worker_key;
use workers::{Source, Workers};

use crate::rng::Rng;
use crate::task::ROOT_SLOT;
use std::task::Waker;

/// The most polls a yielding task waits behind the others (see
/// [`Scheduler::yielded`]): tasks that keep waking each other at one
/// instant must not starve it.
pub const BEHIND_POLLS_MAX: u64 = 10_000;

/// A pick through the decision log: given the candidates (two or more) and
/// the policy's own choice (to call when the log has no value), the index
/// of the pick.
pub type LogPick<'a> = &'a mut dyn FnMut(&[u32], &mut dyn FnMut() -> usize) -> usize;

/// One worker pick in this many stalls the worker instead (an OS
/// preemption), when another candidate can run.
pub const STALL_ODDS: u64 = 64;

/// The longest stall, in picks of the scheduler.
pub const STALL_PICKS_MAX: u64 = 512;

/// A candidate of a pick: a ready task of the `block_on` thread (by its
/// index in the ready set), or worker `w` of worker set `set`.
#[derive(Clone, Copy, Debug)]
enum Thread {
    Main(usize),
    Worker { set: u16, w: u16, source: Source },
}

/// The buffers of a pick among workers, kept across picks.
struct Candidates<'a> {
    slots: &'a mut Vec<u32>,
    threads: &'a mut Vec<Thread>,
    keys: &'a mut Vec<u32>,
}

/// A local set's ready queue (`LocalSet`: its tasks run only while it is
/// driven).
struct LocalQueue {
    ready: Vec<u32>,
    waker: Option<Waker>,
    live: usize,
}

/// The scheduler.
pub struct Scheduler {
    /// Ready slots of tasks run by the scheduler; `ROOT_SLOT` is the root.
    ready: Vec<u32>,
    root_queued: bool,
    rng: Rng,
    policy: Box<dyn SchedulePolicy>,
    /// Picks among two or more ready tasks so far.
    decisions: u64,
    locals: Vec<Option<LocalQueue>>,
    /// Tasks that yielded (`yield_now`): they run again once every task
    /// that was ready has run.
    behind: Vec<Waker>,
    /// Polls since the first of `behind` yielded.
    behind_polls: u64,
    /// The worker sets: one per `multi_thread` runtime, and one per
    /// harness host given workers.
    sets: Vec<Workers>,
    /// The worker set of each runtime scope that has one.
    by_scope: Vec<Option<u16>>,
    /// The worker set of each host that has one (it takes precedence over
    /// its runtime's: a host is a process of its own).
    by_node: std::collections::BTreeMap<u32, u16>,
    /// Whether any worker set exists (otherwise a pick is among the ready
    /// set alone, as it always was for `current_thread`).
    any_workers: bool,
    /// The worker whose task is being polled: set, worker, slot.
    running: Option<(u16, u16, u32)>,
    /// The worker whose yielders are being released: set, worker.
    releasing: Option<(u16, u16)>,
    /// Picks among workers so far (stalls last a number of them).
    picks: u64,
    /// Draws of stalls: a stream of its own, so stalls shift no pick.
    stalls: Rng,
    /// A pick's candidates with workers (their tasks, and where each
    /// comes from), kept to be reused.
    pick_slots: Vec<u32>,
    pick_threads: Vec<Thread>,
    /// What the policy chooses among: a main-thread task's slot, or a
    /// worker's key (`policy::worker_key`).
    pick_keys: Vec<u32>,
}

impl Scheduler {
    /// A scheduler drawing from `rng` through `policy`; workers' stalls
    /// draw from `stalls`.
    pub fn new(rng: Rng, stalls: Rng, policy: Box<dyn SchedulePolicy>) -> Scheduler {
        Scheduler {
            ready: Vec::new(),
            root_queued: false,
            rng,
            policy,
            decisions: 0,
            locals: Vec::new(),
            behind: Vec::new(),
            behind_polls: 0,
            sets: Vec::new(),
            by_scope: Vec::new(),
            by_node: std::collections::BTreeMap::new(),
            any_workers: false,
            running: None,
            releasing: None,
            picks: 0,
            stalls,
            pick_slots: Vec::new(),
            pick_threads: Vec::new(),
            pick_keys: Vec::new(),
        }
    }

    /// Gives runtime scope `scope` `count` workers (a `multi_thread`
    /// runtime): its tasks run on them from now on.
    pub fn add_workers(&mut self, scope: u16, count: u16) {
        let index = usize::from(scope);
        if self.by_scope.len() <= index {
            self.by_scope.resize(index + 1, None);
        }
        assert!(
            self.by_scope[index].is_none(),
            "a runtime gets its workers once"
        );
        self.by_scope[index] = Some(self.new_set(count));
    }

    /// Gives harness host `node` `count` workers of its own (a process
    /// running a `multi_thread` runtime): its tasks run on them.
    pub fn add_host_workers(&mut self, node: u32, count: u16) {
        assert!(
            !self.by_node.contains_key(&node),
            "a host gets its workers once"
        );
        let set = self.new_set(count);
        self.by_node.insert(node, set);
    }

    fn new_set(&mut self, count: u16) -> u16 {
        assert!(
            self.sets.len() < usize::from(u16::MAX),
            "too many worker sets"
        );
        self.sets.push(Workers::new(count));
        self.any_workers = true;
        (self.sets.len() - 1) as u16
    }

    /// The worker set a task of `scope` on host `node` runs on, if any.
    #[inline]
    fn set_of(&self, scope: u16, node: u32) -> Option<u16> {
        if !self.any_workers {
            return None;
        }
        if let Some(&set) = self.by_node.get(&node) {
            return Some(set);
        }
        self.by_scope.get(usize::from(scope)).copied().flatten()
    }

    /// The worker whose task is being polled, if a worker's is.
    #[inline]
    pub fn running_worker(&self) -> Option<u16> {
        self.running.map(|(_, w, _)| w)
    }

    /// The poll that [`Scheduler::next`] picked returned.
    #[inline]
    pub fn poll_done(&mut self) {
        self.running = None;
    }

    /// Yielders of worker `target` are being woken (they go to the back of
    /// its local queue); `None` when done.
    pub fn set_releasing(&mut self, target: Option<(u16, u16)>) {
        self.releasing = target;
    }

    /// Queues a task of `scope` on host `node` in `slot`, as a wake or spawn
    /// from where the scheduler is now. False when it has no workers.
    #[inline]
    fn queue_on_workers(&mut self, slot: u32, scope: u16, node: u32) -> bool {
        // Most runs have no workers: told before the call.
        if !self.any_workers {
            return false;
        }
        self.queue_on_worker_set(slot, scope, node)
    }

    fn queue_on_worker_set(&mut self, slot: u32, scope: u16, node: u32) -> bool {
        let Some(set) = self.set_of(scope, node) else {
            return false;
        };
        let (running, releasing) = (self.running, self.releasing);
        let workers = &mut self.sets[usize::from(set)];
        match (releasing, running) {
            (Some((s, w)), _) if s == set => workers.push_back(w, slot),
            // Woken while it runs: behind its worker's queue.
            (_, Some((s, w, running))) if s == set && running == slot => workers.push_back(w, slot),
            (_, Some((s, w, _))) if s == set => workers.push_lifo(w, slot),
            _ => workers.inject(slot),
        }
        true
    }

    /// Replaces the policy.
    pub fn set_policy(&mut self, policy: Box<dyn SchedulePolicy>) {
        self.policy = policy;
    }

    /// Scheduling decisions so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// How many tasks (and the root future) are queued to run, on the
    /// `block_on` thread and on every worker.
    #[inline]
    pub fn ready_len(&self) -> usize {
        if !self.any_workers {
            return self.ready.len();
        }
        self.ready.len() + self.sets.iter().map(Workers::queued).sum::<usize>()
    }

    /// A uniform draw in `0..n` from the scheduler's stream (a choice that
    /// is a scheduling decision, like `select!`'s branch order).
    #[inline]
    pub fn draw_below(&mut self, n: u64) -> u64 {
        self.rng.below(n)
    }

    // ----- the root future ---------------------------------------------------

    /// Queues the root future unless it is queued; returns whether it was
    /// queued now.
    pub fn queue_root(&mut self) -> bool {
        if self.root_queued {
            return false;
        }
        self.root_queued = true;
        self.ready.push(ROOT_SLOT);
        true
    }

    /// The root future is about to be polled.
    pub fn root_polled(&mut self) {
        self.root_queued = false;
    }

    /// The root future is no longer in the ready set (it finished, or a
    /// nested `block_on` takes its place until it returns).
    pub fn unqueue_root(&mut self) {
        self.ready.retain(|&s| s != ROOT_SLOT);
        self.root_queued = false;
    }

    /// The root future finished: it leaves the ready set, and a wake during
    /// its last poll is forgotten (the next `block_on`'s root is queued
    /// afresh).
    pub fn root_done(&mut self) {
        self.ready.retain(|&s| s != ROOT_SLOT);
        self.root_queued = false;
    }

    /// Queues the outer root future again (a nested `block_on` ended).
    pub fn requeue_root(&mut self) {
        self.ready.retain(|&s| s != ROOT_SLOT);
        self.root_queued = true;
        self.ready.push(ROOT_SLOT);
    }

    // ----- tasks -------------------------------------------------------------

    /// A task of runtime scope `scope` was spawned into `slot`, queued, for
    /// the scheduler (`owner` 0) or a local set. Returns the local set's
    /// waker to wake.
    pub fn spawned(&mut self, slot: u32, owner: u32, scope: u16, node: u32) -> Option<Waker> {
        self.policy.spawned(slot);
        if owner == 0 {
            if !self.queue_on_workers(slot, scope, node) {
                self.ready.push(slot);
            }
            return None;
        }
        let local = self.locals[owner as usize - 1]
            .as_mut()
            .expect("spawn onto a live local set");
        local.ready.push(slot);
        local.live += 1;
        local.waker.take()
    }

    /// A task of runtime scope `scope` was woken: queues it. Returns the
    /// local set's waker to wake.
    #[inline]
    pub fn woken(&mut self, slot: u32, owner: u32, scope: u16, node: u32) -> Option<Waker> {
        if owner == 0 {
            if !self.queue_on_workers(slot, scope, node) {
                self.ready.push(slot);
            }
            return None;
        }
        let local = self.locals[owner as usize - 1].as_mut()?;
        local.ready.push(slot);
        local.waker.take()
    }

    /// Takes the next slot to poll out of the ready set, or `None` when no
    /// task may run.
    ///
    /// - `runs`: when runtimes share the simulation, whether a ready slot
    ///   may run now (a `current_thread` runtime's only while blocked on).
    /// - `log`: the decision log's pick, when the run records or replays;
    ///   `replaying` keeps the ready set in wake order.
    pub fn next(
        &mut self,
        runs: Option<&dyn Fn(u32) -> bool>,
        log: Option<LogPick<'_>>,
        replaying: bool,
    ) -> Option<u32> {
        if self.any_workers {
            return self.next_with_workers(runs, log, replaying);
        }
        if let Some(runs) = runs.filter(|runs| !self.ready.iter().all(|&s| runs(s))) {
            // Some ready tasks may not run now: pick among the others.
            let runnable: Vec<u32> = self.ready.iter().copied().filter(|&s| runs(s)).collect();
            let index = match runnable.len() {
                0 => return None,
                1 => 0,
                _ => {
                    self.decisions += 1;
                    let (policy, rng) = (&mut self.policy, &mut self.rng);
                    match log {
                        Some(log) => log(&runnable, &mut || policy.choose(&runnable, rng)),
                        None => policy.choose(&runnable, rng),
                    }
                }
            };
            let slot = runnable[index];
            let at = self
                .ready
                .iter()
                .position(|&s| s == slot)
                .expect("a ready slot");
            return Some(self.ready.remove(at));
        }
        match self.ready.len() {
            0 => None,
            1 => self.ready.pop(),
            _ => {
                self.decisions += 1;
                let (policy, rng, ready) = (&mut self.policy, &mut self.rng, &self.ready);
                let index = match log {
                    Some(log) => log(ready, &mut || policy.choose(ready, rng)),
                    None => policy.choose(ready, rng),
                };
                let keep_order = replaying || self.policy.keeps_order();
                Some(take(&mut self.ready, index, keep_order))
            }
        }
    }

    /// The slots the next two picks of [`Scheduler::next`] will likely
    /// take, if no task is woken before them: a guess (right while the
    /// ready set only shrinks, as it does between wakes), for the core to
    /// fetch the tasks' memory while it polls the current one. The uniform
    /// draw's tasks lie anywhere in memory, so each poll would otherwise
    /// wait on a cold slot and a cold future. Only the plain case guesses:
    /// no workers, no decision log.
    #[inline]
    pub fn likely_next(&self) -> Option<(u32, u32)> {
        let len = self.ready.len();
        if len < 3 || self.any_workers {
            return None;
        }
        let (first, second) = self.policy.lookahead(len, &self.rng)?;
        // The first pick's `swap_remove` moves the last slot into its place.
        let second = if second == first {
            self.ready[len - 1]
        } else {
            self.ready[second]
        };
        Some((self.ready[first], second))
    }

    /// [`Scheduler::next`] when some runtime has workers: the candidates
    /// are the `block_on` thread's ready tasks and each worker's next task
    /// (a stalled worker's only when no other can run). The policy (or the
    /// log) picks among their tasks; a worker it picks may stall instead.
    fn next_with_workers(
        &mut self,
        runs: Option<&dyn Fn(u32) -> bool>,
        log: Option<LogPick<'_>>,
        replaying: bool,
    ) -> Option<u32> {
        // Kept across picks, so a pick allocates nothing.
        let mut slots = std::mem::take(&mut self.pick_slots);
        let mut threads = std::mem::take(&mut self.pick_threads);
        let mut keys = std::mem::take(&mut self.pick_keys);
        let picked = self.pick_with_workers(
            runs,
            log,
            replaying,
            Candidates {
                slots: &mut slots,
                threads: &mut threads,
                keys: &mut keys,
            },
        );
        self.pick_slots = slots;
        self.pick_threads = threads;
        self.pick_keys = keys;
        picked
    }

    fn pick_with_workers(
        &mut self,
        runs: Option<&dyn Fn(u32) -> bool>,
        mut log: Option<LogPick<'_>>,
        replaying: bool,
        candidates: Candidates<'_>,
    ) -> Option<u32> {
        let Candidates {
            slots,
            threads,
            keys,
        } = candidates;
        self.candidates(runs, false, slots, threads);
        if slots.is_empty() {
            // Only stalled workers have work: their stalls end.
            self.candidates(runs, true, slots, threads);
            for workers in &mut self.sets {
                workers.unstall_all();
            }
        }
        // Bounded: each turn of a stall removes one candidate.
        loop {
            let index = match slots.len() {
                0 => return None,
                1 => 0,
                _ => {
                    self.decisions += 1;
                    // The policy sees a worker as one runner: PCT's
                    // priorities are the workers' (a worker's drops at a
                    // change point), as the threads' in PCT's paper.
                    keys.clear();
                    keys.extend(threads.iter().zip(slots.iter()).map(
                        |(thread, &slot)| match *thread {
                            Thread::Main(_) => slot,
                            Thread::Worker { set, w, .. } => worker_key(set, w),
                        },
                    ));
                    let (policy, rng) = (&mut self.policy, &mut self.rng);
                    let (among, keys): (&[u32], &[u32]) = (slots, keys);
                    match log.as_mut() {
                        Some(log) => log(among, &mut || policy.choose_runner(keys, rng)),
                        None => policy.choose_runner(keys, rng),
                    }
                }
            };
            match threads[index] {
                Thread::Main(at) => {
                    return Some(if runs.is_some() {
                        // Some ready tasks may not run now: the index is
                        // into the whole ready set, in order.
                        self.ready.remove(at)
                    } else {
                        let keep_order = replaying || self.policy.keeps_order();
                        take(&mut self.ready, at, keep_order)
                    });
                }
                Thread::Worker { set, w, source } => {
                    self.picks += 1;
                    if slots.len() > 1 && self.stalls.below(STALL_ODDS) == 0 {
                        let until = self.picks + 1 + self.stalls.below(STALL_PICKS_MAX);
                        self.sets[usize::from(set)].stall(w, until);
                        slots.swap_remove(index);
                        threads.swap_remove(index);
                        continue;
                    }
                    let taken = self.sets[usize::from(set)].take(w, source);
                    debug_assert_eq!(taken, slots[index], "a worker takes the task it showed");
                    self.running = Some((set, w, taken));
                    return Some(taken);
                }
            }
        }
    }

    /// Fills `slots` and `threads` with the candidates of a pick: the
    /// `block_on` thread's ready tasks that may run, then each worker's next
    /// task (stalled ones too, when `stalled`).
    fn candidates(
        &self,
        runs: Option<&dyn Fn(u32) -> bool>,
        stalled: bool,
        slots: &mut Vec<u32>,
        threads: &mut Vec<Thread>,
    ) {
        slots.clear();
        threads.clear();
        for (at, &slot) in self.ready.iter().enumerate() {
            if runs.is_none_or(|runs| runs(slot)) {
                slots.push(slot);
                threads.push(Thread::Main(at));
            }
        }
        for (set, workers) in self.sets.iter().enumerate() {
            for w in 0..workers.count() {
                if !stalled && workers.stalled(w, self.picks) {
                    continue;
                }
                if let Some((slot, source)) = workers.head(w) {
                    slots.push(slot);
                    let set = set as u16;
                    threads.push(Thread::Worker { set, w, source });
                }
            }
        }
    }

    // ----- yielders ----------------------------------------------------------

    /// The running task yields (`tokio::task::yield_now`): `waker` (its
    /// own) is woken once no task that is ready now is left to run, so every
    /// task ready when it yielded runs before it resumes, in the seed's
    /// order, as at the back of tokio's queue. Bounded: after
    /// [`BEHIND_POLLS_MAX`] polls with the ready set never empty, the
    /// yielders run anyway. On a worker, the tasks are its own.
    pub fn yielded(&mut self, waker: &Waker) {
        if let Some((set, w, _)) = self.running {
            self.sets[usize::from(set)].defer(w, waker);
            return;
        }
        if self.behind.is_empty() {
            self.behind_polls = 0;
        }
        self.behind.push(waker.clone());
    }

    /// Whether some task yielded and waits to run again.
    pub fn has_yielders(&self) -> bool {
        !self.behind.is_empty() || self.sets.iter().any(Workers::has_deferred)
    }

    /// The workers' yielders due to run again, by worker (`(set,
    /// worker)`); wake them with [`Scheduler::set_releasing`] set.
    pub fn worker_yielders_due(&mut self) -> Vec<((u16, u16), Vec<Waker>)> {
        let mut due = Vec::new();
        for (set, workers) in self.sets.iter_mut().enumerate() {
            for (w, wakers) in workers.deferred_due(BEHIND_POLLS_MAX) {
                due.push(((set as u16, w), wakers));
            }
        }
        due
    }

    /// Counts a turn of the loop; returns the yielders to wake (in the order
    /// they yielded) once the ready set is empty or they waited long enough.
    pub fn yielders_due(&mut self) -> Vec<Waker> {
        if self.behind.is_empty() {
            return Vec::new();
        }
        self.behind_polls += 1;
        if self.ready.is_empty() || self.behind_polls > BEHIND_POLLS_MAX {
            return std::mem::take(&mut self.behind);
        }
        Vec::new()
    }

    /// Empties the ready set and the workers' queues (a shutdown).
    pub fn clear_ready(&mut self) {
        self.ready.clear();
        for workers in &mut self.sets {
            workers.clear();
        }
    }

    /// Takes the yielders without waking them (a shutdown).
    pub fn take_yielders(&mut self) -> Vec<Waker> {
        let mut all = std::mem::take(&mut self.behind);
        for workers in &mut self.sets {
            all.extend(workers.take_deferred());
        }
        all
    }

    // ----- local sets --------------------------------------------------------

    /// Creates a local set and returns its owner number.
    pub fn local_new(&mut self) -> u32 {
        let queue = LocalQueue {
            ready: Vec::new(),
            waker: None,
            live: 0,
        };
        if let Some(index) = self.locals.iter().position(Option::is_none) {
            self.locals[index] = Some(queue);
            index as u32 + 1
        } else {
            self.locals.push(Some(queue));
            self.locals.len() as u32
        }
    }

    /// How many tasks of a local set have not finished.
    pub fn local_live(&self, owner: u32) -> usize {
        self.locals
            .get(owner as usize - 1)
            .and_then(Option::as_ref)
            .map_or(0, |l| l.live)
    }

    /// A task of local set `owner` finished.
    pub fn local_finished(&mut self, owner: u32) {
        if let Some(local) = self.locals[owner as usize - 1].as_mut() {
            local.live -= 1;
        }
    }

    /// Takes the next task of local set `owner` to poll, picked by the
    /// policy (or the log, among two or more), and keeps `waker` for later
    /// wakes. `None` when none is ready.
    pub fn local_next(
        &mut self,
        owner: u32,
        waker: &Waker,
        log: Option<LogPick<'_>>,
        replaying: bool,
    ) -> Option<u32> {
        let local = self
            .locals
            .get_mut(owner as usize - 1)
            .and_then(Option::as_mut)?;
        local.waker = Some(waker.clone());
        if local.ready.is_empty() {
            return None;
        }
        // A local set's pick counts as a decision even among one task, and
        // the policy is asked even then (its draws are part of the run).
        self.decisions += 1;
        let (policy, rng) = (&mut self.policy, &mut self.rng);
        let keep_order = replaying || policy.keeps_order();
        match log {
            Some(log) if local.ready.len() > 1 => {
                let ready = &local.ready;
                let index = log(ready, &mut || policy.choose(ready, rng));
                Some(take(&mut local.ready, index, keep_order))
            }
            _ => {
                let index = policy.choose(&local.ready, rng);
                Some(take(&mut local.ready, index, policy.keeps_order()))
            }
        }
    }

    /// Whether local set `owner` has ready tasks.
    pub fn local_has_ready(&self, owner: u32) -> bool {
        self.locals[owner as usize - 1]
            .as_ref()
            .is_some_and(|l| !l.ready.is_empty())
    }

    /// Forgets local set `owner` (its tasks are gone).
    pub fn local_drop(&mut self, owner: u32) {
        self.locals[owner as usize - 1] = None;
    }
}

/// Takes `ready[index]` out of a ready queue. A replay and the FIFO policy
/// keep the queue in wake order (so its first task is the FIFO pick);
/// otherwise the last task fills the gap, as the policies' draws expect.
fn take(ready: &mut Vec<u32>, index: usize, keep_order: bool) -> u32 {
    if keep_order {
        ready.remove(index)
    } else {
        ready.swap_remove(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheduler(policy: Box<dyn SchedulePolicy>) -> Scheduler {
        Scheduler::new(Rng::named(1, "tasks"), Rng::named(1, "stalls"), policy)
    }

    #[test]
    fn fifo_runs_tasks_in_the_order_they_became_ready() {
        let mut s = scheduler(Box::new(Fifo::default()));
        for slot in [5, 3, 9, 1] {
            s.spawned(slot, 0, 0, 0);
        }
        assert_eq!(s.next(None, None, false), Some(5));
        s.woken(7, 0, 0, 0);
        let rest: Vec<u32> = std::iter::from_fn(|| s.next(None, None, false)).collect();
        assert_eq!(rest, [3, 9, 1, 7]);
        // The uniform policy runs them in another order for some seed.
        let orders: std::collections::BTreeSet<Vec<u32>> = (0..8)
            .map(|seed| {
                let mut s = Scheduler::new(
                    Rng::named(seed, "tasks"),
                    Rng::named(seed, "stalls"),
                    Box::new(UniformRandom),
                );
                for slot in [5, 3, 9, 1] {
                    s.spawned(slot, 0, 0, 0);
                }
                std::iter::from_fn(|| s.next(None, None, false)).collect()
            })
            .collect();
        assert!(orders.len() > 1, "{orders:?}");
    }
}
