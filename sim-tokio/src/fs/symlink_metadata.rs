use std::fs::Metadata;
use std::io;
use std::path::Path;

/// The metadata of a path without following a symlink at its end.
///
/// # Errors
/// `NotFound` when the path does not exist.
pub async fn symlink_metadata(path: impl AsRef<Path>) -> io::Result<Metadata> {
    let path = path.as_ref().to_owned();
    let stat = super::on_disk(move |disk| disk.stat_path(&path, false)).await?;
    Ok(super::to_metadata(stat))
}
