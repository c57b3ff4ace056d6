//! Simulated workers: a `multi_thread` runtime's tasks run on its worker
//! threads, each with its own queues, as in tokio's multi-thread scheduler.
//!
//! A worker takes its next task by tokio's documented rules:
//! - a task spawned or woken by a task running on the worker goes into the
//!   worker's LIFO slot (the task there before moves to the back of the
//!   worker's local queue), and the LIFO slot runs first, at most
//!   [`LIFO_POLLS_MAX`] times in a row;
//! - then the local queue, in order;
//! - every [`GLOBAL_QUEUE_INTERVAL`]-th tick, and whenever the local queue
//!   is empty, the runtime's injection queue (tasks woken from outside the
//!   workers: by a timer, the network, the `block_on` thread);
//! - a worker with nothing of its own steals half of another worker's local
//!   queue (never its LIFO slot).
//!
//! A task woken while it runs (`yield_now`, a spent budget) goes to the back
//! of its worker's local queue; `yield_now` waits behind the tasks its
//! worker had ready.
//!
//! Which worker polls next is the seed's choice (`Scheduler::next`), and a
//! worker may stall for a drawn stretch of picks, as an OS preempts a
//! thread: its LIFO slot and queue wait, while idle workers steal what they
//! can. That is how a task is starved at an await point on a real machine.
//! Where tokio leaves an order open (which worker a steal starts from), the
//! choice here is fixed.

use std::collections::VecDeque;
use std::task::Waker;

/// The most polls in a row a worker takes from its LIFO slot before it
/// moves that task to its local queue (tokio's `MAX_LIFO_POLLS_PER_TICK`).
pub const LIFO_POLLS_MAX: u32 = 3;

/// A worker checks the injection queue first every this many ticks
/// (tokio's default `global_queue_interval`).
pub const GLOBAL_QUEUE_INTERVAL: u32 = 61;

/// How many workers a `multi_thread` runtime simulates when
/// `worker_threads` is not set.
pub const WORKERS_DEFAULT: u16 = 4;

/// The most workers one runtime simulates.
pub const WORKERS_MAX: u16 = 256;

/// Where a worker's next task comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Its LIFO slot.
    Lifo,
    /// The front of its local queue.
    Local,
    /// The runtime's injection queue.
    Inject,
    /// Half of another worker's local queue.
    Steal(u16),
}

/// One simulated worker thread.
#[derive(Default)]
struct Worker {
    lifo: Option<u32>,
    local: VecDeque<u32>,
    /// Polls taken from the LIFO slot in a row.
    lifo_polls: u32,
    /// Tasks taken so far (for the injection queue's interval).
    ticks: u32,
    /// Tasks that yielded on this worker, in order.
    deferred: Vec<Waker>,
    /// Picks of this worker since its first deferred task yielded.
    deferred_picks: u64,
    /// The scheduler's pick count until which the worker is stalled.
    stalled_until: u64,
}

/// The workers of one `multi_thread` runtime.
pub(crate) struct Workers {
    workers: Vec<Worker>,
    inject: VecDeque<u32>,
}

impl Workers {
    /// `count` idle workers.
    pub(crate) fn new(count: u16) -> Workers {
        assert!(
            (1..=WORKERS_MAX).contains(&count),
            "sim: a runtime has 1 to {WORKERS_MAX} workers, not {count}"
        );
        Workers {
            workers: (0..count).map(|_| Worker::default()).collect(),
            inject: VecDeque::new(),
        }
    }

    /// How many workers there are.
    pub(crate) fn count(&self) -> u16 {
        self.workers.len() as u16
    }

    /// Queues `slot` from outside the workers.
    pub(crate) fn inject(&mut self, slot: u32) {
        self.inject.push_back(slot);
    }

    /// Queues `slot` in worker `w`'s LIFO slot (spawned or woken by a task
    /// running on `w`).
    pub(crate) fn push_lifo(&mut self, w: u16, slot: u32) {
        let worker = &mut self.workers[usize::from(w)];
        if let Some(previous) = worker.lifo.replace(slot) {
            worker.local.push_back(previous);
        }
    }

