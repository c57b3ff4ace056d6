//! What a test's sweep found: how it ran (`Mode`), its result
//! (`TestResult`), and the outcomes of its seeds, by seed index, in memory
//! that fits a sweep of any size: a passing seed is one bit (and its trace hashes,
//! only when something reads them again); a failing seed keeps its whole
//! outcome.

use crate::process::TestCase;
use sim_runtime::sweep::FailureClass;
use std::collections::BTreeMap;
use std::time::Duration;

/// What one seed of a test did.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// It passed; the trace hash of each of its runs.
    Pass(Vec<String>),
    /// It failed.
    Fail {
        /// Why.
        class: FailureClass,
        /// The failure's message.
        message: String,
        /// The last lines the test printed.
        output: String,
    },
}

/// How a test runs its seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Not known until its probe reports.
    Unknown,
    /// All seeds in one process (`#[tokio::test]`).
    InProcess,
    /// One process per seed (a plain `#[test]` that runs a simulation).
    PerProcess,
    /// It ran no simulation: once is enough.
    NotSimulated,
}

/// The result of a test's sweep.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// The test.
    pub case: TestCase,
    /// How it ran.
    pub mode: Mode,
    /// Outcomes by seed index.
    pub outcomes: crate::outcomes::Outcomes,
    /// Wall time spent in its processes.
    pub elapsed: Duration,
    /// The trace hashes of each failing seed's runs (the last is the run
    /// that failed), by seed index.
    pub failing_hashes: BTreeMap<usize, Vec<String>>,
    /// What its runs said of the properties (`tokio::sim::assert_*`).
    pub properties: crate::properties::Properties,
    /// Its exploration: branch points, branch runs, their failures.
    pub explorer: crate::explore::Explorer,
    /// Seeds `--check-determinism` ran again in a fresh process and
    /// compared.
    pub checked: u64,
}

impl TestResult {
    /// The failing seed indexes, in order.
    pub fn failures(&self) -> Vec<(usize, &Outcome)> {
        self.outcomes.failures().collect()
    }

    /// Whether the test passed every seed it ran.
    pub fn passed(&self) -> bool {
        self.failures().is_empty() && self.explorer.failures.is_empty() && !self.outcomes.is_empty()
    }
}

/// The outcomes of one test's seeds.
#[derive(Clone, Debug, Default)]
pub struct Outcomes {
    /// Bit `i` is set when seed index `i` passed.
    passed: Vec<u64>,
    /// The hashes of passing seeds that kept them (the determinism check).
    pass_hashes: BTreeMap<usize, Vec<String>>,
    failed: BTreeMap<usize, Outcome>,
    /// Seeds with an outcome.
    count: usize,
}

impl Outcomes {
    fn has_pass(&self, index: usize) -> bool {
        self.passed
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    fn clear_pass(&mut self, index: usize) {
        if let Some(word) = self.passed.get_mut(index / 64) {
            *word &= !(1 << (index % 64));
        }
    }

    /// Whether seed index `index` has an outcome.
    pub fn contains_key(&self, index: &usize) -> bool {
        self.has_pass(*index) || self.failed.contains_key(index)
    }

    /// Records seed index `index`'s outcome (replacing one it had).
    pub fn insert(&mut self, index: usize, outcome: Outcome) {
        if self.contains_key(&index) {
            self.remove(index);
        }
        self.count += 1;
        match outcome {
            Outcome::Pass(hashes) => {
                if self.passed.len() <= index / 64 {
                    self.passed.resize(index / 64 + 1, 0);
                }
                self.passed[index / 64] |= 1 << (index % 64);
                if !hashes.is_empty() {
                    self.pass_hashes.insert(index, hashes);
                }
            }
            fail => {
                self.failed.insert(index, fail);
            }
        }
    }

    fn remove(&mut self, index: usize) {
        if self.has_pass(index) {
            self.clear_pass(index);
            self.pass_hashes.remove(&index);
            self.count -= 1;
        } else if self.failed.remove(&index).is_some() {
            self.count -= 1;
        }
    }

    /// Seeds with an outcome.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no seed has an outcome yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The failing seeds, by index.
    pub fn failures(&self) -> impl Iterator<Item = (usize, &Outcome)> {
        self.failed.iter().map(|(i, o)| (*i, o))
    }

    /// Forgets the outcomes of seed indexes past `index`: they come after a
    /// failure found late, and would not be reported. With `keep_passes`,
    /// passing seeds past it stay.
    pub fn forget_past(&mut self, index: usize, keep_passes: bool) {
        let later: Vec<usize> = self.failed.range(index + 1..).map(|(i, _)| *i).collect();
        for i in later {
            self.remove(i);
        }
        if keep_passes {
            return;
        }
        // Bounded: the words past `index`.
        for word in index / 64..self.passed.len() {
            let mut bits = self.passed[word];
            while bits != 0 {
                let bit = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let i = word * 64 + bit;
                if i > index {
                    self.remove(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail() -> Outcome {
        Outcome::Fail {
            class: FailureClass::Panic,
            message: String::new(),
            output: String::new(),
        }
    }

    #[test]
    fn passes_are_bits_and_failures_are_kept() {
        let mut outcomes = Outcomes::default();
        for i in 0..200 {
            outcomes.insert(i, Outcome::Pass(Vec::new()));
        }
        outcomes.insert(70, fail());
        assert_eq!(outcomes.len(), 200);
        assert_eq!(
            outcomes.failures().map(|(i, _)| i).collect::<Vec<_>>(),
            [70]
        );
        outcomes.forget_past(70, false);
        assert_eq!(outcomes.len(), 71);
        assert!(outcomes.contains_key(&70) && !outcomes.contains_key(&71));
        outcomes.insert(150, fail());
        outcomes.forget_past(100, true);
        assert_eq!(outcomes.len(), 71);
    }
}
