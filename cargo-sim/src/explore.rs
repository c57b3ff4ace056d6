//! Guided exploration: a sweep spends part of its budget where the rare
//! states are. When a run satisfies a `sometimes` or a `reachable` that few
//! runs have satisfied, the moment it did is a branch point: more runs
//! replay that run up to there (its seed, and the branch points that led to
//! it) and draw everything after afresh (`sim_runtime::property::branch`).
//! A branch run that reaches a rarer state makes a deeper point, so a bug
//! behind several unlikely steps in a row is found step by step.
//!
//! The budget: with exploration, a test's last half of its seeds is kept
//! back. Once its first half has run, the kept runs go to branch runs, the
//! rarest point first (its property satisfied by the fewest runs, then the
//! newest); what no point takes runs as plain seeds. So `--seeds N` counts
//! every run, branches included, and a test with no property, or whose
//! properties are all common, runs its N seeds as before.

use crate::properties::Seen;
use sim_runtime::property::branch::{Cut, Plan};
use sim_runtime::property::Kind;
use sim_runtime::sweep::{FailureClass, SiteRecord};
use std::collections::{BTreeMap, BTreeSet};

/// A test runs exploration with at least this many seeds.
pub const SEEDS_MIN: usize = 10;
/// A property satisfied by more runs than this makes no more points.
const RARE_MAX: u64 = 3;
/// A point is tried while its property is rare: satisfied by at most
/// [`RARE_MAX`] runs, or by one run in this many or fewer (a common state is not
/// worth digging from).
const RARE_ONE_IN: u64 = 4;
/// Branch runs from one point at least before it is spent: a rare state
/// reached by several runs is tried from several of them. A larger budget
/// tries each point more (see `Explorer::tries_max`).
const TRIES_MIN: u64 = 16;
/// Points one property makes at most.
const POINTS_PER_SITE_MAX: usize = 32;
/// Points a test keeps at most (the budget bounds the runs anyway).
const POINTS_MAX: usize = 4_096;

/// A branch point: where a run first satisfied a rare property.
#[derive(Clone, Debug)]
struct Point {
    /// The index of the run's root seed among the test's seeds, and the seed.
    index: usize,
    seed: u64,
    /// The branch points that led to it, and then its own (salt 0, filled
    /// per try).
    plan: Plan,
    /// The property it satisfied.
    site: SiteRecord,
    tries: u64,
}

/// A branch run that failed: what replays it alone.
#[derive(Clone, Debug)]
pub struct BranchFailure {
    /// Its root seed.
    pub seed: u64,
    /// Its branch points (`SIM_BRANCH`).
    pub plan: Plan,
    /// Why it failed.
    pub class: FailureClass,
    /// The failure's message.
    pub message: String,
    /// The last lines the test printed.
    pub output: String,
}

/// One branch run to start.
#[derive(Clone, Debug)]
pub struct Branch {
    /// The root seed's index.
    pub index: usize,
    /// Its plan.
    pub plan: Plan,
}

/// A test's exploration.
#[derive(Clone, Debug, Default)]
pub struct Explorer {
    /// Seeds kept back for branch runs (the last ones of the test's list).
    pub reserve: usize,
    /// Branch runs started.
    pub started: usize,
    /// Branch runs that ended.
    pub runs: u64,
    /// Of them, those that ran forked at their point (the fork server):
    /// they cost their suffix, not their whole run.
    pub forked: u64,
    /// Branch runs whose process could not fork at their point (they ran
    /// from the start), and the first reason a process gave.
    pub unforked: u64,
    pub unforked_why: Option<String>,
    /// The kept seeds given back to plain runs (from this index on).
    pub released_from: Option<usize>,
    points: Vec<Point>,
    /// Points per property, and the plans already made (no point twice).
    per_site: BTreeMap<SiteRecord, usize>,
    made: BTreeSet<(u64, Plan)>,
    /// Plain runs that satisfied each property.
    satisfied: BTreeMap<SiteRecord, u64>,
    /// Plain runs seen.
    runs_seen: u64,
    /// Failed branch runs.
    pub failures: Vec<BranchFailure>,
    /// Branch runs to start first, one per process, outside the budget:
    /// saved ones (`sim-regressions/`, as saved seeds are) and those a
    /// process that could not fork left unrun (`requeue`; counted when
    /// first handed out). Popped from the end.
    saved: Vec<Branch>,
}

