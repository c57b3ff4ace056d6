//! The seed's draws, as the core wires them: the scheduler's stream, the
//! named streams, the user's randomness, and the decision log (a seam,
//! `crate::seams::DecisionLog`) that records or replays them.

use super::Core;
use crate::rng::Rng;
use crate::seams::{clamp, Value, RANDOM, SCHEDULE, SELECT};
use crate::task::table::Tasks;

impl Core {
    /// A uniform draw from the scheduler's stream in `0..n` (for choices
    /// that are scheduling decisions, like `select!`'s branch order).
    #[inline]
    pub fn sched_below(&self, n: u64) -> u64 {
        if self.deciding.get() {
            return self.decide(SELECT, n, || self.scheduler.borrow_mut().draw_below(n));
        }
        self.scheduler.borrow_mut().draw_below(n)
    }

    /// The next choice in `0..n` (`n == 0`: any 64 bits) of `stream` in the
    /// decision log: the replayed value, clamped to the range, or `draw()`.
    /// Without a log, `draw()`.
    pub fn decide(&self, stream: &str, n: u64, draw: impl FnOnce() -> u64) -> u64 {
        if !self.deciding.get() {
            return draw();
        }
        let mut decisions = self.decisions.borrow_mut();
        let Some(decisions) = decisions.as_mut() else {
            return draw();
        };
        let mut draw = Some(draw);
        let value = decisions.next(stream, &mut || {
            (draw.take().expect("a log draws at most once per value"))()
        });
        clamp(value, n)
    }

    /// Picks the next task among `among` (two or more ready slots) through
    /// the decision log: its index. The log names a pick by the task's id
    /// (0: the root future), so that a replay whose earlier picks were
    /// edited still means the same tasks; an id that is not ready, or
    /// `min`, is the first ready task.
    pub(super) fn log_pick(
        &self,
        among: &[u32],
        tasks: &Tasks,
        choose: &mut dyn FnMut() -> usize,
    ) -> usize {
        let mut chosen = None;
        let mut decisions = self.decisions.borrow_mut();
        let decisions = decisions
            .as_mut()
            .expect("picks through the log only with one");
        let value = decisions.next(SCHEDULE, &mut || {
            let index = choose();
            chosen = Some(index);
            tasks.id_of(among[index])
        });
        if let Some(index) = chosen {
            return index;
        }
        match value {
            Value::Min => 0,
            Value::Num(id) => among
                .iter()
                .position(|&s| tasks.id_of(s) == id)
                .unwrap_or(0),
        }
    }

    /// The next draw in `0..n` from the stream named `label` of this run's
    /// seed tree. The same seed and label give the same draws in every
    /// run, whatever other streams drew.
    pub fn stream_below(&self, label: &str, n: u64) -> u64 {
        assert!(
            n > 0,
            "a draw from stream {label:?} needs a non-empty range"
        );
        if self.deciding.get() {
            return self.decide(label, n, || {
                self.streams.borrow_mut().with(label, |rng| rng.below(n))
            });
        }
        self.streams.borrow_mut().with(label, |rng| rng.below(n))
    }

    /// The next 64 bits from the stream named `label` (see
    /// [`Core::stream_below`]).
    pub fn stream_u64(&self, label: &str) -> u64 {
        if self.deciding.get() {
            return self.decide(label, 0, || {
                self.streams.borrow_mut().with(label, Rng::next_u64)
            });
        }
        self.streams.borrow_mut().with(label, Rng::next_u64)
    }

    /// Fills `buf` from the run's stream for user randomness (what
    /// `getrandom` returns during a run).
    pub fn fill_random(&self, buf: &mut [u8]) {
        if !self.deciding.get() {
            self.streams.borrow_mut().fill_user(buf);
            return;
        }
        // Drawn as a run does, then logged 8 bytes per value; a replay
        // takes the bytes from the log.
        let mut drawn = vec![0u8; buf.len()];
        self.streams.borrow_mut().fill_user(&mut drawn);
        for (chunk, fresh) in buf.chunks_mut(8).zip(drawn.chunks(8)) {
            let mut bytes = [0u8; 8];
            bytes[..fresh.len()].copy_from_slice(fresh);
            let value = self.decide(RANDOM, 0, || u64::from_le_bytes(bytes));
            chunk.copy_from_slice(&value.to_le_bytes()[..chunk.len()]);
        }
    }
}
