//! What a sweep says: progress as it goes, a summary per test at the end,
//! and a JUnit file for CI.

use crate::properties::{self, Properties};
use crate::runner::{Counts, Outcome, Progress, TestResult};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How many failing seeds a summary lists per test.
pub const FAILING_SEEDS_SHOWN: usize = 5;

/// A bar on a terminal; a line now and then elsewhere (CI logs).
pub struct Reporter {
    bar: Option<indicatif::ProgressBar>,
    /// A soak run's end: progress says the time left, not a total.
    soak_until: Option<Instant>,
    started: Instant,
    last_line: Instant,
    /// The (done, failed) counts the last progress line showed.
    last_counts: Option<Counts>,
}

impl Reporter {
    /// A bar when stderr is a terminal, lines otherwise; for a soak run
    /// (`soak_until`), seeds so far and the time left.
    pub fn new(soak_until: Option<Instant>) -> Reporter {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            let template = if soak_until.is_some() {
                "{spinner} {pos} seeds, {msg}"
            } else {
                "{bar:30} {pos}/{len} seeds, {msg}, ETA {eta}"
            };
            bar.set_style(
                indicatif::ProgressStyle::with_template(template).expect("a valid template"),
            );
            bar.set_message("0 failing");
            bar
        });
        Reporter {
            bar,
            soak_until,
            started: Instant::now(),
            last_line: Instant::now(),
            last_counts: None,
        }
    }

    /// Clears the bar.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn print(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }
}

impl Progress for Reporter {
    fn update(&mut self, counts: &Counts) {
        let rate = counts.seeds as f64 / self.started.elapsed().as_secs_f64().max(1e-3);
        match &self.bar {
            Some(bar) => {
                bar.set_length(counts.total);
                bar.set_position(counts.seeds);
                let left = match self.soak_until {
                    Some(until) => format!(
                        ", {}s left",
                        until.saturating_duration_since(Instant::now()).as_secs()
                    ),
                    None => String::new(),
                };
                bar.set_message(format!(
                    "{}{} failing, {rate:.0} seeds/s{left}",
                    extra_runs(counts),
                    counts.failing
                ));
            }
            None if self.soak_until.is_some() => {
                if self.last_line.elapsed() > PROGRESS_EVERY {
                    self.last_line = Instant::now();
                    let left = self
                        .soak_until
                        .map(|u| u.saturating_duration_since(Instant::now()).as_secs())
                        .unwrap_or(0);
                    eprintln!(
                        "sim: {} seeds, {}{} failing, {rate:.0} seeds/s, {left}s left",
                        counts.seeds,
                        extra_runs(counts),
                        counts.failing
                    );
                }
            }
            None => {
                let line = progress_line(counts, self.last_counts, self.last_line.elapsed(), rate);
                if let Some(line) = line {
                    self.last_line = Instant::now();
                    self.last_counts = Some(*counts);
                    eprintln!("{line}");
                }
            }
        }
    }

    fn test_finished(&mut self, result: &TestResult) {
        if !result.passed() {
            self.print(&format!("sim: FAIL {}", result.case.name));
        }
    }
}

/// The replay command of `seed` for a test.
pub fn replay_line(result: &TestResult, seed: u64) -> String {
    // The settings that change a run (SIM_POLICY=pct, a time limit, ...)
    // come along, so the line replays the same run: a pinned saved seed's
    // own (`crate::regressions`), else the sweep's.
    let settings: String = match result.case.pinned_settings(seed) {
        Some(pinned) => pinned
            .iter()
            .map(|s| format!("{} ", shell_word(s)))
            .collect(),
        None => {
            let mut settings: String = crate::identity::sim_settings()
                .iter()
                .map(|s| format!("{} ", shell_word(s)))
                .collect();
            // A seed the portfolio ran under PCT names its policy.
            settings.push_str(&sim_runtime::sweep::portfolio::replay_settings(seed));
            settings
        }
    };
    // The command without the settings: they come once, before the seed.
    let command = &result.case.replay_command;
    if result.case.whole_binary {
        return format!("{settings}SIM_SEED={seed:#x} {command}");
    }
    // An ignored test runs only when asked for.
    let ignored = if result.case.ignored {
        " --include-ignored"
    } else {
        ""
    };
    format!(
        "{settings}SIM_SEED={seed:#x} {command} -- {} --exact{ignored}",
        result.case.name
    )
}

