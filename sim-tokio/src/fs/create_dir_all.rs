use std::io;
use std::path::Path;

/// Creates a directory and every missing parent. Succeeds when the
/// directory already exists.
///
/// # Errors
/// When a component exists and is not a directory, or cannot be created.
pub async fn create_dir_all(path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.create_dir_all(&path, 0o777)).await
}
