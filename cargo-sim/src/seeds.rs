//! Which seeds a sweep runs: `--seeds N`, `A..B` or a list, split by
//! `--partition K/N` across machines.

use sim_runtime::config::parse_seed;

/// The most seeds one sweep takes: a bound on every queue of the runner.
pub const SEEDS_MAX: u64 = 100_000_000;

/// Parses `--seeds`: `N` (the seeds 0 to N-1, a decimal count), `A..B` (A
/// included, B not), `A..=B`, or a comma-separated list. Seeds are decimal
/// or `0x` hex; a count in hex is an error that points to `--seed`.
pub fn parse_seeds(text: &str) -> Result<SeedSpec, String> {
    let text = text.trim();
    let bad = |why: &str| {
        format!(
            "--seeds {text:?} {why}: expected a count (--seeds 1000), a range (--seeds \
             1000..2000, --seeds 0x10..=0x20) or a list (--seeds 0x2a,7,0x1f)"
        )
    };
    let seed = |s: &str| parse_seed(s).map_err(|_| bad(&format!("has a bad seed {s:?}")));
    let seeds = if let Some((a, b)) = text.split_once("..") {
        let (b, inclusive) = match b.strip_prefix('=') {
            Some(b) => (b, true),
            None => (b, false),
        };
        let (a, b) = (seed(a)?, seed(b)?);
        let end = if inclusive {
            b.checked_add(1).ok_or_else(|| bad("ends past u64::MAX"))?
        } else {
            b
        };
        if end <= a {
            return Err(bad("is an empty range"));
        }
        if end - a > SEEDS_MAX {
            return Err(bad(&format!("has more than {SEEDS_MAX} seeds")));
        }
        SeedSpec::Every {
            start: a,
            count: end - a,
            step: 1,
        }
    } else if text.contains(',') {
        SeedSpec::List(
            text.split(',')
                .filter(|s| !s.trim().is_empty())
                .map(seed)
                .collect::<Result<_, _>>()?,
        )
    } else {
        if text.starts_with("0x") || text.starts_with("0X") {
            // A count is decimal: a hex number is a seed.
            return Err(format!(
                "--seeds {text}: a count is decimal, and {text} is written as a seed. To run \
                 the one seed {text}, use --seed {text}; for that many seeds, write the count \
                 in decimal"
            ));
        }
        let count: u64 = text.parse().map_err(|_| bad("has a bad count"))?;
        if count == 0 {
            return Err(bad("asks for no seeds"));
        }
        if count > SEEDS_MAX {
            return Err(bad(&format!("has more than {SEEDS_MAX} seeds")));
        }
        SeedSpec::Every {
            start: 0,
            count,
            step: 1,
        }
    };
    if seeds.is_empty() {
        return Err(bad("names no seed"));
    }
    Ok(seeds)
}

/// The seeds a sweep asked for, never held whole: a progression (`--seeds
/// N`, `A..B`, and a share of either) or a list the user wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeedSpec {
    /// `start, start + step, ...`, `count` seeds.
    Every {
        /// The first seed.
        start: u64,
        /// How many.
        count: u64,
        /// The distance between two seeds.
        step: u64,
    },
    /// These seeds, in order.
    List(Vec<u64>),
}

impl SeedSpec {
    /// One seed.
    pub fn one(seed: u64) -> SeedSpec {
        SeedSpec::List(vec![seed])
    }

    /// How many seeds.
    pub fn len(&self) -> u64 {
        match self {
            SeedSpec::Every { count, .. } => *count,
            SeedSpec::List(seeds) => seeds.len() as u64,
        }
    }

    /// Whether it holds no seed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `p`-th seed.
    pub fn get(&self, p: u64) -> u64 {
        debug_assert!(p < self.len(), "a seed past the spec");
        match self {
            SeedSpec::Every { start, step, .. } => start.wrapping_add(p.wrapping_mul(*step)),
            SeedSpec::List(seeds) => seeds[p as usize],
        }
    }
}

/// The seeds of one test: its saved seeds first (`sim-regressions/`, a
/// few), then the sweep's. A saved seed the sweep also holds runs twice.
#[derive(Clone, Debug)]
pub struct SeedList {
    saved: Vec<u64>,
    spec: std::sync::Arc<SeedSpec>,
}

impl SeedList {
    /// `saved`, then `spec`.
    pub fn new(saved: Vec<u64>, spec: std::sync::Arc<SeedSpec>) -> SeedList {
        SeedList { saved, spec }
    }

    /// How many seeds.
    pub fn len(&self) -> usize {
        self.saved.len() + self.spec.len() as usize
    }

    /// The seed at index `i`.
    pub fn get(&self, i: usize) -> u64 {
        match self.saved.get(i) {
            Some(seed) => *seed,
            None => self.spec.get((i - self.saved.len()) as u64),
        }
    }