impl Explorer {
    /// The explorer of a test of `count` seeds (none below [`SEEDS_MIN`]),
    /// with its saved branch runs (the index of each one's root seed and
    /// its plan).
    pub fn new(count: usize, on: bool, saved: &[(usize, Plan)]) -> Explorer {
        Explorer {
            reserve: if on && count >= SEEDS_MIN {
                count / 2
            } else {
                0
            },
            saved: saved
                .iter()
                .rev()
                .map(|(index, plan)| Branch {
                    index: *index,
                    plan: plan.clone(),
                })
                .collect(),
            ..Explorer::default()
        }
    }

    /// A saved (or requeued) branch run to start first.
    pub fn next_saved(&mut self) -> Option<Branch> {
        self.saved.pop()
    }

    /// Whether saved (or requeued) branch runs wait to start.
    pub fn has_saved(&self) -> bool {
        !self.saved.is_empty()
    }

    /// The end of the seeds that run plain: before the kept ones, or all
    /// of them once the kept ones are given back.
    pub fn plain_end(&self, count: usize) -> usize {
        match self.released_from {
            Some(_) => count,
            None => count - self.reserve,
        }
    }

    /// Branch points found.
    pub fn points(&self) -> usize {
        self.points.len()
    }

    /// A run ended: the run of the root seed at `index` (with `plan`, for a
    /// branch run) saw `seen`. A rare property it satisfied after its last
    /// branch point makes a new point. Whether it made one.
    pub fn run_ended(&mut self, index: usize, seed: u64, plan: &Plan, seen: &Seen) -> bool {
        let points_before = self.points.len();
        // How rare a state is, is what plain runs say: branch runs start
        // at rare states, so they would make every dug state look common.
        let plain = plan.cuts.is_empty();
        if plain {
            self.runs_seen += 1;
        }
        for (site, held, fresh) in seen.satisfied() {
            if plain {
                *self.satisfied.entry(site.clone()).or_default() += 1;
            }
            if self.reserve == 0 || fresh == 0 {
                continue;
            }
            if !matches!(site.kind, Kind::Sometimes | Kind::Reachable) {
                continue;
            }
            let satisfied = self.satisfied.get(site).copied().unwrap_or(0);
            let rare = satisfied <= RARE_MAX || satisfied * RARE_ONE_IN <= self.runs_seen;
            let room = self.per_site.get(site).copied().unwrap_or(0) < POINTS_PER_SITE_MAX;
            if !rare || !room || self.points.len() >= POINTS_MAX {
                continue;
            }
            let point_plan = plan.then(Cut {
                salt: 0,
                nth: held - fresh + 1,
                location: site.location.clone(),
            });
            if !self.made.insert((seed, point_plan.clone())) {
                continue;
            }
            *self.per_site.entry(site.clone()).or_default() += 1;
            self.points.push(Point {
                index,
                seed,
                plan: point_plan,
                site: site.clone(),
                tries: 0,
            });
        }
        self.points.len() > points_before
    }

    /// Branch runs handed out that will not run (their batch was stopped
    /// early for a point found meanwhile): their tries and their budget
    /// come back.
    pub fn give_back(&mut self, branches: &[Branch]) {
        for branch in branches {
            let Some((last, prefix)) = branch.plan.cuts.split_last() else {
                continue;
            };
            let point = self.points.iter_mut().find(|p| {
                let (own, own_prefix) = p.plan.cuts.split_last().expect("a point has its cut");
                p.index == branch.index
                    && own_prefix == prefix
                    && (own.nth, &own.location) == (last.nth, &last.location)
            });
            if let Some(point) = point {
                point.tries = point.tries.saturating_sub(1);
                self.started = self.started.saturating_sub(1);
            }
        }
    }

