//! Keeps the guide's compatibility table (docs/drop-in.md) true. Each row names a crate, its
//! version, what is tested, the test that shows it and a status; this test
//! checks every one of those against the lock file, the manifest and the
//! test sources, and that no scenario test is missing from the table.
//!
//! Whether the named tests pass is shown by running them: they are in this
//! package, so a failing one fails the same CI run that checks this table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const START: &str = "<!-- compat-table:start";
const END: &str = "<!-- compat-table:end -->";
/// A table with more rows than this is a parse gone wrong.
const ROWS_MAX: usize = 100;

fn package_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Row {
    krate: String,
    version: String,
    test_file: String,
    test_fn: String,
    status: String,
}

fn strip_ticks(cell: &str) -> String {
    cell.trim().trim_matches('`').to_string()
}

fn table_rows(readme: &str) -> Vec<Row> {
    let start = readme
        .find(START)
        .expect("docs/drop-in.md has the compatibility table's start marker");
    let end = readme
        .find(END)
        .expect("docs/drop-in.md has the compatibility table's end marker");
    assert!(start < end, "the table's markers are out of order");
    let mut rows = Vec::new();
    // Skip the marker line, the header and the separator.
    for line in readme[start..end].lines().skip(3) {
        assert!(rows.len() < ROWS_MAX, "more than {ROWS_MAX} rows");
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 5, "a row has five cells: {line}");
        let test = strip_ticks(cells[3]);
        let (test_file, test_fn) = test
            .split_once("::")
            .unwrap_or_else(|| panic!("test cell is file::function: {line}"));
        rows.push(Row {
            krate: strip_ticks(cells[0]),
            version: cells[1].trim().to_string(),
            test_file: test_file.to_string(),
            test_fn: test_fn.to_string(),
            status: cells[4].trim().to_string(),
        });
    }
    assert!(!rows.is_empty(), "the table has rows");
    rows
}

/// Every version of `name` in the lock file.
fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let wanted = format!("name = \"{name}\"");
    let mut versions = Vec::new();
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == wanted {
            let version = lines.next().expect("a version follows a name");
            let version = version
                .strip_prefix("version = \"")
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or_else(|| panic!("unexpected lock line after {name}: {version}"));
            versions.push(version.to_string());
        }
    }
    versions
}

/// The `#[test]` functions of a test file, with whether each is a
/// determinism check (two processes, one trace).
fn test_functions(source: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut after_test_attribute = false;
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line == "#[test]" {
            after_test_attribute = true;
            continue;
        }
        if after_test_attribute && !line.starts_with("#[") {
            let name = line
                .strip_prefix("fn ")
                .and_then(|rest| rest.split('(').next())
                .unwrap_or_else(|| panic!("a #[test] attribute before a function: {line}"));
            let body_calls_twin = lines
                .peek()
                .is_some_and(|next| next.contains("assert_same_trace_in_two_processes"));
            found.push((name.to_string(), body_calls_twin));
            after_test_attribute = false;
        }
    }
    found
}

#[test]
fn readme_compatibility_table_matches_the_tests() {
    let root = package_dir().join("../..");
    // The table is the guide's chapter on the drop-in (docs/drop-in.md).
    let readme = read(&root.join("docs/drop-in.md"));
    let lock = read(&root.join("Cargo.lock"));
    let manifest = read(&package_dir().join("Cargo.toml"));
    let common = read(&package_dir().join("tests/common/mod.rs"));
    let seeds: u64 = common
        .lines()
        .find_map(|l| l.trim().strip_prefix("pub const SEEDS: u64 = "))
        .and_then(|v| v.trim_end_matches(';').parse().ok())
        .expect("tests/common/mod.rs defines SEEDS");
    assert!(seeds >= 20, "each scenario runs across at least 20 seeds");

    let rows = table_rows(&readme);
    let mut named_tests = BTreeSet::new();
    for row in &rows {
        let krate = &row.krate;
        assert!(
            manifest
                .lines()
                .any(|l| l.starts_with(&format!("{krate} = "))),
            "{krate}: docs/drop-in.md lists it, but compat-tests/ecosystem does not depend on it"
        );
        let versions = locked_versions(&lock, krate);
        assert!(
            versions.contains(&row.version),
            "{krate}: docs/drop-in.md says {}, Cargo.lock has {versions:?}; update the table",
            row.version
        );
        let file = package_dir().join(format!("tests/{}.rs", row.test_file));
        let functions = test_functions(&read(&file));
        assert!(
            functions
                .iter()
                .any(|(name, twin)| name == &row.test_fn && !twin),
            "{krate}: no scenario test {} in {}",
            row.test_fn,
            file.display()
        );
        let source = read(&file);
        assert!(
            source.contains(&format!(
                "assert_same_trace_in_two_processes(\"{}\")",
                row.test_fn
            )),
            "{krate}: {} has no determinism check in {}",
            row.test_fn,
            file.display()
        );
        assert!(
            row.status.starts_with("passes: plain")
                && row.status.contains(&format!("sim ×{seeds} seeds"))
                && row.status.ends_with("one trace per seed"),
            "{krate}: the status says what the tests check (plain, sim ×{seeds} seeds, one trace per seed): {}",
            row.status
        );
        named_tests.insert(format!("{}::{}", row.test_file, row.test_fn));
    }

    // Every scenario test is in the table.
    let dir = package_dir().join("tests");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    for file in files {
        let stem = file.file_stem().unwrap().to_str().unwrap().to_string();
        if stem == "readme_table" {
            continue;
        }
        for (name, twin) in test_functions(&read(&file)) {
            if !twin {
                assert!(
                    named_tests.contains(&format!("{stem}::{name}")),
                    "{stem}::{name} is a scenario test without a row in docs/drop-in.md's table"
                );
            }
        }
    }
}
