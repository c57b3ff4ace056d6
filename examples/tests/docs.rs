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
