use std::io;
use std::path::Path;

/// Reads a whole file into a string.
///
/// # Errors
/// As [`read`](super::read), and `InvalidData` when the file is not UTF-8.
pub async fn read_to_string(path: impl AsRef<Path>) -> io::Result<String> {
    let bytes = super::read(path).await?;
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}
