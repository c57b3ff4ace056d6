//! What a sweep says of the properties (`tokio::sim::assert_always!` and
//! the rest): per test, each property's runs that satisfied it, failed it
//! and never reached it, and the first seed that satisfied it; per binary,
//! the properties no run of the sweep satisfied. A test process declares
//! every site of its binary before its first run (`declare` records) and
//! reports, after each run, the sites the run reached (`property` records).

mod page;

pub use page::page;
use sim_runtime::property::Kind;
use sim_runtime::sweep::SiteRecord;
use std::collections::{BTreeMap, BTreeSet};

/// One property's counts over a test's runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Runs that reached it.
    pub reached: u64,
    /// Runs that satisfied it (see `Kind::satisfied_by`).
    pub satisfied: u64,
    /// Runs it failed (a broken `always`, a reached `unreachable`).
    pub failed: u64,
    /// The first seed (by its index in the sweep, then the seed) of a run
    /// that satisfied it.
    pub first_satisfied: Option<(usize, u64)>,
}

/// What one seed's runs said, held until the seed's outcome is known: a
/// seed past a test's first failure is not counted, as it is not reported.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// Sites reached: the site, its evaluations that held and did not,
    /// those that held after the run's last branch point, the run's seed.
    reached: Vec<(SiteRecord, u64, u64, u64, u64)>,
    /// Runs ended.
    runs: u64,
}

impl Seen {
    /// A run of the seed reached `site`.
    pub fn reached(&mut self, site: SiteRecord, held: u64, broken: u64, fresh: u64, seed: u64) {
        self.reached.push((site, held, broken, fresh, seed));
    }

    /// The sites the runs satisfied, with their held and fresh counts.
    pub fn satisfied(&self) -> impl Iterator<Item = (&SiteRecord, u64, u64)> {
        self.reached
            .iter()
            .filter(|(site, held, broken, _, _)| site.kind.satisfied_by(*held, *broken))
            .map(|(site, held, _, fresh, _)| (site, *held, *fresh))
    }

    /// A run of the seed ended.
    pub fn run_ended(&mut self) {
        self.runs += 1;
    }
}

/// What a test's runs said of the properties.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    /// Every site of the test's binary.
    pub declared: BTreeSet<SiteRecord>,
    /// The sites its runs reached, with their counts.
    pub reached: BTreeMap<SiteRecord, Counts>,
    /// Runs counted (`run` records of the sweep's processes).
    pub runs: u64,
}

impl Properties {
    /// A site of the binary.
    pub fn declare(&mut self, site: SiteRecord) {
        self.declared.insert(site);
    }

    /// Counts a seed's runs; `index` is the seed's place in the sweep.
    pub fn add(&mut self, seen: Seen, index: usize) {
        self.runs += seen.runs;
        for (site, held, broken, _, seed) in seen.reached {
            self.reached(site, held, broken, seed, index);
        }
    }

    /// A run reached `site`: its evaluations held `held` times and did not
    /// `broken` times. `seed` is the run's, `index` its place in the sweep.
    fn reached(&mut self, site: SiteRecord, held: u64, broken: u64, seed: u64, index: usize) {
        let kind = site.kind;
        self.declared.insert(site.clone());
        let counts = self.reached.entry(site).or_default();
        counts.reached += 1;
        if kind.satisfied_by(held, broken) {
            counts.satisfied += 1;
            if counts
                .first_satisfied
                .is_none_or(|(first, _)| index < first)
            {
                counts.first_satisfied = Some((index, seed));
            }
        }
        if (broken > 0 && kind.fails_on(false)) || (held > 0 && kind.fails_on(true)) {
            counts.failed += 1;
        }
    }

    /// Whether the test's binary has any property site.
    pub fn any(&self) -> bool {
        !self.declared.is_empty()
    }

    /// Whether some run satisfied `site` (a `sometimes` held, an `always`
    /// or a `reachable` was reached).
    pub fn witnessed(&self, site: &SiteRecord) -> bool {
        self.reached.get(site).is_some_and(|c| match site.kind {
            Kind::Always => c.reached > 0,
            _ => c.satisfied > 0,
        })
    }
}

