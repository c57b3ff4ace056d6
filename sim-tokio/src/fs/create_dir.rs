use std::io;
use std::path::Path;

/// Creates a directory; its parent must exist.
///
/// # Errors
/// `AlreadyExists` when the path exists, `NotFound` when the parent does
/// not, `PermissionDenied` when the parent is not writable.
pub async fn create_dir(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.create_dir(&path, 0o777)).await
}
