//! Phase 7: the report. Each failing test's report, its first failing seed
//! saved (a soak run's every one), shrunk, traced or drawn as asked; the
//! doc tests' and broken targets' failures; the JUnit file; and the two
//! closing lines (the second, on stdout, is the one CI reads).

use super::build::Built;
use super::carried::FRESH_PROCESS_SEEDS_MAX;
use super::doc::DocTests;
use super::plan::Plan;
use super::sweep::Swept;
use super::Halt;
use crate::plural;
use crate::properties;
use crate::runner::{self, Mode, Outcome, TestResult};
use sim_runtime::sweep::{FailureClass, SiteRecord};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What the results add up to.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    seeds_run: usize,
    not_simulated: usize,
    /// Runs from branch points (`crate::explore`), and the points.
    branch_runs: usize,
    branch_forked: u64,
    /// Branch runs that could not fork, and the first reason given.
    branch_unforked: u64,
    unforked_why: Option<String>,
    branch_points: usize,
    /// Seeds `--check-determinism` compared, and those whose fresh run
    /// differed.
    checked: u64,
    nondeterministic: usize,
}

/// Prints the report and gives the exit code: 0 when everything passed,
/// 101 otherwise (or the signal's, when interrupted).
pub(crate) fn report(
    plan: &Plan,
    built: &Built,
    swept: &Swept,
    docs: &DocTests,
    started: Instant,
    built_in: Duration,
) -> Result<ExitCode, Halt> {
    let swept_from = started + built_in;
    let mut tally = Tally::default();
    for (index, result) in swept.results.iter().enumerate() {
        tally.seeds_run += result.outcomes.len() + result.explorer.runs as usize;
        tally.branch_runs += result.explorer.runs as usize;
        tally.branch_forked += result.explorer.forked;
        tally.branch_unforked += result.explorer.unforked;
        if tally.unforked_why.is_none() {
            tally.unforked_why.clone_from(&result.explorer.unforked_why);
        }
        tally.branch_points += result.explorer.points();
        tally.checked += result.checked;
        tally.nondeterministic += result
            .failures()
            .iter()
            .filter(|(_, o)| {
                matches!(
                    o,
                    Outcome::Fail {
                        class: FailureClass::Nondeterminism,
                        ..
                    }
                )
            })
            .count();
        if result.mode == Mode::NotSimulated {
            tally.not_simulated += 1;
        }
        if report_one(plan, built, swept, index, result) {
            tally.passed += 1;
        } else {
            tally.failed += 1;
        }
    }
    for failure in &docs.failures {
        eprintln!("{failure}");
    }
    for target in &built.broken {
        eprintln!(
            "FAIL {} {} (build): it does not compile; its first error:\n{}",
            target.package,
            target.target,
            crate::report::indent(&target.error, "    ")
        );
    }
    let unsatisfied = properties(plan, built, swept)?;
    write_junit(plan, built, swept, started.elapsed())?;
    let green = tally.failed == 0
        && docs.failures.is_empty()
        && built.broken.is_empty()
        && unsatisfied == 0;
    if green {
        let _ = std::fs::remove_dir_all(&swept.work_dir);
    }
    closing_lines(
        &tally,
        built,
        docs,
        unsatisfied,
        swept_from.elapsed(),
        built_in,
    );
    if let Some(signal) = crate::signals::received() {
        return Err(Halt::Signal(signal));
    }
    Ok(if green {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    })
}

