//! `cargo sim merge DIR...`: one report from the shards of a sweep run on
//! several machines (`--partition K/N`), each of which wrote a JUnit file
//! (`--junit`) and saved its failing seeds to `sim-regressions/`.
//!
//! Each argument is a shard's JUnit file, or a directory of one shard's
//! artifacts: its `*.xml` JUnit files, and any `sim-regressions/*.txt`
//! below it. The merge prints one line per test with its seeds and failures
//! by class summed over the shards, writes the merged JUnit file
//! (`--junit FILE`), and adds the shards' saved seeds to the same files in
//! this workspace (by their path below the shard's directory), so that the
//! next `cargo sim test` runs them first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One test as the shards saw it.
#[derive(Default)]
struct Merged {
    seeds: u64,
    failed: u64,
    /// Failing seeds by class, summed.
    classes: BTreeMap<String, u64>,
    /// The first failing seed of each shard that failed, with the shard.
    first: Vec<(String, String)>,
    /// Shards that ran it.
    shards: u64,
    time_s: f64,
    /// A failure report to keep (the first shard's).
    report: Option<String>,
}

/// What a shard's failure message says.
#[derive(Debug, PartialEq)]
struct Failure {
    failed: u64,
    seeds: u64,
    classes: Vec<(String, u64)>,
    first: Option<String>,
}

/// The shards' inputs: JUnit files, and regression files with their path
/// below their shard's directory.
struct Inputs {
    junit: Vec<PathBuf>,
    regressions: Vec<(PathBuf, PathBuf)>,
}

/// What `N of M seeds failed (panic 3, deadlock 1); first failing seed
/// 0x2a` says.
fn parse_failure(message: &str) -> Option<Failure> {
    let (failed, rest) = message.split_once(" of ")?;
    let (seeds, rest) = rest.split_once(" seeds failed (")?;
    let (classes, rest) = rest.split_once(')')?;
    let classes = classes
        .split(", ")
        .filter_map(|c| {
            let (name, n) = c.rsplit_once(' ')?;
            Some((name.to_string(), n.parse().ok()?))
        })
        .collect();
    let first = rest
        .split("first failing seed ")
        .nth(1)
        .map(|s| s.trim().to_string());
    Some(Failure {
        failed: failed.parse().ok()?,
        seeds: seeds.parse().ok()?,
        classes,
        first,
    })
}

/// The JUnit files and regression files of the arguments, with the root
/// each regression file's path is relative to.
fn inputs(args: &[PathBuf]) -> Result<Inputs, String> {
    let mut junit = Vec::new();
    let mut regressions = Vec::new();
    for arg in args {
        if arg.is_file() {
            junit.push(arg.clone());
            continue;
        }
        if !arg.is_dir() {
            return Err(format!(
                "{} is neither a shard's JUnit file nor a directory of its artifacts",
                arg.display()
            ));
        }
        // Bounded: a directory tree, each entry once.
        let mut stack = vec![arg.clone()];
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "xml") {
                    junit.push(path);
                } else if path.extension().is_some_and(|e| e == "txt")
                    && path
                        .parent()
                        .and_then(Path::file_name)
                        .is_some_and(|d| d == "sim-regressions")
                {
                    let relative = path.strip_prefix(arg).unwrap_or(&path).to_path_buf();
                    regressions.push((path, relative));
                }
            }
        }
    }
    if junit.is_empty() {
        return Err("no shard's JUnit file (*.xml) among the arguments".to_string());
    }
    Ok(Inputs { junit, regressions })
}

/// Runs `cargo sim merge`.
pub fn command(args: crate::cli::MergeArgs) -> Result<std::process::ExitCode, String> {
    let (paths, out) = (args.shards, args.junit);
    let Inputs { junit, regressions } = inputs(&paths)?;
    let tests = read_shards(&junit)?;
    // The report.
    let seeds: u64 = tests.values().map(|m| m.seeds).sum();
    eprintln!(
        "sim: merged {} JUnit files: {} tests, {seeds} seeds run",
        junit.len(),
        tests.len()
    );
    let mut failed_tests = 0;
    for ((classname, name), merged) in &tests {
        if merged.failed == 0 {
            continue;
        }
        failed_tests += 1;
        let classes: Vec<String> = merged
            .classes
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let firsts: Vec<String> = merged
            .first
            .iter()
            .map(|(seed, shard)| format!("{seed} ({shard})"))
            .collect();
        eprintln!(
            "FAIL {name} [{classname}]: {} of {} seeds failed ({}) over {} shards; first failing seeds: {}",
            merged.failed,
            merged.seeds,
            classes.join(", "),
            merged.shards,
            firsts.join(", ")
        );
    }
    // The shards' saved seeds, added to this workspace's files.
    let mut added = 0;
    for (path, relative) in &regressions {
        added += crate::regressions::merge_file(path, relative)?;
    }
    if !regressions.is_empty() {
        eprintln!(
            "sim: {} from {} regression files of the shards (commit them)",
            match added {
                1 => "1 seed added".to_string(),
                n => format!("{n} seeds added"),
            },
            regressions.len()
        );
    }
    if let Some(out) = out {
        std::fs::write(&out, junit_of(&tests)).map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!("sim: wrote the merged JUnit file {}", out.display());
    }
    println!(
        "sim: {} passed, {failed_tests} failed",
        tests.len() - failed_tests
    );
    Ok(if failed_tests == 0 {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(101)
    })
}