/// `word` as one shell word: as it is when that is safe, else quoted.
fn shell_word(word: &str) -> String {
    let safe = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_-=.,:/+@%".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// `text` with each line prefixed by `by`.
pub fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|l| format!("{by}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Failures by class: `panic 3, deadlock 1`.
pub fn classes(result: &TestResult) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, outcome) in result.failures() {
        if let Outcome::Fail { class, .. } = outcome {
            *counts.entry(class.as_str()).or_default() += 1;
        }
    }
    counts
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report of one failing test.
///
/// `output_shown`: the test's whole output was printed already (a replay of
/// one test at one seed), so one line says the failure.
pub fn failure_report(
    result: &TestResult,
    keep_going: bool,
    saved: Option<&str>,
    output_shown: bool,
) -> String {
    let failures = result.failures();
    let mut text = if output_shown && result.case.seeds.len() == 1 && failures.len() == 1 {
        one_seed_report(result, failures[0])
    } else {
        let mut text = failures_head(result, keep_going, &failures);
        for (i, (index, outcome)) in failures.iter().enumerate() {
            if i == FAILING_SEEDS_SHOWN {
                text.push_str(&format!(
                    "  ... and {} more failing seeds\n",
                    failures.len() - FAILING_SEEDS_SHOWN
                ));
                break;
            }
            text.push_str(&failing_seed(result, *index, outcome, i == 0));
        }
        text
    };
    if let Some(saved) = saved {
        text.push_str(&format!(
            "  saved to {saved}: every later cargo sim test runs it first (commit the file)\n"
        ));
    }
    let explorer = &result.explorer;
    if let Some(first) = explorer.failures.first() {
        // Branch runs failed too (a sweep that counts every run): how many,
        // and the first, replayable alone.
        text.push_str(&format!(
            "  and {} of its {} branch runs failed; the first:\n",
            explorer.failures.len(),
            explorer.runs
        ));
        text.push_str(&indent(branch_report(result, first).trim_end(), "  "));
        text.push('\n');
    }
    text
}

/// The class an outcome names (`pass` for a passing one).
fn class_of(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Fail { class, .. } => class.as_str(),
        Outcome::Pass(_) => "pass",
    }
}

/// `, trace sha256 <hash>` for the seed at `index`, if its failing run
/// gave one: what a replay must print again.
fn hash_said(result: &TestResult, index: usize) -> String {
    match result.failing_hashes.get(&index).and_then(|h| h.last()) {
        Some(hash) => format!(", trace sha256 {hash}"),
        None => String::new(),
    }
}

/// One seed (a replay): its whole output, with the message, the last
/// events and the replay line, was printed just above; one line says it,
/// and what the runner itself saw (a hang, a crash), which is not in the
/// test's output.
fn one_seed_report(result: &TestResult, (index, outcome): (usize, &Outcome)) -> String {
    let mut text = format!(
        "FAIL {} [{}]: seed {:#x} failed ({}){}\n",
        result.case.name,
        result.case.replay_prefix,
        result.case.seeds.get(index),
        class_of(outcome),
        hash_said(result, index)
    );
    if let Outcome::Fail {
        message, output, ..
    } = outcome
    {
        let first = message.lines().next().unwrap_or("").trim();
        if !first.is_empty() && !output.contains(first) {
            text.push_str(&indent(message.trim_end(), "    "));
            text.push('\n');
        }
    }
    text
}

/// The report's first line: how many seeds failed, or the one that did
/// and how many were not run after it.
fn failures_head(result: &TestResult, keep_going: bool, failures: &[(usize, &Outcome)]) -> String {
    let ran = result.outcomes.len();
    let planned = result.case.seeds.len();
    if keep_going || failures.len() != 1 {
        return format!(
            "FAIL {} [{}]: {} of {ran} seeds failed ({})\n",
            result.case.name,
            result.case.replay_prefix,
            failures.len(),
            classes(result),
        );
    }
    let (index, outcome) = failures[0];
    format!(
        "FAIL {} [{}]: seed {:#x} failed ({}) after {}; {} not run (--keep-going runs every seed)\n",
        result.case.name,
        result.case.replay_prefix,
        result.case.seeds.get(index),
        class_of(outcome),
        // The seeds that passed, counted (not every other seed that ran:
        // a determinism check can fail a seed the sweep passed).
        match ran - result.failures().len() {
            1 => "1 passing seed".to_string(),
            n => format!("{n} passing seeds"),
        },
        match planned - ran {
            1 => "1 more seed".to_string(),
            n => format!("{n} more seeds"),
        },
    )
}

