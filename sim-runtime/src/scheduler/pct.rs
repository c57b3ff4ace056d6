//! PCT, probabilistic concurrency testing (Burckhardt et al., ASPLOS
//! 2010): priorities per task and `depth - 1` change points.

use super::policy::SchedulePolicy;
use crate::rng::Rng;
use crate::task::ROOT_SLOT;

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
