//! The scheduler, a part of the core: the ready set, the policy that picks
//! from it, the local sets' own ready queues, and the tasks that yielded.
//!
//! A wake only queues a task here; the core's loop asks [`Scheduler::next`]
//! which one to poll. Every pick among two or more ready tasks is a
//! scheduling decision: it draws from the scheduler's own stream of the
//! seed (through the policy), or comes from the decision log.
//!
//! - `policy.rs`: the policy trait and the default, uniform randomness;
//! - `pct.rs`: PCT.

mod pct;
mod policy;

pub use pct::Pct;
pub use policy::{SchedulePolicy, UniformRandom};

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
}

impl Scheduler {
    /// A scheduler drawing from `rng` through `policy`.
    pub fn new(rng: Rng, policy: Box<dyn SchedulePolicy>) -> Scheduler {
        Scheduler {
            ready: Vec::new(),
            root_queued: false,
            rng,
            policy,
            decisions: 0,
            locals: Vec::new(),
            behind: Vec::new(),
            behind_polls: 0,
        }
    }

    /// Replaces the policy.
    pub fn set_policy(&mut self, policy: Box<dyn SchedulePolicy>) {
        self.policy = policy;
    }

    /// Scheduling decisions so far.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// How many tasks (and the root future) are queued to run.
    #[inline]
    pub fn ready_len(&self) -> usize {
        self.ready.len()
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

    /// The root future finished: it leaves the ready set.
    pub fn root_done(&mut self) {
        self.ready.retain(|&s| s != ROOT_SLOT);
    }

    /// Queues the outer root future again (a nested `block_on` ended).
    pub fn requeue_root(&mut self) {
        self.ready.retain(|&s| s != ROOT_SLOT);
        self.root_queued = true;
        self.ready.push(ROOT_SLOT);
    }

    // ----- tasks -------------------------------------------------------------

    /// A task was spawned into `slot`, queued, for the scheduler (`owner`
    /// 0) or a local set. Returns the local set's waker to wake.
    pub fn spawned(&mut self, slot: u32, owner: u32) -> Option<Waker> {
        self.policy.spawned(slot);
        if owner == 0 {
            self.ready.push(slot);
            return None;
        }
        let local = self.locals[owner as usize - 1]
            .as_mut()
            .expect("spawn onto a live local set");
        local.ready.push(slot);
        local.live += 1;
        local.waker.take()
    }

    /// A task was woken: queues it. Returns the local set's waker to wake.
    pub fn woken(&mut self, slot: u32, owner: u32) -> Option<Waker> {
        if owner == 0 {
            self.ready.push(slot);
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
                Some(take(&mut self.ready, index, replaying))
            }
        }
    }

    // ----- yielders ----------------------------------------------------------

    /// The running task yields (`tokio::task::yield_now`): `waker` (its
    /// own) is woken once no task that is ready now is left to run, so every
    /// task ready when it yielded runs before it resumes, in the seed's
    /// order, as at the back of tokio's queue. Bounded: after
    /// [`BEHIND_POLLS_MAX`] polls with the ready set never empty, the
    /// yielders run anyway.
    pub fn yielded(&mut self, waker: &Waker) {
        if self.behind.is_empty() {
            self.behind_polls = 0;
        }
        self.behind.push(waker.clone());
    }

    /// Whether some task yielded and waits to run again.
    pub fn has_yielders(&self) -> bool {
        !self.behind.is_empty()
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

    /// Empties the ready set (a shutdown).
    pub fn clear_ready(&mut self) {
        self.ready.clear();
    }

    /// Takes the yielders without waking them (a shutdown).
    pub fn take_yielders(&mut self) -> Vec<Waker> {
        std::mem::take(&mut self.behind)
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
        match log {
            Some(log) if local.ready.len() > 1 => {
                let ready = &local.ready;
                let index = log(ready, &mut || policy.choose(ready, rng));
                Some(take(&mut local.ready, index, replaying))
            }
            _ => {
                let index = policy.choose(&local.ready, rng);
                Some(local.ready.swap_remove(index))
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

/// Takes `ready[index]` out of a ready queue. A replay keeps the queue in
/// wake order (so its first task is the FIFO pick); otherwise the last task
/// fills the gap, as the policies' draws expect.
fn take(ready: &mut Vec<u32>, index: usize, replaying: bool) -> u32 {
    if replaying {
        ready.remove(index)
    } else {
        ready.swap_remove(index)
    }
}