/// Reports one test's result; whether it passed.
fn report_one(
    plan: &Plan,
    built: &Built,
    swept: &Swept,
    index: usize,
    result: &TestResult,
) -> bool {
    let rerun = result.case.fresh_process_per_seed;
    let carried_seed = swept.carried.get(&index).copied();
    if let (Some(seed), true) = (carried_seed, rerun) {
        eprintln!(
            "sim: {} carries state from one seed to the next (a static, a process-wide \
             counter, a cache): seed {seed:#x} failed after other seeds ran in its process \
             and passes alone. Its {} ran again, one process each; the outcome below is \
             theirs.",
            result.case.name,
            plural(result.case.seeds.len(), "seed")
        );
    }
    if result.passed() {
        return true;
    }
    if let Some(first) = result.explorer.failures.first() {
        if result.failures().is_empty() {
            // Only a branch run failed: its report, its replay line, and
            // the run saved (its root seed and branch points).
            eprint!("{}", crate::report::branch_report(result, first));
            if saves(plan) {
                save_branch(built, result, first);
            }
            return false;
        }
    }
    // A seed that failed in a process shared with other seeds must fail
    // alone too, or its replay line would not reproduce it (too many seeds
    // to run again one process each).
    let carried = carried_seed.filter(|_| !rerun);
    let saved = match carried {
        None if saves(plan) => save(plan, built, result),
        _ => None,
    };
    if result.outcomes.is_empty() {
        eprintln!(
            "FAIL {} [{}]: it never ran (the binary did not run it by this name)",
            result.case.name, result.case.replay_prefix
        );
        return false;
    }
    eprint!(
        "{}",
        crate::report::failure_report(
            result,
            plan.options.keep_going,
            saved.as_deref(),
            swept.single
        )
    );
    if let Some(seed) = carried {
        eprintln!(
            "  seed {seed:#x} passes when it runs alone: it failed only after other seeds ran \
             in the same process, so the test carries state from one seed to the next (a \
             static, a process-wide counter, a cache) and its replay line does not \
             reproduce it. Not saved, and its {} are too many to run again one process \
             each (at most {FRESH_PROCESS_SEEDS_MAX}). `--check-determinism` runs each seed \
             again in a fresh process and names the first event where the runs part.",
            plural(result.case.seeds.len(), "seed")
        );
    }
    if let Some(&seed) = swept.fifo_passes.get(&index) {
        eprintln!(
            "  seed {seed:#x} passes when ready tasks run in the order they became ready, as \
             tokio's current_thread runtime runs them (SIM_POLICY=fifo, the same seed): the \
             failure needs another order of tasks, one a multi_thread runtime can give. If the \
             test means to rely on current_thread's order, run it with SIM_POLICY=fifo."
        );
    }
    if crate::signals::received().is_none() {
        follow_up(plan, built, swept, result);
    }
    false
}

/// Whether failing seeds are saved: not with `--no-save`, nor in a replay
/// (its seed came from a saved line or a report: saving it again would add
/// a line for each replay of a seed the sweep's line already holds).
fn saves(plan: &Plan) -> bool {
    !plan.options.no_save && !plan.is_replay()
}

/// Saves a failed branch run to the package's `sim-regressions/`, and says
/// so.
fn save_branch(built: &Built, result: &TestResult, failure: &crate::explore::BranchFailure) {
    let binary = &built.binaries[result.case.binary];
    let entry = saved_entry(result, failure.seed, Some(failure.plan.clone()));
    let saved = crate::regressions::save(binary, &result.case.name, &entry, failure.class.as_str());
    match saved {
        Ok(Some(file)) => eprintln!(
            "  saved to {}: every later cargo sim test runs this branch run first (commit the \
             file)",
            file.strip_prefix(&built.sim.root)
                .unwrap_or(&file)
                .display()
        ),
        Ok(None) => {}
        Err(message) => eprintln!("sim: error: {message}"),
    }
}

/// The saved line of `seed`: with the settings it ran with (its pinned
/// ones, or this sweep's for it), so it replays that run.
fn saved_entry(
    result: &TestResult,
    seed: u64,
    plan: Option<sim_runtime::property::branch::Plan>,
) -> crate::regressions::Entry {
    let settings = match result.case.pinned_settings(seed) {
        Some(pinned) => pinned.to_vec(),
        None => crate::regressions::run_settings(seed),
    };
    crate::regressions::Entry {
        seed,
        plan,
        settings: Some(settings),
    }
}

