//! Failing seeds, kept: `sim-regressions/<target>.txt` in the package's
//! directory, one line per seed. Commit the file; every later `cargo sim
//! test` runs its seeds first, so a bug once found stays found.
//!
//! ```text
//! # Seeds that failed under `cargo sim test`; each one runs first in every
//! # later `cargo sim test`. Commit this file. Delete a line to drop a seed.
//! lost_update 0x2 panic
//! deep_race 0x1f panic branch=0x9e3@1@tests/deep.rs:26:18
//! ```
//!
//! A failing branch run (`crate::explore`) is its root seed and its
//! branch points (`branch=`, as `SIM_BRANCH` holds them): it runs first as
//! a branch run.

use crate::compile::TestBinary;
use sim_runtime::property::branch::Plan;
use std::path::PathBuf;

const HEADER: &str = "# Seeds that failed under `cargo sim test`; each one runs first in every\n\
# later `cargo sim test`. Commit this file. Delete a line to drop a seed.\n\
# <test name> <seed> <failure class>\n";

/// The most seeds kept per test: enough to pin a bug, few enough to rerun
/// on every test run.
pub const SEEDS_PER_TEST_MAX: usize = 8;

/// The regressions file of a test binary.
pub fn path(binary: &TestBinary) -> PathBuf {
    binary
        .manifest_dir
        .join("sim-regressions")
        .join(format!("{}.txt", binary.file_stem()))
}

/// The saved seeds of `test`, in file order (a saved branch run's root
/// seed not among them).
pub fn load(binary: &TestBinary, test: &str) -> Vec<u64> {
    entries(binary, test)
        .into_iter()
        .filter(|(_, plan)| plan.is_none())
        .map(|(seed, _)| seed)
        .collect()
}

/// The saved branch runs of `test`: each one's root seed and plan.
pub fn load_branches(binary: &TestBinary, test: &str) -> Vec<(u64, Plan)> {
    entries(binary, test)
        .into_iter()
        .filter_map(|(seed, plan)| Some((seed, plan?)))
        .collect()
}

/// Every line of `test`: its seed, and a branch run's plan.
fn entries(binary: &TestBinary, test: &str) -> Vec<(u64, Option<Plan>)> {
    let Ok(text) = std::fs::read_to_string(path(binary)) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let name = fields.next()?;
            let seed = sim_runtime::config::parse_seed(fields.next()?).ok()?;
            let plan = fields
                .nth(1)
                .and_then(|f| f.strip_prefix("branch="))
                .and_then(|p| Plan::parse(p).ok());
            (name == test).then_some((seed, plan))
        })
        .collect()
}

/// Adds `seed` for `test` unless it is there; returns the file's path when
/// it wrote.
pub fn save(
    binary: &TestBinary,
    test: &str,
    seed: u64,
    class: &str,
) -> Result<Option<PathBuf>, String> {
    save_entry(binary, test, (seed, None), class)
}

/// Adds a failing branch run (its root seed and plan) for `test` unless it
/// is there; returns the file's path when it wrote.
pub fn save_branch(
    binary: &TestBinary,
    test: &str,
    (seed, plan): (u64, &Plan),
    class: &str,
) -> Result<Option<PathBuf>, String> {
    save_entry(binary, test, (seed, Some(plan)), class)
}

fn save_entry(
    binary: &TestBinary,
    test: &str,
    (seed, plan): (u64, Option<&Plan>),
    class: &str,
) -> Result<Option<PathBuf>, String> {
    let known = entries(binary, test);
    let same = known.iter().any(|(s, p)| *s == seed && p.as_ref() == plan);
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
    match plan {
        None => text.push_str(&format!("{test} {seed:#x} {class}\n")),
        Some(plan) => text.push_str(&format!(
            "{test} {seed:#x} {class} branch={}\n",
            plan.encode()
        )),
    }
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
    for line in theirs.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut fields = line.split_whitespace();
        let (Some(test), Some(seed)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(seed) = sim_runtime::config::parse_seed(seed) else {
            continue;
        };
        let known: Vec<u64> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let name = f.next()?;
                let s = sim_runtime::config::parse_seed(f.next()?).ok()?;
                (name == test).then_some(s)
            })
            .collect();
        if known.contains(&seed) || known.len() >= SEEDS_PER_TEST_MAX {
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
