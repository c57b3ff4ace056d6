//! The README stays short, with the guide beside it, and the docs point
//! only inside the repository: every relative link of the README, the
//! guide (`docs/`), ARCHITECTURE.md and BENCHMARKS.md names a file that is
//! there, and none names a path outside the clone.

use std::path::{Path, PathBuf};

const README_LINES_MAX: usize = 400;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Markdown files of the docs, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    for entry in std::fs::read_dir(root().join("docs")).expect("the guide, docs/") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

/// The targets of the `[text](target)` links in `text`.
fn links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            rest.find(')').map(|end| &rest[..end])
        })
        .collect()
}

#[test]
fn the_readme_is_short_and_the_guide_is_beside_it() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_LINES_MAX,
        "the README has {lines} lines: move a section into a chapter of docs/ (at most \
         {README_LINES_MAX})"
    );
    let guide = std::fs::read_to_string(root().join("docs/README.md")).unwrap();
    for (path, _) in documents() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let in_docs = path.parent().is_some_and(|p| p.ends_with("docs"));
        if in_docs && name != "README.md" {
            assert!(
                guide.contains(&format!("({name})")),
                "the guide's index lacks {name}"
            );
        }
    }
}

#[test]
fn every_link_of_the_docs_points_inside_the_repository() {
    let root = root().canonicalize().unwrap();
    let mut broken = Vec::new();
    for (path, text) in documents() {
        assert!(
            !text.contains("../shared"),
            "{} names ../shared, which a clone does not have",
            path.display()
        );
        let dir = path.parent().unwrap();
        for target in links(&text) {
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            let resolved = dir.join(file).canonicalize();
            match resolved {
                Ok(found) if found.starts_with(&root) => {}
                _ => broken.push(format!("{}: ({target})", path.display())),
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing in the repository:\n{}",
        broken.join("\n")
    );
}

/// The builders of a harness type in `file` (of sim-harness's sources):
/// each `pub fn` whose signature returns `returns`.
fn builders(file: &str, returns: &str) -> Vec<String> {
    let path = root().join("sim-harness/src").join(file);
    let source = std::fs::read_to_string(&path).unwrap();
    source
        .split("\n    pub fn ")
        .skip(1)
        .filter_map(|item| {
            let signature = item.split('{').next()?;
            let name = signature.split(['(', '<']).next()?;
            let head = signature.split("\n    where").next()?;
            head.trim_end().ends_with(returns).then(|| name.to_string())
        })
        .collect()
}

/// The text of the docs' checked blocks: each between
/// `<!-- NAME:start (checked by ...) -->` and `<!-- NAME:end -->`.
fn checked_blocks(text: &str) -> String {
    let mut blocks = String::new();
    for (at, _) in text.match_indices(":start (checked by ") {
        let name_from = text[..at].rfind("<!-- ").map_or(at, |from| from + 5);
        let end = format!("<!-- {}:end", &text[name_from..at]);
        if let Some(to) = text[at..].find(&end) {
            blocks.push_str(&text[at..at + to]);
        }
    }
    blocks
}

/// Every harness builder the README or the guide names (`Nemesis`'s
/// generators, `Swarm`'s dimensions, `Sim`'s settings) is shown with its
/// arguments, once at least, in a block a test checks.
#[test]
fn every_harness_builder_the_docs_name_is_shown_with_its_arguments() {
    let text: String = documents()
        .into_iter()
        .filter(|(path, _)| !path.ends_with("ARCHITECTURE.md") && !path.ends_with("BENCHMARKS.md"))
        .map(|(_, text)| text)
        .collect();
    let checked = checked_blocks(&text);
    let mut missing = Vec::new();
    for (file, returns) in [
        ("nemesis.rs", "-> Nemesis"),
        ("swarm.rs", "-> Swarm"),
        ("sim.rs", "-> &mut Self"),
        ("history/checks.rs", "-> Self"),
    ] {
        let names = builders(file, returns);
        assert!(names.len() >= 5, "{file}: builders not found: {names:?}");
        for name in names {
            let named = text.contains(&format!("`{name}`"))
                || text.contains(&format!(".{name}("))
                || text.contains(&format!("::{name}("));
            let shown =
                checked.contains(&format!(".{name}(")) || checked.contains(&format!("::{name}("));
            if named && !shown {
                missing.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "named in the docs, but never shown with its arguments in a checked block:\n{}",
        missing.join("\n")
    );
}