/// One failing seed: its class, message, the test's last output lines
/// (for the first), and its replay line.
fn failing_seed(result: &TestResult, index: usize, outcome: &Outcome, first: bool) -> String {
    let Outcome::Fail {
        class,
        message,
        output,
    } = outcome
    else {
        return String::new();
    };
    let seed = result.case.seeds.get(index);
    // A seed the portfolio ran under PCT says so; a pinned saved seed
    // names the settings it ran with.
    let policy = match result.case.pinned_settings(seed) {
        Some(pinned) => format!("{} (as saved)", pinned.join(" ")),
        None => sim_runtime::sweep::portfolio::replay_settings(seed),
    };
    let policy = match policy.trim_end() {
        "" => String::new(),
        settings => format!(" ({settings})"),
    };
    let mut text = format!(
        "  seed {seed:#x}{policy}: {}{}\n",
        class.as_str(),
        hash_said(result, index)
    );
    text.push_str(&indent(message.trim_end(), "    "));
    text.push('\n');
    if first && !output.trim().is_empty() {
        text.push_str("    --- the test's last output lines ---\n");
        text.push_str(&indent(output.trim_end(), "    | "));
        text.push('\n');
    }
    text.push_str(&format!("    replay: {}\n", replay_line(result, seed)));
    text
}

/// A failed branch run (`crate::explore`): where it branched, its class,
/// message and output, and the line that replays it alone.
pub fn branch_report(result: &TestResult, failure: &crate::explore::BranchFailure) -> String {
    let explorer = &result.explorer;
    let points: Vec<String> = failure
        .plan
        .cuts
        .iter()
        .map(|c| format!("{} (satisfied {})", c.location, c.nth))
        .collect();
    let (runs, point_count) = (explorer.runs, explorer.points());
    // No point of this sweep: a branch run saved in sim-regressions/.
    let how = match point_count {
        0 => "a saved branch run".to_string(),
        _ => format!(
            "found by exploration after {runs} branch run{} from {point_count} branch point{}",
            if runs == 1 { "" } else { "s" },
            if point_count == 1 { "" } else { "s" },
        ),
    };
    let mut text = format!(
        "FAIL {} [{}]: a branch run of seed {:#x} failed ({}), {how}: it ran as the seed does \
         up to {}, and drew everything afresh from there\n",
        result.case.name,
        result.case.replay_prefix,
        failure.seed,
        failure.class.as_str(),
        points.join(", then afresh up to "),
    );
    text.push_str(&indent(failure.message.trim_end(), "    "));
    text.push('\n');
    if !failure.output.trim().is_empty() {
        text.push_str("    --- the test's last output lines ---\n");
        text.push_str(&indent(failure.output.trim_end(), "    | "));
        text.push('\n');
    }
    text.push_str(&format!(
        "    replay: {}={} {}\n",
        sim_runtime::settings::BRANCH.name,
        shell_word(&failure.plan.encode()),
        replay_line(result, failure.seed)
    ));
    text
}

/// `text` escaped for XML.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one testsuite, one testcase per test, failing seeds and
/// their replay commands in the failure's text.
pub fn junit(
    results: &[TestResult],
    identity: &crate::identity::Identity,
    elapsed: Duration,
) -> String {
    let failures = results.iter().filter(|r| !r.passed()).count();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"cargo sim test\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">\n",
        results.len(),
        elapsed.as_secs_f64()
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"cargo sim test\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{:.3}\">\n",
        results.len(),
        elapsed.as_secs_f64()
    ));
    xml.push_str("    <properties>\n");
    for (name, value) in [
        ("commit", identity.commit.clone()),
        ("rustc", identity.rustc.clone()),
        ("target", identity.target.clone()),
        ("facade", identity.facade.clone()),
        ("settings", identity.settings.join(" ")),
    ] {
        xml.push_str(&format!(
            "      <property name=\"{name}\" value=\"{}\"/>\n",
            xml_escape(&value)
        ));
    }
    xml.push_str("    </properties>\n");
    for result in results {
        xml.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">\n",
            xml_escape(&result.case.name),
            xml_escape(&result.case.replay_prefix),
            result.elapsed.as_secs_f64()
        ));
        if let (true, Some(branch)) = (
            result.failures().is_empty(),
            result.explorer.failures.first(),
        ) {
            // Only a branch run failed: its report, with its replay line.
            xml.push_str(&format!(
                "      <failure message=\"a branch run of seed {:#x} failed ({})\">",
                branch.seed,
                branch.class.as_str()
            ));
            xml.push_str(&xml_escape(&branch_report(result, branch)));
            xml.push_str("</failure>\n");
        } else if !result.passed() {
            let failing = result.failures();
            let first = failing.first().map(|(i, _)| result.case.seeds.get(*i));
            xml.push_str(&format!(
                "      <failure message=\"{} of {} seeds failed ({}){}\">",
                failing.len(),
                result.outcomes.len(),
                xml_escape(&classes(result)),
                first
                    .map(|s| format!("; first failing seed {s:#x}"))
                    .unwrap_or_default()
            ));
            xml.push_str(&xml_escape(&failure_report(result, true, None, false)));
            xml.push_str("</failure>\n");
        }
        xml.push_str(&junit_properties(&result.properties));
        xml.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            xml_escape(&format!("{} seeds run", result.outcomes.len()))
        ));
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// A testcase's `<properties>` in JUnit XML: one a property its runs
/// reached, named by kind, message and place, valued by what the runs did.
fn junit_properties(properties: &Properties) -> String {
    if properties.reached.is_empty() {
        return String::new();
    }
    let mut xml = String::from("      <properties>\n");
    for site in &properties.declared {
        let counts = properties.reached.get(site).cloned().unwrap_or_default();
        xml.push_str(&format!(
            "        <property name=\"{}\" value=\"{}\"/>\n",
            xml_escape(&format!("property: {}", properties::site_line(site))),
            xml_escape(&properties::describe(site.kind, &counts, properties.runs)),
        ));
    }
    xml.push_str("      </properties>\n");
    xml
}

