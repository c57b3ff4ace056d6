use std::io;
use std::path::{Path, PathBuf};

/// The canonical, absolute form of a path, with every intermediate
/// component normalized and every symlink resolved (on the simulated
/// disk).
///
/// # Errors
/// `NotFound` when the path does not exist, `NotADirectory` when a
/// non-final component is not a directory.
pub async fn canonicalize(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.canonicalize(&path)).await
}
