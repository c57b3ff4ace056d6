//! The policy that picks the next task among the ready ones, and the
//! default: uniform randomness.

use crate::rng::Rng;

/// The policy that picks the next task among the ready ones. Other policies
/// (PCT, for one) plug in here.
pub trait SchedulePolicy {
    /// Returns an index into `ready` (the slots of the ready tasks, in queue
    /// order; `ROOT_SLOT` is the root future).
    fn choose(&mut self, ready: &[u32], rng: &mut Rng) -> usize;

    /// A task was spawned into `slot` (which an ended task may have held).
    fn spawned(&mut self, _slot: u32) {}
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
