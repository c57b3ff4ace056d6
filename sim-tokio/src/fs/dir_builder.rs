use std::io;
use std::path::Path;

/// Creates directories with options: recursively, and with a mode.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let dir = std::env::temp_dir().join("dir-builder-doc/a/b");
/// tokio::fs::DirBuilder::new().recursive(true).create(&dir).await?;
/// assert!(tokio::fs::metadata(&dir).await?.is_dir());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct DirBuilder {
    recursive: bool,
    mode: Option<u32>,
}

impl DirBuilder {
    /// A builder for one directory, with mode `0o777` (less the umask).
    pub fn new() -> Self {
        DirBuilder::default()
    }

    /// Whether missing parents are created too (and an existing directory
    /// is not an error).
    pub fn recursive(&mut self, recursive: bool) -> &mut Self {
        self.recursive = recursive;
        self
    }

    /// The permission bits of the new directories (less the umask).
    pub fn mode(&mut self, mode: u32) -> &mut Self {
        self.mode = Some(mode);
        self
    }

    /// Creates the directory at `path`.
    ///
    /// # Errors
    /// As [`create_dir`](super::create_dir), or
    /// [`create_dir_all`](super::create_dir_all) when recursive.
    pub async fn create(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref().to_owned();
        let mode = self.mode.unwrap_or(0o777);
        let recursive = self.recursive;
        super::on_disk(move |disk| {
            if recursive {
                disk.create_dir_all(&path, mode)
            } else {
                disk.create_dir(&path, mode)
            }
        })
        .await
    }
}
