//! An installed `cargo sim` that is older than the checkout it was built
//! from says so when it runs there.
//!
//! A person in this project's checkout who typed `cargo install --path
//! cargo-sim` last week and has pulled since runs last week's runner: no
//! error would show it, only behaviour the sources no longer have. The
//! workspace's scripts run the checkout's own build (`cargo run -p
//! cargo-sim`, or the binary a `cargo test` of the workspace just made),
//! which cargo keeps current, so they never see this.

use std::path::Path;
use std::time::SystemTime;

/// How deep the walk of a source folder goes: the runner's modules are at
/// most three folders down.
const SOURCE_DEPTH_MAX: usize = 4;

/// Warns once when the running binary was built before the newest source
/// file of the runner (its own and sim-runtime's, the one crate it
/// compiles in) in the checkout it came from, while the current directory
/// is inside that checkout. Anywhere else an installed runner is what the
/// user chose, and the sources it came from are not theirs to compare.
pub(crate) fn warn_if_older_than_its_checkout() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(checkout) = source.parent() else {
        return;
    };
    let inside = std::env::current_dir().is_ok_and(|dir| dir.starts_with(checkout));
    if !inside {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Some(built) = modified(&exe) else { return };
    let newest = [source.to_path_buf(), checkout.join("sim-runtime")]
        .iter()
        .filter_map(|crate_dir| newest_source(crate_dir, 0))
        .max();
    if newest.is_some_and(|newest| newest > built) {
        eprintln!(
            "sim: warning: this cargo sim ({}) was built before the last change to its sources in \
             {}; `cargo install --locked --path cargo-sim` there brings it up to date",
            exe.display(),
            checkout.display()
        );
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time of a `.rs` or `Cargo.toml` file under
/// `dir`, `target` folders left out.
fn newest_source(dir: &Path, depth: usize) -> Option<SystemTime> {
    if depth > SOURCE_DEPTH_MAX {
        return None;
    }
    let mut newest = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let time = if path.is_dir() {
            if name == "target" || name == "tests" {
                continue;
            }
            newest_source(&path, depth + 1)
        } else if name == "Cargo.toml" || path.extension().is_some_and(|e| e == "rs") {
            modified(&path)
        } else {
            None
        };
        newest = newest.max(time);
    }
    newest
}
