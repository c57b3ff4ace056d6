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