    /// Queues `slot` at the back of worker `w`'s local queue (a task woken
    /// while it ran, or a yielder released).
    pub(crate) fn push_back(&mut self, w: u16, slot: u32) {
        self.workers[usize::from(w)].local.push_back(slot);
    }

    /// Tasks queued anywhere in this runtime.
    pub(crate) fn queued(&self) -> usize {
        self.inject.len()
            + self
                .workers
                .iter()
                .map(|w| w.local.len() + usize::from(w.lifo.is_some()))
                .sum::<usize>()
    }

    /// Whether worker `w` is stalled at pick `pick`.
    pub(crate) fn stalled(&self, w: u16, pick: u64) -> bool {
        self.workers[usize::from(w)].stalled_until > pick
    }

    /// Stalls worker `w` until pick `until`.
    pub(crate) fn stall(&mut self, w: u16, until: u64) {
        self.workers[usize::from(w)].stalled_until = until;
    }

    /// Ends every stall (no worker that is not stalled has work).
    pub(crate) fn unstall_all(&mut self) {
        for worker in &mut self.workers {
            worker.stalled_until = 0;
        }
    }

    /// The task worker `w` would run next, and where it comes from; `None`
    /// when the worker has nothing to run or steal.
    pub(crate) fn head(&self, w: u16) -> Option<(u32, Source)> {
        let worker = &self.workers[usize::from(w)];
        if worker.ticks % GLOBAL_QUEUE_INTERVAL == GLOBAL_QUEUE_INTERVAL - 1 {
            if let Some(&slot) = self.inject.front() {
                return Some((slot, Source::Inject));
            }
        }
        if let Some(slot) = worker.lifo {
            if worker.lifo_polls < LIFO_POLLS_MAX {
                return Some((slot, Source::Lifo));
            }
            // The LIFO slot had its turns: the task goes behind the local
            // queue, which runs first.
            return Some((*worker.local.front().unwrap_or(&slot), Source::Local));
        }
        if let Some(&slot) = worker.local.front() {
            return Some((slot, Source::Local));
        }
        if let Some(&slot) = self.inject.front() {
            return Some((slot, Source::Inject));
        }
        let count = self.count();
        (1..count)
            .map(|offset| (w + offset) % count)
            .find_map(|victim| {
                let front = self.workers[usize::from(victim)].local.front()?;
                Some((*front, Source::Steal(victim)))
            })
    }

    /// Takes worker `w`'s next task from `source` (what [`Workers::head`]
    /// said): the task to poll.
    pub(crate) fn take(&mut self, w: u16, source: Source) -> u32 {
        let index = usize::from(w);
        self.workers[index].ticks = self.workers[index].ticks.wrapping_add(1);
        let slot = match source {
            Source::Lifo => {
                let worker = &mut self.workers[index];
                worker.lifo_polls += 1;
                worker.lifo.take().expect("the head was the LIFO slot")
            }
            Source::Local => {
                let worker = &mut self.workers[index];
                if worker.lifo_polls >= LIFO_POLLS_MAX {
                    if let Some(lifo) = worker.lifo.take() {
                        worker.local.push_back(lifo);
                    }
                }
                worker.lifo_polls = 0;
                worker
                    .local
                    .pop_front()
                    .expect("the head was the local queue")
            }
            Source::Inject => {
                self.workers[index].lifo_polls = 0;
                self.inject
                    .pop_front()
                    .expect("the head was the injection queue")
            }
            Source::Steal(victim) => {
                let victim = usize::from(victim);
                assert_ne!(victim, index, "a worker does not steal from itself");
                let half = self.workers[victim].local.len().div_ceil(2);
                assert!(half > 0, "a steal takes at least one task");
                let stolen: Vec<u32> = self.workers[victim].local.drain(..half).collect();
                let worker = &mut self.workers[index];
                worker.lifo_polls = 0;
                worker.local.extend(stolen);
                worker.local.pop_front().expect("a steal took a task")
            }
        };
        if !self.workers[index].deferred.is_empty() {
            self.workers[index].deferred_picks += 1;
        }
        slot
    }

    /// The task running on worker `w` yields: it runs again once the tasks
    /// the worker had ready have run.
    pub(crate) fn defer(&mut self, w: u16, waker: &Waker) {
        let worker = &mut self.workers[usize::from(w)];
        if worker.deferred.is_empty() {
            worker.deferred_picks = 0;
        }
        worker.deferred.push(waker.clone());
    }