/// Off a terminal, a progress line every [`PROGRESS_EVERY`]; when no seed
/// finished since the last one, only every [`PROGRESS_STILL_EVERY`], saying
/// so (a seed that waits for its hang limit prints a line a minute, not
/// the same line four times a minute).
const PROGRESS_EVERY: Duration = Duration::from_secs(15);
/// See [`PROGRESS_EVERY`].
const PROGRESS_STILL_EVERY: Duration = Duration::from_secs(60);

/// The progress line due now, if any: `counts` is (done, total, failed),
/// `last` the (done, failed) of the last line, `since` the time since it.
fn progress_line(
    counts: &Counts,
    last: Option<Counts>,
    since: Duration,
    rate: f64,
) -> Option<String> {
    let head = format!(
        "sim: {}/{} seeds, {}{} failing",
        counts.seeds,
        counts.total,
        extra_runs(counts),
        counts.failing
    );
    if last == Some(*counts) {
        return (since > PROGRESS_STILL_EVERY)
            .then(|| format!("{head}; no seed finished in the last {}s", since.as_secs()));
    }
    (since > PROGRESS_EVERY).then(|| format!("{head}, {rate:.0} seeds/s"))
}

/// The runs beyond the planned seeds: branch runs, determinism checks
/// (`3 branch runs, 2 checked, `), or nothing.
fn extra_runs(counts: &Counts) -> String {
    let mut text = String::new();
    if counts.branch_runs > 0 {
        let runs = match counts.branch_runs {
            1 => "1 branch run".to_string(),
            n => format!("{n} branch runs"),
        };
        text.push_str(&format!("{runs}, "));
    }
    if counts.checked > 0 {
        text.push_str(&format!("{} checked, ", counts.checked));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_say_something_new_or_say_that_nothing_moved() {
        let s = Duration::from_secs;
        let counts = |seeds, failing| Counts {
            seeds,
            total: 10,
            failing,
            ..Counts::default()
        };
        assert_eq!(
            progress_line(&counts(5, 0), Some(counts(3, 0)), s(16), 2.4).as_deref(),
            Some("sim: 5/10 seeds, 0 failing, 2 seeds/s")
        );
        assert_eq!(
            progress_line(&counts(5, 0), Some(counts(3, 0)), s(10), 2.4),
            None
        );
        // Nothing finished: no line before a minute, then one that says so.
        assert_eq!(
            progress_line(&counts(5, 0), Some(counts(5, 0)), s(16), 2.4),
            None
        );
        assert_eq!(
            progress_line(&counts(5, 0), Some(counts(5, 0)), s(61), 2.4).as_deref(),
            Some("sim: 5/10 seeds, 0 failing; no seed finished in the last 61s")
        );
        // Branch runs and checks are counted apart from the seeds.
        let more = Counts {
            branch_runs: 3,
            checked: 2,
            ..counts(5, 1)
        };
        assert_eq!(
            progress_line(&more, None, s(16), 2.4).as_deref(),
            Some("sim: 5/10 seeds, 3 branch runs, 2 checked, 1 failing, 2 seeds/s")
        );
    }
}
