use std::io;
use std::path::Path;

/// Whether a path exists (following symlinks): `Ok(false)` when it does
/// not, an error when that cannot be told (a component that is not a
/// directory, a permission).
///
/// # Errors
/// When existence cannot be determined.
pub async fn try_exists(path: impl AsRef<Path>) -> io::Result<bool> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| match disk.stat_path(&path, true) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    })
    .await
}