/// Every test of the shards' JUnit files, summed over the shards.
fn read_shards(junit: &[PathBuf]) -> Result<BTreeMap<(String, String), Merged>, String> {
    let mut tests: BTreeMap<(String, String), Merged> = BTreeMap::new();
    for file in junit {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let doc = roxmltree::Document::parse(&text)
            .map_err(|e| format!("{} is not JUnit XML: {e}", file.display()))?;
        let shard = file.display().to_string();
        for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
            let key = (
                case.attribute("classname").unwrap_or("").to_string(),
                case.attribute("name").unwrap_or("").to_string(),
            );
            add_case(tests.entry(key).or_default(), case, &shard);
        }
    }
    Ok(tests)
}

/// One shard's `<testcase>` added to what the other shards said of it.
fn add_case(merged: &mut Merged, case: roxmltree::Node<'_, '_>, shard: &str) {
    merged.shards += 1;
    merged.time_s += case
        .attribute("time")
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(0.0);
    let run = case
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    merged.seeds += run;
    let Some(failure) = case.children().find(|n| n.has_tag_name("failure")) else {
        return;
    };
    let message = failure.attribute("message").unwrap_or("");
    if let Some(parsed) = parse_failure(message) {
        merged.failed += parsed.failed;
        for (class, n) in parsed.classes {
            *merged.classes.entry(class).or_default() += n;
        }
        if let Some(first) = parsed.first {
            merged.first.push((first, shard.to_string()));
        }
    } else {
        // Another failure (a branch run's: "a branch run of seed 0x2a
        // failed (panic)"): it counts, with its class.
        merged.failed += 1;
        let class = message
            .rsplit_once('(')
            .and_then(|(_, rest)| rest.split_once(')'))
            .map_or("failure", |(class, _)| class);
        *merged.classes.entry(class.to_string()).or_default() += 1;
    }
    if merged.report.is_none() {
        merged.report = failure.text().map(str::to_string);
    }
}

fn junit_of(tests: &BTreeMap<(String, String), Merged>) -> String {
    let failures = tests.values().filter(|m| m.failed > 0).count();
    let time: f64 = tests.values().map(|m| m.time_s).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"cargo sim merge\" tests=\"{}\" failures=\"{failures}\" time=\"{time:.3}\">\n",
        tests.len()
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"cargo sim merge\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{time:.3}\">\n",
        tests.len()
    ));
    for ((classname, name), merged) in tests {
        xml.push_str(&format!(
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\">\n",
            crate::report::xml_escape(name),
            crate::report::xml_escape(classname),
            merged.time_s
        ));
        if merged.failed > 0 {
            let classes: Vec<String> = merged
                .classes
                .iter()
                .map(|(c, n)| format!("{c} {n}"))
                .collect();
            let first = merged
                .first
                .first()
                .map(|(s, _)| format!("; first failing seed {s}"))
                .unwrap_or_default();
            xml.push_str(&format!(
                "      <failure message=\"{} of {} seeds failed ({}){first}\">{}</failure>\n",
                merged.failed,
                merged.seeds,
                classes.join(", "),
                crate::report::xml_escape(merged.report.as_deref().unwrap_or(""))
            ));
        }
        xml.push_str(&format!(
            "      <system-out>{} seeds run</system-out>\n",
            merged.seeds
        ));
        xml.push_str("    </testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_message_gives_its_counts_classes_and_seed() {
        let failure =
            parse_failure("3 of 250 seeds failed (deadlock 1, panic 2); first failing seed 0x2a")
                .unwrap();
        assert_eq!((failure.failed, failure.seeds), (3, 250));
        assert_eq!(
            failure.classes,
            vec![("deadlock".into(), 1), ("panic".into(), 2)]
        );
        assert_eq!(failure.first.as_deref(), Some("0x2a"));
    }
}
