//! Keeps README's table of real projects' test suites true to the script
//! that measures it (`scripts/real-suites.sh`): the same suites at the same
//! versions, in the same order, with counts that add up, and a reason for
//! every test that fails on the simulator.
//!
//! The counts come from running the script (an hour, with crates.io), not
//! from this test: it checks what can be checked without running them.

use std::path::PathBuf;

const START: &str = "<!-- real-suites:start";
const END: &str = "<!-- real-suites:end -->";
/// A table with more rows than this is a parse gone wrong.
const ROWS_MAX: usize = 50;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(name: &str) -> String {
    let path = root().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The suites the script runs: (name, version).
fn script_suites(script: &str) -> Vec<(String, String)> {
    let start = script
        .find("SUITES=(")
        .expect("the script lists its suites in SUITES=(...)");
    let end = start + script[start..].find("\n)").expect("SUITES ends with )");
    script[start..end]
        .lines()
        .skip(1)
        .map(|line| {
            let line = line.trim().trim_matches('"');
            let mut words = line.split_whitespace();
            let name = words.next().expect("a suite's name").to_string();
            let version = words.next().expect("a suite's version").to_string();
            (name, version)
        })
        .collect()
}

/// "P of T" as (P, T).
fn fraction(cell: &str) -> (u32, u32) {
    let (passed, total) = cell
        .trim()
        .split_once(" of ")
        .unwrap_or_else(|| panic!("a count is 'P of T': {cell}"));
    (
        passed.parse().expect("passed is a number"),
        total.parse().expect("total is a number"),
    )
}

#[test]
fn readme_real_suites_table_matches_the_script() {
    let readme = read("README.md");
    let script = read("scripts/real-suites.sh");
    let suites = script_suites(&script);
    assert!(
        suites.len() >= 7,
        "at least seven suites (five from the issue, two more): {suites:?}"
    );
    let seeds: u32 = script
        .lines()
        .find_map(|l| l.strip_prefix("SEEDS="))
        .and_then(|v| v.trim().parse().ok())
        .expect("the script sets SEEDS");
    assert!(seeds >= 20, "each test runs across at least 20 seeds");

    let start = readme
        .find(START)
        .expect("README has the table's start marker");
    let end = readme.find(END).expect("README has the table's end marker");
    assert!(start < end, "the markers are in order");
    let mut rows = Vec::new();
    // Skip the marker line, the header and the separator.
    let lines: Vec<&str> = readme[start..end].lines().collect();
    assert!(
        lines[1].contains(&format!("simulator, {seeds} seeds each")),
        "the header names the seed count: {}",
        lines[1]
    );
    for line in lines.iter().skip(3) {
        assert!(rows.len() < ROWS_MAX, "more than {ROWS_MAX} rows");
        let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 6, "a row has six cells: {line}");
        rows.push(cells);
    }
    assert_eq!(rows.len(), suites.len(), "one row per suite of the script");
    for (cells, (name, version)) in rows.iter().zip(&suites) {
        assert_eq!(
            cells[0].trim(),
            format!("`{name}`"),
            "suites in the script's order"
        );
        assert_eq!(cells[1].trim(), version, "{name}: the script's version");
        let tests: u32 = cells[2].trim().parse().expect("tests is a number");
        let (plain, plain_total) = fraction(cells[3]);
        let (sim, sim_total) = fraction(cells[4]);
        assert_eq!(sim_total, tests, "{name}: the simulator ran every test");
        assert!(
            plain <= plain_total && sim <= sim_total,
            "{name}: counts add up"
        );
        assert!(tests > 0, "{name}: a suite with tests");
        if sim < sim_total {
            assert!(
                cells[5].trim().len() > 10,
                "{name}: the tests that fail on the simulator are explained"
            );
        }
    }
}