    /// The next branch runs, all from one point, for one process (the
    /// fork server, `sim_runtime::property::fork`): the point is that of
    /// the property the fewest runs satisfied, the least tried of those
    /// (the newest on a tie), so a rare state reached by several runs is
    /// dug from all of them in turn. At most `max` runs. A batch whose
    /// run makes a new point stops early (the runner asks its process to
    /// fork no more, `give_back`), so the new point is dug at once. When
    /// fewer points than `jobs` (the processes with nothing else to run)
    /// have tries left, a point's tries are spread over them, so none waits
    /// idle. Empty when none can start.
    pub fn next_batch(&mut self, max: usize, jobs: usize) -> Vec<Branch> {
        let Some(at) = self.pick() else {
            return Vec::new();
        };
        // A point's first try runs alone: its news comes before any more
        // are committed (a point one step from a deeper one is common).
        let first = self.points[at].tries == 0;
        let tries_left = self.tries_max() - self.points[at].tries;
        let open = self.points.iter().filter(|p| self.worth_trying(p)).count();
        let share = match open >= jobs {
            true => tries_left,
            false => self.tries_max().div_ceil(jobs.max(1) as u64),
        };
        let count = (max as u64)
            .min(if first { 1 } else { u64::MAX })
            .min(share)
            .min(tries_left)
            .min((self.reserve - self.started) as u64)
            .max(1);
        (0..count).map(|_| self.try_point(at)).collect()
    }

    /// The point the next branch run starts from (see [`Explorer::next_batch`]).
    fn pick(&self) -> Option<usize> {
        if self.started >= self.reserve || self.released_from.is_some() {
            return None;
        }
        let satisfied = &self.satisfied;
        let (at, _) = self
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| self.worth_trying(p))
            .min_by_key(|(i, p)| {
                let rarity = satisfied.get(&p.site).copied().unwrap_or(0);
                (rarity, p.tries, usize::MAX - i)
            })?;
        Some(at)
    }

    /// One more try of point `at`.
    fn try_point(&mut self, at: usize) -> Branch {
        let point = &mut self.points[at];
        point.tries += 1;
        self.started += 1;
        let mut plan = point.plan.clone();
        let last = plan.cuts.last_mut().expect("a point has its own cut");
        // A salt of its own per try, the same in every sweep of the test.
        last.salt = salt(point.seed, point.tries, plan_depth(&point.plan));
        Branch {
            index: point.index,
            plan,
        }
    }

    /// Branch runs a process was given and did not run (it could not
    /// fork): each runs alone, replayed from the start, before any new
    /// one. They were counted in the budget when first handed out.
    pub fn requeue(&mut self, branches: Vec<Branch>) {
        self.saved.extend(branches.into_iter().rev());
    }

    /// Whether branch runs may still start: budget left, and a point with
    /// tries left.
    pub fn can_branch(&self) -> bool {
        self.released_from.is_none()
            && self.started < self.reserve
            && self.points.iter().any(|p| self.worth_trying(p))
    }

    /// Branch runs from one point at most: the kept budget over the points
    /// a property may make, so one rare state can take all of it.
    fn tries_max(&self) -> u64 {
        TRIES_MIN.max((self.reserve / POINTS_PER_SITE_MAX) as u64)
    }

    /// A point with tries left whose property is still rare.
    fn worth_trying(&self, point: &Point) -> bool {
        let satisfied = self.satisfied.get(&point.site).copied().unwrap_or(0);
        point.tries < self.tries_max()
            && (satisfied <= RARE_MAX || satisfied * RARE_ONE_IN <= self.runs_seen)
    }

    /// Gives the budget no branch run took back to plain seeds: they run
    /// from the first kept seed no branch run used.
    pub fn release(&mut self, count: usize) -> usize {
        let from = count - self.reserve + self.started;
        self.released_from = Some(from);
        from
    }
}

