use std::io;
use std::path::Path;

/// Removes a file (or symlink). Open handles keep reading it until they
/// close.
///
/// # Errors
/// `NotFound`, `IsADirectory`, `PermissionDenied`.
pub async fn remove_file(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.remove_file(&path)).await
}