/// The lines that list a test's properties, one a site of its binary, in
/// columns: kind, message, where, what the runs did.
pub fn test_lines(name: &str, properties: &Properties) -> Vec<String> {
    let rows: Vec<[String; 4]> = properties
        .declared
        .iter()
        .map(|site| {
            let counts = properties.reached.get(site).cloned().unwrap_or_default();
            [
                site.kind.as_str().to_string(),
                format!("\"{}\"", site.message),
                site.location.clone(),
                describe(site.kind, &counts, properties.runs),
            ]
        })
        .collect();
    let width = |column: usize| rows.iter().map(|r| r[column].chars().count()).max();
    let (kind_w, message_w, location_w) = (
        width(0).unwrap_or(0),
        width(1).unwrap_or(0),
        width(2).unwrap_or(0),
    );
    let mut lines = vec![format!(
        "  {name} ({}):",
        crate::plural(properties.runs as usize, "run")
    )];
    for [kind, message, location, what] in rows {
        lines.push(format!(
            "    {kind:<kind_w$}  {message:<message_w$}  {location:<location_w$}  {what}"
        ));
    }
    lines
}

/// What a test's exploration did, for the report: branch runs, branch
/// points, failed branch runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Explored {
    /// Branch runs that ended.
    pub runs: u64,
    /// Of them, those that ran forked at their point.
    pub forked: u64,
    /// Branch points found.
    pub points: usize,
    /// Branch runs that failed.
    pub failed: usize,
}

/// The sweep's properties as JSON (`--report FILE`): each test's, with
/// its counts and what its exploration did, and each binary's never
/// satisfied. `tests` gives a test's binary label, its name, its
/// properties and its exploration.
pub fn json<'a>(
    tests: impl Iterator<Item = (String, &'a str, &'a Properties, Explored)>,
    never: &[(String, SiteRecord, bool)],
) -> serde_json::Value {
    let site_json = |site: &SiteRecord| {
        serde_json::json!({
            "kind": site.kind.as_str(),
            "message": site.message,
            "location": site.location,
        })
    };
    let tests: Vec<serde_json::Value> = tests
        .filter(|(_, _, properties, _)| !properties.reached.is_empty())
        .map(|(binary, test, properties, explored)| {
            let list: Vec<serde_json::Value> = properties
                .declared
                .iter()
                .map(|site| {
                    let counts = properties.reached.get(site).cloned().unwrap_or_default();
                    let mut entry = site_json(site);
                    entry["runs_reached"] = counts.reached.into();
                    entry["runs_satisfied"] = counts.satisfied.into();
                    entry["runs_failed"] = counts.failed.into();
                    entry["runs_not_reached"] =
                        properties.runs.saturating_sub(counts.reached).into();
                    entry["first_satisfied_seed"] = counts
                        .first_satisfied
                        .map(|(_, seed)| format!("{seed:#x}"))
                        .into();
                    entry
                })
                .collect();
            serde_json::json!({
                "binary": binary,
                "test": test,
                "runs": properties.runs,
                "branch_runs": explored.runs,
                "branch_runs_forked": explored.forked,
                "branch_points": explored.points,
                "branch_runs_failed": explored.failed,
                "properties": list,
            })
        })
        .collect();
    let never: Vec<serde_json::Value> = never
        .iter()
        .map(|(binary, site, fails)| {
            let mut entry = site_json(site);
            entry["binary"] = binary.clone().into();
            entry["fails_the_sweep"] = (*fails).into();
            entry
        })
        .collect();
    serde_json::json!({ "tests": tests, "never_satisfied": never })
}

/// What a test's runs did with one property, in words.
pub fn describe(kind: Kind, counts: &Counts, runs: u64) -> String {
    if counts.reached == 0 {
        return "never reached".to_string();
    }
    let never = match runs.saturating_sub(counts.reached) {
        0 => String::new(),
        n => format!("; not reached in {n}"),
    };
    let first = counts.first_satisfied.map_or(String::new(), |(_, seed)| {
        format!(", first at seed {seed:#x}")
    });
    let reached = counts.reached;
    match kind {
        Kind::Always | Kind::AlwaysOrUnreachable if counts.failed == 0 => {
            format!("held in {}{never}", plural_runs(reached))
        }
        Kind::Always | Kind::AlwaysOrUnreachable => format!(
            "FAILED in {} of {reached} that reached it{never}",
            plural_runs(counts.failed)
        ),
        Kind::Sometimes if counts.satisfied == 0 => {
            format!("never held (reached in {}{never})", plural_runs(reached))
        }
        Kind::Sometimes => format!(
            "held in {} of {reached} that reached it{first}{never}",
            plural_runs(counts.satisfied)
        ),
        Kind::Reachable => format!("reached in {}{first}", plural_runs(reached)),
        Kind::Unreachable => format!("REACHED in {}", plural_runs(reached)),
    }
}