fn plan_depth(plan: &Plan) -> u64 {
    plan.cuts.len() as u64
}

/// A branch run's salt: from its root seed, its try and its depth.
fn salt(seed: u64, tries: u64, depth: u64) -> u64 {
    let mut x = seed ^ tries.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ depth.rotate_left(32);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (x ^ (x >> 31)) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: u32) -> SiteRecord {
        SiteRecord {
            kind: Kind::Reachable,
            location: format!("tests/deep.rs:{line}:9"),
            message: format!("stage {line}"),
        }
    }

    #[test]
    fn a_rare_state_makes_a_point_and_a_rarer_one_is_tried_first() {
        let mut explorer = Explorer::new(100, true, &[]);
        assert_eq!(explorer.plain_end(100), 50);
        let mut seen = Seen::default();
        seen.reached(site(1), 1, 0, 1, 0x7);
        seen.run_ended();
        explorer.run_ended(3, 0x7, &Plan::default(), &seen);
        assert_eq!(explorer.points(), 1);
        let first = explorer.next_batch(1, 1).pop().unwrap();
        assert_eq!(first.index, 3);
        assert_eq!(first.plan.cuts.len(), 1);
        assert_eq!(first.plan.cuts[0].location, "tests/deep.rs:1:9");
        // That branch run reaches stage 2: a deeper point, tried next.
        let mut deeper = Seen::default();
        deeper.reached(site(1), 1, 0, 0, 0x7);
        deeper.reached(site(2), 1, 0, 1, 0x7);
        explorer.run_ended(3, 0x7, &first.plan, &deeper);
        let next = explorer.next_batch(1, 1).pop().unwrap();
        assert_eq!(next.plan.cuts.len(), 2, "{next:?}", next = next.plan);
        assert_ne!(next.plan.cuts[0].salt, 0);
        // Without exploration, no points.
        let mut off = Explorer::new(100, false, &[]);
        off.run_ended(3, 0x7, &Plan::default(), &seen);
        assert!(off.next_batch(1, 1).pop().is_none());
        assert_eq!(off.plain_end(100), 100);
    }

    #[test]
    fn the_budget_left_goes_back_to_plain_seeds() {
        let mut explorer = Explorer::new(20, true, &[]);
        assert_eq!(explorer.reserve, 10);
        assert!(!explorer.can_branch());
        assert_eq!(explorer.release(20), 10);
        assert_eq!(explorer.plain_end(20), 20);
        assert!(explorer.next_batch(1, 1).pop().is_none());
    }

    #[test]
    fn a_batch_stopped_early_gives_its_unrun_tries_back() {
        let mut explorer = Explorer::new(1000, true, &[]);
        let mut seen = Seen::default();
        seen.reached(site(1), 1, 0, 1, 0x7);
        seen.run_ended();
        explorer.run_ended(3, 0x7, &Plan::default(), &seen);
        // The point's first try runs alone; then two idle jobs, one open
        // point: half its tries each.
        assert_eq!(explorer.next_batch(16, 2).len(), 1);
        let batch = explorer.next_batch(16, 2);
        assert_eq!(batch.len(), 8);
        assert_eq!(explorer.started, 9);
        let salts: BTreeSet<u64> = batch.iter().map(|b| b.plan.cuts[0].salt).collect();
        assert_eq!(salts.len(), 8, "a salt per run");
        // Three ran; five come back, and the next batch has room for them.
        explorer.give_back(&batch[3..]);
        assert_eq!(explorer.started, 4);
        assert_eq!(explorer.next_batch(16, 1).len(), 12);
    }
}