    /// Per worker, the yielders due to run again: the worker has nothing
    /// else to run from its own queues or the injection queue, or they
    /// waited `max_picks` picks of the worker.
    pub(crate) fn deferred_due(&mut self, max_picks: u64) -> Vec<(u16, Vec<Waker>)> {
        let mut due = Vec::new();
        let inject_empty = self.inject.is_empty();
        for (w, worker) in self.workers.iter_mut().enumerate() {
            if worker.deferred.is_empty() {
                continue;
            }
            let idle = worker.lifo.is_none() && worker.local.is_empty() && inject_empty;
            if idle || worker.deferred_picks > max_picks {
                due.push((w as u16, std::mem::take(&mut worker.deferred)));
            }
        }
        due
    }

    /// Whether some worker has yielders waiting.
    pub(crate) fn has_deferred(&self) -> bool {
        self.workers.iter().any(|w| !w.deferred.is_empty())
    }

    /// Takes every yielder without waking it (a shutdown).
    pub(crate) fn take_deferred(&mut self) -> Vec<Waker> {
        self.workers
            .iter_mut()
            .flat_map(|w| std::mem::take(&mut w.deferred))
            .collect()
    }

    /// Empties every queue (a shutdown).
    pub(crate) fn clear(&mut self) {
        self.inject.clear();
        for worker in &mut self.workers {
            worker.lifo = None;
            worker.local.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(workers: &mut Workers, w: u16) -> Option<u32> {
        let (slot, source) = workers.head(w)?;
        assert_eq!(workers.take(w, source), slot, "head and take agree");
        Some(slot)
    }

    #[test]
    fn the_lifo_slot_runs_first_and_displaces_to_the_back() {
        let mut ws = Workers::new(2);
        ws.push_back(0, 1);
        ws.push_lifo(0, 2);
        ws.push_lifo(0, 3);
        // 3 is in the LIFO slot; 2 went behind 1.
        assert_eq!(run(&mut ws, 0), Some(3));
        assert_eq!(run(&mut ws, 0), Some(1));
        assert_eq!(run(&mut ws, 0), Some(2));
        assert_eq!(run(&mut ws, 0), None);
    }

    #[test]
    fn the_lifo_slot_yields_to_the_queue_after_its_turns() {
        let mut ws = Workers::new(1);
        ws.push_back(0, 9);
        for _ in 0..LIFO_POLLS_MAX {
            ws.push_lifo(0, 5);
            assert_eq!(run(&mut ws, 0), Some(5));
        }
        ws.push_lifo(0, 5);
        assert_eq!(
            run(&mut ws, 0),
            Some(9),
            "the queue runs after 3 LIFO polls"
        );
        assert_eq!(run(&mut ws, 0), Some(5));
    }

    #[test]
    fn an_idle_worker_steals_half_of_a_queue_but_not_the_lifo_slot() {
        let mut ws = Workers::new(3);
        for slot in 10..15 {
            ws.push_back(1, slot);
        }
        ws.push_lifo(1, 99);
        assert_eq!(ws.head(0), Some((10, Source::Steal(1))));
        assert_eq!(run(&mut ws, 0), Some(10));
        // Three of five moved: 10 ran, 11 and 12 wait on worker 0.
        assert_eq!(run(&mut ws, 0), Some(11));
        assert_eq!(run(&mut ws, 0), Some(12));
        assert_eq!(run(&mut ws, 1), Some(99));
        assert_eq!(run(&mut ws, 1), Some(13));
        assert_eq!(ws.queued(), 1);
    }

    #[test]
    fn the_injection_queue_gets_its_turn_on_a_busy_worker() {
        let mut ws = Workers::new(1);
        ws.inject(7);
        let mut ran = Vec::new();
        for i in 0..GLOBAL_QUEUE_INTERVAL {
            ws.push_back(0, 100 + i);
            ran.push(run(&mut ws, 0).unwrap());
        }
        assert!(ran.contains(&7), "within {GLOBAL_QUEUE_INTERVAL} ticks");
    }
}
