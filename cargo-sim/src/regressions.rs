//! Failing seeds, kept: `sim-regressions/<target>.txt` in the package's
//! directory, one line per seed. Commit the file; every later `cargo sim
//! test` runs its seeds first, so a bug once found stays found.
//!
//! ```text
//! # Seeds that failed under `cargo sim test`; each one runs first in every
//! # later `cargo sim test`. Commit this file. Delete a line to drop a seed.
//! lost_update 0x2 panic
//! ```

use crate::compile::TestBinary;
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

/// The saved seeds of `test`, in file order.
pub fn load(binary: &TestBinary, test: &str) -> Vec<u64> {
    let Ok(text) = std::fs::read_to_string(path(binary)) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let name = fields.next()?;
            let seed = sim_runtime::config::parse_seed(fields.next()?).ok()?;
            (name == test).then_some(seed)
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
    let known = load(binary, test);
    if known.contains(&seed) || known.len() >= SEEDS_PER_TEST_MAX {
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
    text.push_str(&format!("{test} {seed:#x} {class}\n"));
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