    /// The seeds at `indices`, as the items of `SIM_SWEEP_SEEDS`: the saved
    /// ones singly, the sweep's as one progression (a list's singly).
    pub fn items(&self, indices: Indices) -> Vec<sim_runtime::sweep::SeedItem> {
        use sim_runtime::sweep::SeedItem;
        let mut items = Vec::new();
        let saved = self.saved.len();
        let mut p = 0;
        // Bounded: the saved seeds are a few.
        while let Some(i) = indices.get(p).filter(|&i| i < saved) {
            items.push(SeedItem::One(self.saved[i]));
            p += 1;
        }
        let Some(first) = indices.get(p) else {
            return items;
        };
        let rest = indices.from(p);
        match &*self.spec {
            SeedSpec::Every { start, step, .. } => {
                let n = rest.len() as u64;
                let at = |k: u64| {
                    start.wrapping_add(
                        ((first - saved) as u64 + k * indices.step as u64).wrapping_mul(*step),
                    )
                };
                if n == 1 {
                    items.push(SeedItem::One(at(0)));
                } else {
                    let last = at(n - 1);
                    items.push(SeedItem::Every {
                        start: at(0),
                        end: last.saturating_add(1),
                        step: (indices.step as u64).wrapping_mul(*step).max(1),
                    });
                    if last == u64::MAX {
                        // `end` cannot say it: the last one alone.
                        items.push(SeedItem::One(last));
                    }
                }
            }
            SeedSpec::List(seeds) => {
                for k in 0..rest.len() {
                    let i = rest.get(k).expect("within its length");
                    items.push(SeedItem::One(seeds[i - saved]));
                }
            }
        }
        items
    }
}

/// Seed indexes of a test: `first`, `first + step`, ... below `end` (a
/// share of a sweep, or one seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indices {
    /// The first index.
    pub first: usize,
    /// The distance between two.
    pub step: usize,
    /// The bound (not included).
    pub end: usize,
}

impl Indices {
    /// The one index `i`.
    pub fn one(i: usize) -> Indices {
        Indices {
            first: i,
            step: 1,
            end: i + 1,
        }
    }

    /// How many.
    pub fn len(&self) -> usize {
        if self.first >= self.end {
            0
        } else {
            (self.end - self.first - 1) / self.step + 1
        }
    }

    /// The `p`-th index.
    pub fn get(&self, p: usize) -> Option<usize> {
        let i = self.first.checked_add(p.checked_mul(self.step)?)?;
        (i < self.end).then_some(i)
    }

    /// The indexes from the `p`-th on.
    pub fn from(&self, p: usize) -> Indices {
        Indices {
            first: self.first.saturating_add(p.saturating_mul(self.step)),
            ..*self
        }
    }
}

/// Parses `--for`: a number and a unit (`s`, `m`, `h`, `d`; seconds when
/// none).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "--for {text:?} is not a duration: expected a number and a unit, such as --for \
             30s, --for 45m, --for 8h or --for 2d"
        )
    };
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number.parse().map_err(|_| bad())?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n.checked_mul(60).ok_or_else(bad)?,
        "h" => n.checked_mul(3_600).ok_or_else(bad)?,
        "d" => n.checked_mul(86_400).ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    if secs == 0 {
        return Err(bad());
    }
    Ok(std::time::Duration::from_secs(secs))
}

/// The seeds of a soak run: fresh ones from `base` on, more than any run
/// can use.
pub fn soak_seeds(base: u64) -> SeedSpec {
    SeedSpec::Every {
        start: base,
        count: u64::MAX / 4,
        step: 1,
    }
}

/// The variable a Kubernetes Indexed Job sets in each pod: its index, from
/// 0.
pub const JOB_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

/// `--partition K/N`: this machine's share of the seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Which share, from 1.
    pub index: u64,
    /// How many shares.
    pub count: u64,
}

impl Partition {
    /// Parses `K/N` with 1 <= K <= N, or `auto/N`: K from the environment
    /// a CI engine sets (a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`,
    /// which counts from 0).
    pub fn parse(text: &str) -> Result<Partition, String> {
        Self::parse_with(text, |name| std::env::var(name).ok()) // Kubernetes', not a SIM_ variable
    }

    fn parse_with(text: &str, env: impl Fn(&str) -> Option<String>) -> Result<Partition, String> {
        let bad = || {
            format!(
                "--partition {text:?} is not a share: expected K/N with 1 <= K <= N, such as \
                 --partition 2/4 (the second of four machines), or auto/N on a Kubernetes \
                 Indexed Job (K from JOB_COMPLETION_INDEX)"
            )
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let k = if k.trim() == "auto" {
            let index = env(JOB_INDEX_VAR).ok_or_else(|| {
                format!(
                    "--partition {text}: {JOB_INDEX_VAR} is not set, so this is not a \
                     Kubernetes Indexed Job's pod. Give the share itself: --partition K/N"
                )
            })?;
            let index: u64 = index.trim().parse().map_err(|_| {
                format!("--partition {text}: {JOB_INDEX_VAR}={index:?} is not a number")
            })?;
            (index + 1).to_string()
        } else {
            k.to_string()
        };
        let index: u64 = k.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Partition { index, count })
    }

