use std::io;
use std::path::Path;

/// Creates a new name, `link`, for the file at `original`.
///
/// # Errors
/// `NotFound` when `original` does not exist, `AlreadyExists` when `link`
/// does, `PermissionDenied` for a directory.
pub async fn hard_link(original: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (original, link) = (original.as_ref().to_owned(), link.as_ref().to_owned());
    super::on_disk(move |disk| disk.hard_link(&original, &link)).await
}
