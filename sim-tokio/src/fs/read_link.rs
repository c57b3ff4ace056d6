use std::io;
use std::path::{Path, PathBuf};

/// What a symbolic link points to.
///
/// # Errors
/// `NotFound` when the path does not exist, `InvalidInput` when it is not
/// a symlink.
pub async fn read_link(path: impl AsRef<Path>) -> io::Result<PathBuf> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.read_link(&path)).await
}
