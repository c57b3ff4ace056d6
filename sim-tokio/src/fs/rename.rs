use std::io;
use std::path::Path;

/// Renames a file or directory, replacing `to` if it is a file (or an
/// empty directory when moving a directory). Atomic: no task ever sees
/// neither name, and after a crash the disk holds the old state or the
/// new one, never a mix.
///
/// # Errors
/// `NotFound` when `from` does not exist; `IsADirectory`,
/// `NotADirectory`, `DirectoryNotEmpty` for mismatched kinds.
pub async fn rename(from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    super::on_disk(move |disk| disk.rename(&from, &to)).await
}
