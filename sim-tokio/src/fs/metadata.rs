use std::fs::Metadata;
use std::io;
use std::path::Path;

/// The metadata of a file or directory, following symlinks.
///
/// # Errors
/// `NotFound` when the path does not exist.
pub async fn metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    let stat = super::on_disk(move |disk| disk.stat_path(&path, true)).await?;
    Ok(super::to_metadata(stat))
}