/// Saves the failing seeds to the package's `sim-regressions/` (a soak
/// run's every one, up to the file's bound; a sweep's first); the file's
/// path as the report names it.
fn save(plan: &Plan, built: &Built, result: &TestResult) -> Option<String> {
    let binary = &built.binaries[result.case.binary];
    let keep = if plan.soak.is_some() {
        crate::regressions::SEEDS_PER_TEST_MAX
    } else {
        1
    };
    let mut saved = None;
    for (index, outcome) in result.failures().into_iter().take(keep) {
        let Outcome::Fail { class, .. } = outcome else {
            continue;
        };
        let seed = result.case.seeds.get(index);
        let entry = saved_entry(result, seed, None);
        match crate::regressions::save(binary, &result.case.name, &entry, class.as_str()) {
            Ok(Some(path)) => {
                let shown = path.strip_prefix(&built.sim.root).unwrap_or(&path);
                saved = Some(shown.display().to_string());
            }
            Ok(None) => {}
            Err(message) => eprintln!("sim: error: {message}"),
        }
    }
    saved
}

/// What the user asked to have done with a failing test's seeds:
/// `--shrink`, `--trace --trace-failing`, `--timeline`.
fn follow_up(plan: &Plan, built: &Built, swept: &Swept, result: &TestResult) {
    let options = &plan.options;
    let first = result
        .failures()
        .into_iter()
        .next()
        .map(|(index, _)| result.case.seeds.get(index));
    let (config, binaries) = (&swept.config, &built.binaries);
    if let (Some(dir), Some(seed)) = (&options.shrink, first) {
        match crate::shrink::shrink(config, binaries, &result.case, seed, dir) {
            Ok(report) => eprintln!("  {report}"),
            Err(message) => eprintln!("sim: error: cannot shrink {}: {message}", result.case.name),
        }
    }
    if let (true, Some(dir)) = (options.trace_failing, &swept.traces) {
        trace_failing(swept, built, result, dir);
    }
    if let (Some(dir), Some(seed)) = (&options.timeline, first) {
        match runner::trace_seed(config, binaries, &result.case, seed)
            .and_then(|trace| crate::timeline::for_failure(&trace, dir, &result.case.name, seed))
        {
            Ok(line) => eprintln!("  {line}"),
            Err(message) => eprintln!(
                "sim: error: no timeline for {}: {message}",
                result.case.name
            ),
        }
    }
}

/// `--trace DIR --trace-failing`: each failing seed (up to the saved
/// file's bound) runs again to write its trace.
fn trace_failing(swept: &Swept, built: &Built, result: &TestResult, dir: &std::path::Path) {
    let failures = result.failures();
    for (index, _) in failures
        .into_iter()
        .take(crate::regressions::SEEDS_PER_TEST_MAX)
    {
        let seed = result.case.seeds.get(index);
        match runner::trace_failing(&swept.config, &built.binaries, &result.case, seed, dir) {
            Ok(path) => eprintln!("  trace of seed {seed:#x}: {}", path.display()),
            Err(message) => eprintln!(
                "sim: error: no trace of {} seed {seed:#x}: {message}",
                result.case.name
            ),
        }
    }
}

/// `--junit FILE`.
fn write_junit(plan: &Plan, built: &Built, swept: &Swept, elapsed: Duration) -> Result<(), String> {
    let Some(path) = &plan.options.junit else {
        return Ok(());
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {} for --junit: {e}", parent.display()))?;
    }
    let xml = crate::report::junit(&swept.results, &built.identity, elapsed);
    std::fs::write(path, xml).map_err(|e| format!("cannot write --junit {}: {e}", path.display()))
}

