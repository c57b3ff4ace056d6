//! Failing seeds, kept: `sim-regressions/<target>.txt` in the package's
//! directory, one line per seed. Commit the file; every later `cargo sim
//! test` runs its seeds first, so a bug once found stays found.
//!
//! ```text
//! # Seeds that failed under `cargo sim test`; each one runs first in every
//! # later `cargo sim test`. Commit this file. Delete a line to drop a seed.
//! lost_update 0x2 panic SIM_POLICY=random
//! deep 0x7 panic SIM_PCT_DEPTH=3 SIM_PCT_HORIZON=1000 SIM_POLICY=pct
//! deep_race 0x1f panic branch=0x9e3@1@tests/deep.rs:26:18 SIM_POLICY=random
//! ```
//!
//! A line holds every setting that chose its run ([`run_settings`]): the
//! policy the seed ran under (the portfolio's, or the uniform draw), and
//! the `SIM_*` settings of the sweep that found it (`SIM_SWARM=1`, ...). A
//! later sweep that would run the seed otherwise (under the portfolio, or
//! with `--swarm`) runs it in a process of its own with those settings
//! (the runner), so it replays the run that was saved, hash for hash.
//! A line without settings (an older file's) runs as the sweep runs.
//!
//! A failing branch run (`crate::explore`) is its root seed and its
//! branch points (`branch=`, as `SIM_BRANCH` holds them): it runs first as
//! a branch run.

use crate::compile::TestBinary;
use sim_runtime::property::branch::Plan;
use std::path::PathBuf;

const HEADER: &str = "# Seeds that failed under `cargo sim test`; each one runs first in every\n\
# later `cargo sim test`. Commit this file. Delete a line to drop a seed.\n\
# <test name> <seed> <failure class> [branch=<points>] <the settings it ran with>\n";

/// The most seeds kept per test: enough to pin a bug, few enough to rerun
/// on every test run.
pub const SEEDS_PER_TEST_MAX: usize = 8;

/// One saved line of a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub seed: u64,
    /// A failed branch run's points.
    pub plan: Option<Plan>,
    /// The `NAME=value` settings its run had, sorted; `None` on a line
    /// that records none.
    pub settings: Option<Vec<String>>,
}

/// The regressions file of a test binary.
pub fn path(binary: &TestBinary) -> PathBuf {
    binary
        .manifest_dir
        .join("sim-regressions")
        .join(format!("{}.txt", binary.file_stem()))
}

/// The settings that chose `seed`'s run in this sweep, sorted: the `SIM_*`
/// settings (`crate::identity::sim_settings`) and, unless one names it,
/// the policy (the portfolio's for the seed, or `SIM_POLICY=random`).
pub fn run_settings(seed: u64) -> Vec<String> {
    let mut settings = crate::identity::sim_settings();
    let named = settings.iter().any(|s| s.starts_with("SIM_POLICY="));
    if !named {
        let portfolio = sim_runtime::settings::SWEEP_PORTFOLIO.is_on();
        match sim_runtime::sweep::portfolio::pct(seed).filter(|_| portfolio) {
            Some((depth, horizon)) => settings.extend([
                "SIM_POLICY=pct".to_string(),
                format!("SIM_PCT_DEPTH={depth}"),
                format!("SIM_PCT_HORIZON={horizon}"),
            ]),
            None => settings.push("SIM_POLICY=random".to_string()),
        }
    }
    settings.sort();
    settings
}

/// Every line of `test`, in file order.
pub fn load(binary: &TestBinary, test: &str) -> Vec<Entry> {
    let Ok(text) = std::fs::read_to_string(path(binary)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(parse_line)
        .filter(|(name, _)| name == test)
        .map(|(_, entry)| entry)
        .collect()
}

/// A line's test name and entry (`None` for a comment or a line that is
/// not one).
fn parse_line(line: &str) -> Option<(String, Entry)> {
    if line.trim_start().starts_with('#') {
        return None;
    }
    let mut fields = line.split_whitespace();
    let name = fields.next()?.to_string();
    let seed = sim_runtime::config::parse_seed(fields.next()?).ok()?;
    let _class = fields.next();
    let mut plan = None;
    let mut settings: Option<Vec<String>> = None;
    for field in fields {
        if let Some(points) = field.strip_prefix("branch=") {
            plan = Plan::parse(points).ok();
        } else if field.starts_with("SIM_") && field.contains('=') {
            settings
                .get_or_insert_with(Vec::new)
                .push(field.to_string());
        }
    }
    if let Some(settings) = &mut settings {
        settings.sort();
    }
    Some((
        name,
        Entry {
            seed,
            plan,
            settings,
        },
    ))
}

/// Adds `entry` for `test` unless it is there; returns the file's path
/// when it wrote.
pub fn save(
    binary: &TestBinary,
    test: &str,
    entry: &Entry,
    class: &str,
) -> Result<Option<PathBuf>, String> {
    let known = load(binary, test);
    let same = known
        .iter()
        .any(|k| k.seed == entry.seed && k.plan == entry.plan);
    if same || known.len() >= SEEDS_PER_TEST_MAX {
        return Ok(None);
    }
    let file = path(binary);
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    if text.is_empty() {
        text.push_str(HEADER);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("{test} {:#x} {class}", entry.seed));
    if let Some(plan) = &entry.plan {
        text.push_str(&format!(" branch={}", plan.encode()));
    }
    for setting in entry.settings.iter().flatten() {
        text.push(' ');
        text.push_str(setting);
    }
    text.push('\n');
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(Some(file))
}

/// Adds the seeds of the regressions file `from` (a shard's) to the file at
/// `to` (in this workspace), each test keeping at most
/// `SEEDS_PER_TEST_MAX`; returns how many seeds it added.
pub fn merge_file(from: &std::path::Path, to: &std::path::Path) -> Result<usize, String> {
    let theirs = std::fs::read_to_string(from).map_err(|e| format!("{}: {e}", from.display()))?;
    let mut text = std::fs::read_to_string(to).unwrap_or_default();
    let mut added = 0;
    for line in theirs.lines() {
        let Some((test, entry)) = parse_line(line) else {
            continue;
        };
        let known: Vec<Entry> = text
            .lines()
            .filter_map(parse_line)
            .filter(|(name, _)| *name == test)
            .map(|(_, e)| e)
            .collect();
        let same = known
            .iter()
            .any(|k| k.seed == entry.seed && k.plan == entry.plan);
        if same || known.len() >= SEEDS_PER_TEST_MAX {
            continue;
        }
        if text.is_empty() {
            text.push_str(HEADER);
        }
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(line.trim());
        text.push('\n');
        added += 1;
    }
    if added > 0 {
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(to, text).map_err(|e| format!("cannot write {}: {e}", to.display()))?;
    }
    Ok(added)
}