fn plural_runs(n: u64) -> String {
    crate::plural(n as usize, "run")
}

/// The sites of a binary that need a run to satisfy them (an `always`, a
/// `sometimes`, a `reachable`) and that no test of the sweep satisfied.
pub fn never_satisfied<'a>(tests: impl Iterator<Item = &'a Properties> + Clone) -> Vec<SiteRecord> {
    let mut declared = BTreeSet::new();
    for properties in tests.clone() {
        declared.extend(properties.declared.iter().cloned());
    }
    declared
        .into_iter()
        .filter(|site| site.kind.needs_a_witness())
        .filter(|site| !tests.clone().any(|p| p.witnessed(site)))
        .collect()
}

/// A site in one line: `sometimes "message" at file:line:column`.
pub fn site_line(site: &SiteRecord) -> String {
    format!(
        "{} \"{}\" at {}",
        site.kind.as_str(),
        site.message,
        site.location
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(kind: Kind, message: &str) -> SiteRecord {
        SiteRecord {
            kind,
            location: format!("src/lib.rs:{}:5", message.len()),
            message: message.to_string(),
        }
    }

    #[test]
    fn a_sometimes_is_witnessed_by_a_run_where_it_held() {
        let mut properties = Properties::default();
        let timed_out = site(Kind::Sometimes, "timed out");
        properties.reached(timed_out.clone(), 0, 3, 7, 2);
        let mut seen = Seen::default();
        seen.run_ended();
        properties.add(seen, 0);
        assert_eq!(properties.runs, 1);
        assert!(!properties.witnessed(&timed_out));
        properties.reached(timed_out.clone(), 1, 0, 9, 1);
        properties.reached(timed_out.clone(), 1, 0, 5, 4);
        assert!(properties.witnessed(&timed_out));
        let counts = &properties.reached[&timed_out];
        assert_eq!((counts.reached, counts.satisfied), (3, 2));
        assert_eq!(
            counts.failed, 0,
            "a sometimes that did not hold failed nothing"
        );
        assert_eq!(counts.first_satisfied, Some((1, 9)), "the earliest index");
    }

    #[test]
    fn never_satisfied_spans_the_tests_of_a_binary() {
        let always = site(Kind::Always, "always");
        let maybe = site(Kind::AlwaysOrUnreachable, "maybe");
        let reach = site(Kind::Reachable, "reach");
        let mut a = Properties::default();
        for s in [&always, &maybe, &reach] {
            a.declare(s.clone());
        }
        let mut b = a.clone();
        b.reached(reach.clone(), 1, 0, 1, 0);
        assert_eq!(never_satisfied([&a, &b].into_iter()), vec![always.clone()]);
        a.reached(always.clone(), 4, 0, 1, 0);
        assert!(never_satisfied([&a, &b].into_iter()).is_empty());
    }

    #[test]
    fn a_line_says_what_the_runs_did() {
        let mut properties = Properties {
            runs: 10,
            ..Properties::default()
        };
        properties.declare(site(Kind::Reachable, "never"));
        properties.reached(site(Kind::Sometimes, "held"), 2, 1, 0x2a, 3);
        properties.reached(site(Kind::Always, "broke"), 1, 1, 0x2b, 0);
        let lines = test_lines("t", &properties).join("\n");
        assert!(lines.contains("  t (10 runs):"), "{lines}");
        assert!(lines.contains("never reached"), "{lines}");
        assert!(
            lines.contains(
                "held in 1 run of 1 that reached it, first at seed 0x2a; not reached in 9"
            ),
            "{lines}"
        );
        assert!(
            lines.contains("FAILED in 1 run of 1 that reached it"),
            "{lines}"
        );
    }
}