/// Lists each binary's properties, test by test, and the ones no run
/// satisfied, and writes them to `--report`; how many of those fail the
/// sweep (none when it ran one seed, ran some of a binary's tests only, or
/// `--allow-unreached` was given).
fn properties(plan: &Plan, built: &Built, swept: &Swept) -> Result<usize, Halt> {
    let mut never = Vec::new();
    for (index, binary) in built.binaries.iter().enumerate() {
        let label = format!("{} {}", binary.package, binary.target_label());
        for (site, fails) in binary_properties(plan, built, swept, index, &label) {
            never.push((label.clone(), site, fails));
        }
    }
    if let Some(path) = &plan.options.report {
        let tests = swept.results.iter().map(|r| {
            let binary = &built.binaries[r.case.binary];
            let label = format!("{} {}", binary.package, binary.target_label());
            let explored = properties::Explored {
                runs: r.explorer.runs,
                forked: r.explorer.forked,
                points: r.explorer.points(),
                failed: r.explorer.failures.len(),
            };
            (label, r.case.name.as_str(), &r.properties, explored)
        });
        let json = properties::json(tests, &never);
        let text = serde_json::to_string_pretty(&json).expect("JSON values print");
        std::fs::write(path, text + "\n")
            .map_err(|e| format!("cannot write --report {}: {e}", path.display()))?;
        let mut html = path.with_extension("html");
        if html == *path {
            html = path.with_extension("page.html");
        }
        std::fs::write(&html, properties::page(&json, "cargo sim test: properties"))
            .map_err(|e| format!("cannot write {}: {e}", html.display()))?;
        eprintln!(
            "sim: properties written to {} and {}",
            path.display(),
            html.display()
        );
    }
    Ok(never.iter().filter(|(_, _, fails)| *fails).count())
}

/// Prints the properties of binary `index` (named `label`); its sites no
/// run satisfied, each with whether it fails the sweep.
fn binary_properties(
    plan: &Plan,
    built: &Built,
    swept: &Swept,
    index: usize,
    label: &str,
) -> Vec<(SiteRecord, bool)> {
    let tests: Vec<&TestResult> = swept
        .results
        .iter()
        .filter(|r| r.case.binary == index && r.properties.any())
        .collect();
    if tests.is_empty() {
        return Vec::new();
    }
    eprintln!("sim: properties of {label}:");
    // A test whose runs reached none says nothing the others do not.
    for result in tests.iter().filter(|r| !r.properties.reached.is_empty()) {
        for line in properties::test_lines(&result.case.name, &result.properties) {
            eprintln!("{line}");
        }
    }
    let never = properties::never_satisfied(tests.iter().map(|r| &r.properties));
    if never.is_empty() {
        return Vec::new();
    }
    let why_not = if plan.options.allow_unreached {
        Some("--allow-unreached")
    } else if plan.seeds.len() <= 1 {
        Some("one seed")
    } else {
        left_out(built, swept, index)
    };
    let verdict = why_not.map_or_else(
        || "the sweep fails; --allow-unreached lets it pass".to_string(),
        |why| format!("not a failure: {why}"),
    );
    eprintln!(
        "sim: {} of {label} never satisfied ({verdict}):",
        plural(never.len(), "property"),
    );
    for site in &never {
        eprintln!("  {}", properties::site_line(site));
    }
    never
        .into_iter()
        .map(|site| (site, why_not.is_none()))
        .collect()
}

/// Why the sweep left some tests of binary `index` out, if it did (a
/// property no run satisfied may be theirs): a filter, or `#[ignore]`,
/// whose tests run only when asked for (their properties are in the
/// binary all the same).
fn left_out(built: &Built, swept: &Swept, index: usize) -> Option<&'static str> {
    let binary = &built.binaries[index];
    if crate::compile::without_harness(binary) {
        // Run whole, once per seed: it has no tests to leave out.
        return None;
    }
    let ran: std::collections::BTreeSet<&str> = swept
        .results
        .iter()
        .filter(|r| r.case.binary == index)
        .map(|r| r.case.name.as_str())
        .collect();
    let Ok(all) = crate::compile::list_tests(binary, &["--include-ignored".to_string()]) else {
        // Unlisted, the binary may have tests the sweep did not run.
        return Some("its tests could not be listed");
    };
    let mut left = all.iter().filter(|test| !ran.contains(test.name.as_str()));
    let first = left.next()?;
    match first.ignored && left.all(|test| test.ignored) {
        true => Some("its #[ignore]d tests did not run; --include-ignored runs them"),
        false => Some("a filter left some of its tests out"),
    }
}

