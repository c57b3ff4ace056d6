use std::io;
use std::path::Path;

/// Creates a symbolic link at `link` pointing to `original` (which need
/// not exist).
///
/// # Errors
/// `AlreadyExists` when `link` exists, `NotFound` when its parent does not.
pub async fn symlink(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    super::on_disk(move |disk| disk.symlink(&original, &link)).await
}
