//! PCT, probabilistic concurrency testing (Burckhardt et al., ASPLOS
//! 2010): priorities per task and `depth - 1` change points. On a
//! `multi_thread` runtime's workers, a worker is what has a priority (as
//! the threads of the paper): the worker of highest priority runs its next
//! task, and at a change point that worker drops.
//!
//! Past its horizon PCT draws uniformly, as the uniform policy does. Its
//! change points all lie within the horizon, so strict priorities beyond
//! it find nothing new; they would only starve every task but the first
//! while that one spins (a task that wakes itself, a worker whose queue
//! never empties), a schedule no fair scheduler, tokio's or the kernel's,
//! ever makes: a false livelock.

use super::policy::{SchedulePolicy, WORKER_KEY_BASE};
use crate::rng::Rng;
use crate::task::ROOT_SLOT;

/// PCT (see [`crate::config::Policy::Pct`]): priorities by slot, drawn on
/// first sight from the run's `pct` stream, and `depth - 1` change points.
pub struct Pct {
    /// Priority by slot (0: not drawn yet). First draws are at least
    /// `depth`; demoted tasks get `1..depth`.
    priorities: Vec<u64>,
    /// Priority by worker (by key less `WORKER_KEY_BASE`; 0: not drawn).
    worker_priorities: Vec<u64>,
    root_priority: u64,
    /// The decisions at which the running task is demoted, ascending.
    change_points: Vec<u64>,
    decisions: u64,
    /// Past this many decisions every pick is uniform (see the module).
    horizon: u64,
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
            worker_priorities: Vec::new(),
            root_priority: 0,
            change_points,
            decisions: 0,
            horizon: horizon.max(1),
            depth: depth.max(1),
            rng,
        }
    }

    fn draw(&mut self) -> u64 {
        // Far above the demoted range; ties (1 in 2^63) break by position.
        (self.rng.next_u64() >> 1) + u64::from(self.depth)
    }

    /// The cell of `key`'s priority: the root's, a task's or a worker's.
    fn cell(&mut self, key: u32) -> &mut u64 {
        if key == ROOT_SLOT {
            return &mut self.root_priority;
        }
        let (table, index) = if key >= WORKER_KEY_BASE {
            (
                &mut self.worker_priorities,
                (key - WORKER_KEY_BASE) as usize,
            )
        } else {
            (&mut self.priorities, key as usize)
        };
        if index >= table.len() {
            table.resize(index + 1, 0);
        }
        &mut table[index]
    }

    fn priority(&mut self, key: u32) -> u64 {
        if *self.cell(key) == 0 {
            let drawn = self.draw();
            *self.cell(key) = drawn;
        }
        *self.cell(key)
    }
}

impl SchedulePolicy for Pct {
    fn choose(&mut self, ready: &[u32], _rng: &mut Rng) -> usize {
        self.decisions += 1;
        if self.decisions > self.horizon {
            return self.rng.below(ready.len() as u64) as usize;
        }
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
            *self.cell(ready[best]) = low.max(1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::policy::worker_key;

    /// Two workers, each with work at every pick: the one of higher
    /// priority runs every time until the change point, where it drops
    /// below the other for good.
    #[test]
    fn a_worker_runs_while_its_priority_is_highest_and_drops_at_the_change_point() {
        let (a, b) = (worker_key(0, 0), worker_key(0, 1));
        for seed in 0..20 {
            let mut pct = Pct::new(seed, 2, 10);
            // Change points within 10; every pick below under priorities.
            pct.horizon = 12;
            let change = pct.change_points[0] as usize;
            let mut rng = Rng::named(seed, "unused");
            let picks: Vec<u32> = (0..12)
                .map(|_| [a, b][pct.choose(&[a, b], &mut rng)])
                .collect();
            let first = picks[0];
            let switch = picks.iter().position(|&p| p != first);
            assert_eq!(switch, Some(change), "seed {seed}: {picks:?}");
            assert!(picks[change..].iter().all(|&p| p != first), "{picks:?}");
        }
    }

    /// Past the horizon no task keeps the turn: a task that would run
    /// forever under its priority (one that wakes itself) lets the others
    /// run.
    #[test]
    fn past_the_horizon_every_ready_task_runs() {
        let mut pct = Pct::new(9, 2, 50);
        let mut rng = Rng::named(9, "unused");
        let ready = [1, 2, 3];
        let first = pct.choose(&ready, &mut rng);
        let within: Vec<usize> = (1..50).map(|_| pct.choose(&ready, &mut rng)).collect();
        let change = pct.change_points[0] as usize;
        assert!(
            within[..change - 2].iter().all(|&i| i == first),
            "{within:?}"
        );
        let past: std::collections::BTreeSet<usize> =
            (0..200).map(|_| pct.choose(&ready, &mut rng)).collect();
        assert_eq!(
            past.len(),
            3,
            "every ready task gets the turn past the horizon"
        );
    }

    /// Workers' priorities are apart from tasks': a task slot with the
    /// number of a worker's offset does not share its priority.
    #[test]
    fn workers_and_tasks_have_priorities_of_their_own() {
        let mut pct = Pct::new(3, 1, 10);
        let worker = worker_key(0, 5);
        let task = 5;
        let p_worker = pct.priority(worker);
        let p_task = pct.priority(task);
        assert_ne!(p_worker, p_task);
        assert_eq!(pct.priority(worker), p_worker, "drawn once");
    }
}
