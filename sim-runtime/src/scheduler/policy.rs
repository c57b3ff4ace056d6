//! The policy that picks the next task among the ready ones, and the
//! default: uniform randomness.

use crate::rng::Rng;

/// The policy that picks the next task among the ready ones. Other policies
/// (PCT, for one) plug in here.
pub trait SchedulePolicy {
    /// Returns an index into `ready` (the slots of the ready tasks, in queue
    /// order; `ROOT_SLOT` is the root future; with workers, a worker's key
    /// (see `worker_key`) stands for the task it would run next).
    fn choose(&mut self, ready: &[u32], rng: &mut Rng) -> usize;

    /// Picks among runners that run at once on a real machine (with
    /// workers: each worker's next task, and the ready tasks of the thread
    /// that blocks on the runtime): by default as [`SchedulePolicy::choose`].
    fn choose_runner(&mut self, runners: &[u32], rng: &mut Rng) -> usize {
        self.choose(runners, rng)
    }

    /// A task was spawned into `slot` (which an ended task may have held).
    fn spawned(&mut self, _slot: u32) {}

    /// The indexes the next two picks will choose if nothing is woken in
    /// between: among `len` ready tasks, then among the `len - 1` left.
    /// Only a guess, to fetch the tasks' memory before their polls; a
    /// policy that cannot tell cheaply says `None`.
    fn lookahead(&self, _len: usize, _rng: &Rng) -> Option<(usize, usize)> {
        None
    }

    /// Whether a pick keeps the others in queue order (a policy that
    /// reads the order); otherwise the last ready task takes the picked
    /// one's place, which costs nothing.
    fn keeps_order(&self) -> bool {
        false
    }
}

/// The first key of a worker in a pick's list: task slots are below it
/// (`ROOT_SLOT` included).
pub const WORKER_KEY_BASE: u32 = 0x0100_0000;

/// The key that stands for worker `w` of worker set `set` in a pick's
/// list, one per worker of the run.
pub fn worker_key(set: u16, w: u16) -> u32 {
    debug_assert!(
        w < super::WORKERS_MAX,
        "a worker's number is below WORKERS_MAX"
    );
    WORKER_KEY_BASE + u32::from(set) * u32::from(super::WORKERS_MAX) + u32::from(w)
}

/// The default policy: every ready task is equally likely.
#[derive(Default)]
pub struct UniformRandom;

impl SchedulePolicy for UniformRandom {
    #[inline]
    fn choose(&mut self, ready: &[u32], rng: &mut Rng) -> usize {
        rng.below(ready.len() as u64) as usize
    }

    #[inline]
    fn lookahead(&self, len: usize, rng: &Rng) -> Option<(usize, usize)> {
        let (first, second) = rng.peek_below_two(len as u64);
        Some((first as usize, second as usize))
    }
}

/// The first ready task runs first (see [`crate::config::Policy::Fifo`]):
/// the order tokio's `current_thread` runtime runs tasks in. Runners that
/// run at once (a `multi_thread` runtime's workers) take turns, so each
/// makes progress as on a real machine.
#[derive(Default)]
pub struct Fifo {
    /// The runners' turns so far.
    turn: usize,
}

impl SchedulePolicy for Fifo {
    #[inline]
    fn choose(&mut self, _ready: &[u32], _rng: &mut Rng) -> usize {
        0
    }

    fn choose_runner(&mut self, runners: &[u32], _rng: &mut Rng) -> usize {
        self.turn = self.turn.wrapping_add(1);
        self.turn % runners.len()
    }

    fn keeps_order(&self) -> bool {
        true
    }
}
