//! What the workspace-wide source checks share: the simulator's sources.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "tests" && !name.to_string_lossy().starts_with('.') {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `.rs` file under the `src/` of the simulator's crates (the
/// facade, the layers below it, the runner).
pub fn simulator_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in [
        "sim-runtime",
        "sim-os",
        "sim-net",
        "sim-fs",
        "sim-harness",
        "sim-tokio",
        "cargo-sim",
    ] {
        rust_files(&root.join(krate).join("src"), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    files
}

/// Each line of the simulator's sources that `offends` (given the file,
/// its lines and the line's index), as `file:line: text`.
pub fn offending_lines(offends: impl Fn(&Path, &[&str], usize) -> bool) -> Vec<String> {
    let mut offences = Vec::new();
    for file in simulator_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for number in 0..lines.len() {
            if offends(&file, &lines, number) {
                offences.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    lines[number].trim()
                ));
            }
        }
    }
    offences
}
