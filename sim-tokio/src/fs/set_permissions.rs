use std::fs::Permissions;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Sets a file's permission bits (following symlinks).
///
/// # Errors
/// `NotFound` when the path does not exist.
pub async fn set_permissions(path: impl AsRef<Path>, perm: Permissions) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| disk.set_mode_path(&path, perm.mode())).await
}
