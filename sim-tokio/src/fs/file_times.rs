use std::time::SystemTime;

/// Access and modification times to set on a file with
/// [`File::set_times`](super::File::set_times); a time left unset is not
/// changed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// let path = std::env::temp_dir().join("file-times-doc");
/// let file = tokio::fs::File::create(&path).await?;
/// let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
/// file.set_times(tokio::fs::FileTimes::new().set_modified(when)).await?;
/// assert_eq!(file.metadata().await?.modified()?, when);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
#[must_use = "must be applied to a file via `File::set_times` to have any effect"]
pub struct FileTimes {
    pub(crate) accessed: Option<SystemTime>,
    pub(crate) modified: Option<SystemTime>,
}

impl FileTimes {
    /// No times: setting it changes nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the last access time.
    pub fn set_accessed(mut self, t: SystemTime) -> Self {
        self.accessed = Some(t);
        self
    }

    /// Sets the last modification time.
    pub fn set_modified(mut self, t: SystemTime) -> Self {
        self.modified = Some(t);
        self
    }
}