/// What `--check-determinism` found, passing or not.
fn determinism_line(tally: &Tally) {
    let checked = plural(tally.checked as usize, "seed");
    match tally.nondeterministic {
        0 => eprintln!(
            "sim: determinism: {checked} ran again in a fresh process, every run's trace the same"
        ),
        n => eprintln!(
            "sim: determinism: {checked} ran again in a fresh process; {n} gave another trace (nondeterminism)"
        ),
    }
}

/// What the runner itself (this process: the sweep's bookkeeping, not the
/// tests nor cargo) spent on CPU per seed, for the time line: the
/// overhead a sweep adds to each run.
fn runner_cpu_per_seed(seeds: usize) -> String {
    if seeds == 0 {
        return String::new();
    }
    // SAFETY: getrusage only writes the struct it is given, which is
    // plain data (all-zero is a valid value).
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return String::new();
        }
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    let cpu_us = micros(usage.ru_utime) + micros(usage.ru_stime);
    format!(
        "; the runner's own CPU {:.2}s, {:.0} µs a seed",
        cpu_us / 1e6,
        cpu_us / seeds as f64
    )
}

/// How many branch runs forked at their point (`, 960 forked at their
/// point`).
fn forked_text(tally: &Tally) -> String {
    match tally.branch_forked {
        0 => String::new(),
        n => format!(", {n} forked at their point"),
    }
}

/// Branch runs that could not fork at their point, and the first reason a
/// process gave: a line of their own, so a slower sweep explains itself.
fn unforked_line(tally: &Tally) {
    if let (n @ 1.., Some(why)) = (tally.branch_unforked, &tally.unforked_why) {
        let runs = if n == 1 { "branch run" } else { "branch runs" };
        eprintln!("sim: {n} {runs} could not fork at their point and ran from the start: {why}");
    }
}

/// The seeds and time line (stderr), then the counts (stdout).
fn closing_lines(
    tally: &Tally,
    built: &Built,
    docs: &DocTests,
    unsatisfied: usize,
    swept: Duration,
    built_in: Duration,
) {
    let not_simulated = match tally.not_simulated {
        0 => String::new(),
        n => format!("; {} no simulation, so once each", plural(n, "test ran")),
    };
    let explored = match (tally.branch_runs, tally.branch_points) {
        (0, _) => String::new(),
        (n, 0) => format!(
            "; {n} of them saved branch run{}",
            if n == 1 { "" } else { "s" }
        ),
        (n, points) => format!(
            "; {n} of them branch run{} from {points} branch point{}{} (--no-explore runs \
             every seed plain)",
            if n == 1 { "" } else { "s" },
            if points == 1 { "" } else { "s" },
            forked_text(tally),
        ),
    };
    let doc = match (docs.ran(), docs.failures.is_empty()) {
        (false, _) => "",
        (true, true) => "; doc tests passed",
        (true, false) => "; doc tests failed",
    };
    eprintln!(
        "sim: {} in {:.2}s ({:.0} seeds/s; the build took {:.1}s{}){explored}{not_simulated}{doc}",
        plural(tally.seeds_run, "seed"),
        swept.as_secs_f64(),
        tally.seeds_run as f64 / swept.as_secs_f64().max(1e-3),
        built_in.as_secs_f64(),
        runner_cpu_per_seed(tally.seeds_run),
    );
    unforked_line(tally);
    if tally.checked > 0 {
        determinism_line(tally);
    }
    let broken = match built.broken.len() {
        0 => String::new(),
        1 => " (1 target does not compile)".to_string(),
        n => format!(" ({n} targets do not compile)"),
    };
    let unsatisfied = match unsatisfied {
        0 => String::new(),
        n => format!(", {} never satisfied", plural(n, "property")),
    };
    println!(
        "sim: {} passed, {} failed{broken}{unsatisfied}",
        tally.passed,
        tally.failed + docs.failures.len() + built.broken.len(),
    );
}
