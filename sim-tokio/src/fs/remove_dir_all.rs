use std::io;
use std::path::Path;

/// Removes a directory and everything under it. Symlinks inside are
/// removed, never followed.
///
/// # Errors
/// `NotFound` when the path does not exist, `NotADirectory` when it is not
/// a directory.
pub async fn remove_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.remove_dir_all(&path)).await
}
