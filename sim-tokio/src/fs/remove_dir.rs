use std::io;
use std::path::Path;

/// Removes an empty directory.
///
/// # Errors
/// `NotFound`, `DirectoryNotEmpty`, `NotADirectory`.
pub async fn remove_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.remove_dir(&path)).await
}
