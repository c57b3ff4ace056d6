use std::io;
use std::path::Path;

/// Reads a whole file into a vector of bytes.
///
/// # Errors
/// `NotFound` when the file does not exist, `IsADirectory` for a
/// directory, and the disk's read errors.
pub async fn read(path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
    let path = path.as_ref().to_owned();
    super::on_disk(move |disk| super::read_all(disk, &path)).await
}
