//! Which seeds a sweep runs: `--seeds N`, `A..B` or a list, split by
//! `--partition K/N` across machines.

use sim_runtime::config::parse_seed;

/// The most seeds one sweep takes: a bound on every queue of the runner.
pub const SEEDS_MAX: u64 = 100_000_000;

/// Parses `--seeds`: `N` (the seeds 0 to N-1, a decimal count), `A..B` (A
/// included, B not), `A..=B`, or a comma-separated list. Seeds are decimal
/// or `0x` hex; a count in hex is an error that points to `--seed`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, String> {
    let text = text.trim();
    let bad = |why: &str| {
        format!(
            "--seeds {text:?} {why}: expected a count (--seeds 1000), a range (--seeds \
             1000..2000, --seeds 0x10..=0x20) or a list (--seeds 0x2a,7,0x1f)"
        )
    };
    let seed = |s: &str| parse_seed(s).map_err(|_| bad(&format!("has a bad seed {s:?}")));
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
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
        (a..end).collect()
    } else if text.contains(',') {
        text.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(seed)
            .collect::<Result<_, _>>()?
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
        (0..count).collect()
    };
    if seeds.is_empty() {
        return Err(bad("names no seed"));
    }
    Ok(seeds)
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
        Self::parse_with(text, |name| std::env::var(name).ok())
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
    /// disjoint and together cover the list, whatever its order.
    pub fn select(&self, seeds: &[u64]) -> Vec<u64> {
        seeds
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % self.count == self.index - 1)
            .map(|(_, s)| *s)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_in_hex_is_refused_and_points_to_seed() {
        let err = parse_seeds("0x15").unwrap_err();
        assert!(err.contains("--seed 0x15"), "{err}");
        assert_eq!(parse_seeds("0x15,").unwrap(), vec![0x15]);
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
        assert_eq!(parse_seeds("3").unwrap(), vec![0, 1, 2]);
        assert_eq!(parse_seeds("5..8").unwrap(), vec![5, 6, 7]);
        assert_eq!(parse_seeds("0x10..=0x12").unwrap(), vec![16, 17, 18]);
        assert_eq!(parse_seeds("0x2a, 7,0x1f").unwrap(), vec![42, 7, 31]);
        for bad in ["0", "8..5", "5..5", "x", "1..y", ",", "200000000"] {
            let message = parse_seeds(bad).unwrap_err();
            assert!(message.contains("--seeds"), "{message}");
        }
    }

    #[test]
    fn partitions_are_disjoint_and_cover_the_seeds() {
        let seeds = parse_seeds("1000").unwrap();
        let mut all: Vec<u64> = Vec::new();
        for k in 1..=3 {
            let share = Partition { index: k, count: 3 }.select(&seeds);
            assert!(share.iter().all(|s| !all.contains(s)), "disjoint");
            all.extend(share);
        }
        all.sort_unstable();
        assert_eq!(all, seeds);
        for bad in ["0/3", "4/3", "1", "a/b", "1/0"] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Partition::parse("2/4").unwrap(),
            Partition { index: 2, count: 4 }
        );
    }
}
