//! What the fixture tests share: fixture crates that build once.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Gives every file under `dir` one fixed modification time, long past.
///
/// Fixture crates that are the same package (name, version, sources) share
/// the fixture tests' target directory, where cargo names their artifacts
/// alike. Cargo rebuilds a target whose sources are newer than its last
/// build, so a copy written a moment ago would build again, over the
/// binaries another test may be running. With the sources' times fixed,
/// the first copy builds and every later one finds its targets fresh.
/// Their version carries `content_hash` of the sources: a fixture edited
/// since is another package, not one whose old binaries look fresh.
pub fn settle_times(dir: &Path) {
    let long_past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            settle_times(&path);
        } else {
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(long_past).unwrap();
        }
    }
}

/// A number (below a million) that changes with the `(path, text)` files,
/// for a shared fixture's version. std's hasher gives the same number in
/// every run of one toolchain (another toolchain rebuilds everything).
pub fn content_hash(files: &[(&str, &str)]) -> u32 {
    let mut hasher = DefaultHasher::new();
    files.hash(&mut hasher);
    (hasher.finish() % 1_000_000) as u32
}