    /// The seeds of this share: every N-th, starting at the K-th. Shares are
    /// disjoint and together cover the seeds, whatever their order.
    pub fn select(&self, seeds: &SeedSpec) -> SeedSpec {
        let skip = self.index - 1;
        match seeds {
            SeedSpec::Every { start, count, step } => SeedSpec::Every {
                start: start.wrapping_add(skip.wrapping_mul(*step)),
                count: if *count > skip {
                    (count - skip - 1) / self.count + 1
                } else {
                    0
                },
                step: step.wrapping_mul(self.count),
            },
            SeedSpec::List(list) => SeedSpec::List(
                list.iter()
                    .enumerate()
                    .filter(|(i, _)| *i as u64 % self.count == skip)
                    .map(|(_, s)| *s)
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soak_durations() {
        assert_eq!(parse_duration("8h").unwrap().as_secs(), 8 * 3_600);
        assert_eq!(parse_duration("90").unwrap().as_secs(), 90);
        assert_eq!(parse_duration("5s").unwrap().as_secs(), 5);
        for bad in ["", "0s", "5x", "h", "-3m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    /// A share's items give back exactly its seeds, saved ones first.
    #[test]
    fn a_shares_items_are_its_seeds() {
        use sim_runtime::sweep::SeedItem;
        let list = SeedList::new(
            vec![0x2a, 5],
            std::sync::Arc::new(parse_seeds("10..1000").unwrap()),
        );
        for share in 0..3 {
            let indices = Indices {
                first: share,
                step: 3,
                end: list.len(),
            };
            let want: Vec<u64> = (0..indices.len())
                .map(|p| list.get(indices.get(p).unwrap()))
                .collect();
            let got: Vec<u64> = list
                .items(indices)
                .into_iter()
                .flat_map(SeedItem::seeds)
                .collect();
            assert_eq!(got, want, "share {share}");
            assert!(list.items(indices).len() <= 3);
        }
    }

    #[test]
    fn a_count_in_hex_is_refused_and_points_to_seed() {
        let err = parse_seeds("0x15").unwrap_err();
        assert!(err.contains("--seed 0x15"), "{err}");
        assert_eq!(parse_seeds("0x15,").unwrap(), SeedSpec::List(vec![0x15]));
        assert_eq!(parse_seeds("21").unwrap().len(), 21);
    }

    #[test]
    fn auto_takes_the_share_from_a_kubernetes_indexed_job() {
        let job = |index: &'static str| {
            move |name: &str| (name == JOB_INDEX_VAR).then(|| index.to_string())
        };
        assert_eq!(
            Partition::parse_with("auto/4", job("2")).unwrap(),
            Partition { index: 3, count: 4 }
        );
        assert!(Partition::parse_with("auto/4", job("4")).is_err());
        let err = Partition::parse_with("auto/4", |_| None).unwrap_err();
        assert!(err.contains("JOB_COMPLETION_INDEX is not set"), "{err}");
    }

    #[test]
    fn counts_ranges_and_lists() {
        assert_eq!(all(&parse_seeds("3").unwrap()), vec![0, 1, 2]);
        assert_eq!(all(&parse_seeds("5..8").unwrap()), vec![5, 6, 7]);
        assert_eq!(all(&parse_seeds("0x10..=0x12").unwrap()), vec![16, 17, 18]);
        assert_eq!(all(&parse_seeds("0x2a, 7,0x1f").unwrap()), vec![42, 7, 31]);
        for bad in ["0", "8..5", "5..5", "x", "1..y", ",", "200000000"] {
            let message = parse_seeds(bad).unwrap_err();
            assert!(message.contains("--seeds"), "{message}");
        }
    }

    fn all(spec: &SeedSpec) -> Vec<u64> {
        (0..spec.len()).map(|p| spec.get(p)).collect()
    }

    #[test]
    fn partitions_are_disjoint_and_cover_the_seeds() {
        for seeds in [
            parse_seeds("1000").unwrap(),
            parse_seeds("7,3,9,1,5").unwrap(),
        ] {
            let mut got: Vec<u64> = Vec::new();
            for k in 1..=3 {
                let share = all(&Partition { index: k, count: 3 }.select(&seeds));
                assert!(share.iter().all(|s| !got.contains(s)), "disjoint");
                got.extend(share);
            }
            got.sort_unstable();
            let mut want = all(&seeds);
            want.sort_unstable();
            assert_eq!(got, want);
        }
        for bad in ["0/3", "4/3", "1", "a/b", "1/0"] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Partition::parse("2/4").unwrap(),
            Partition { index: 2, count: 4 }
        );
    }
}
