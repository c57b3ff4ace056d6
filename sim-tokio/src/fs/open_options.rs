use super::File;
use std::io;
use std::path::Path;

/// Options for opening a file: `std::fs::OpenOptions`, opening on the
/// simulated disk.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use tokio::io::AsyncWriteExt;
/// let path = std::env::temp_dir().join("open-options-doc.log");
/// let mut log = tokio::fs::OpenOptions::new().append(true).create(true).open(&path).await?;
/// log.write_all(b"one line\n").await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct OpenOptions {
    flags: sim_fs::OpenFlags,
}

impl OpenOptions {
    /// Options with every flag off.
    pub fn new() -> OpenOptions {
        OpenOptions {
            flags: sim_fs::OpenFlags::default(),
        }
    }

    /// Read access.
    pub fn read(&mut self, read: bool) -> &mut OpenOptions {
        self.flags.read = read;
        self
    }

    /// Write access.
    pub fn write(&mut self, write: bool) -> &mut OpenOptions {
        self.flags.write = write;
        self
    }

    /// Append mode: every write goes to the end of the file.
    pub fn append(&mut self, append: bool) -> &mut OpenOptions {
        self.flags.append = append;
        self
    }

    /// Truncate the file to zero length on open (needs write access).
    pub fn truncate(&mut self, truncate: bool) -> &mut OpenOptions {
        self.flags.truncate = truncate;
        self
    }

    /// Create the file if it is missing (needs write or append access).
    pub fn create(&mut self, create: bool) -> &mut OpenOptions {
        self.flags.create = create;
        self
    }

    /// Create the file, failing with `AlreadyExists` if it exists (even as
    /// a dangling symlink). `create` and `truncate` are then ignored.
    pub fn create_new(&mut self, create_new: bool) -> &mut OpenOptions {
        self.flags.create_new = create_new;
        self
    }

    /// The permission bits of a created file (less the umask, `0o022`).
    pub fn mode(&mut self, mode: u32) -> &mut OpenOptions {
        self.flags.mode = mode;
        self
    }

    /// Extra `open(2)` flags. Honoured: `O_APPEND`, `O_TRUNC`, `O_CREAT`,
    /// `O_EXCL`, `O_NOFOLLOW`, `O_DIRECTORY`, and `O_SYNC`/`O_DSYNC` (each
    /// write is durable before it returns). Flags with nothing to simulate
    /// (`O_CLOEXEC`, `O_NONBLOCK`, `O_NOATIME`, `O_DIRECT`) change nothing;
    /// `O_TMPFILE` and `O_PATH` fail with `Unsupported`. The access mode
    /// bits are ignored, as std does.
    pub fn custom_flags(&mut self, flags: i32) -> &mut OpenOptions {
        self.flags.custom_flags = flags & !libc_dep::O_ACCMODE;
        self
    }

    /// Opens `path` with these options.
    ///
    /// # Errors
    /// `InvalidInput` for a combination std refuses (no access mode;
    /// `create` or `truncate` without write access; `truncate` with
    /// `append`); `NotFound`, `AlreadyExists`, `IsADirectory`,
    /// `PermissionDenied` as the disk says.
    pub async fn open(&self, path: impl AsRef<Path>) -> io::Result<File> {
        let path = path.as_ref().to_owned();
        let flags = self.flags;
        let node = sim_fs::current_node();
        let handle = super::on_disk(move |disk| disk.open(&path, &flags)).await?;
        Ok(File::from_handle(node, handle))
    }
}

impl Default for OpenOptions {
    fn default() -> OpenOptions {
        OpenOptions::new()
    }
}

impl From<std::fs::OpenOptions> for OpenOptions {
    /// Takes the flags of a `std::fs::OpenOptions`. std has no getters for
    /// them, so they are read from its `Debug` form.
    ///
    /// # Panics
    /// If that form is not the one std prints on Unix.
    fn from(options: std::fs::OpenOptions) -> OpenOptions {
        let text = format!("{options:?}");
        let field = |name: &str| -> &str {
            let key = format!("{name}: ");
            let start = text.find(&key).map(|i| i + key.len()).unwrap_or_else(|| {
                panic!("sim: cannot read `{name}` from std::fs::OpenOptions' Debug form: {text}")
            });
            let rest = &text[start..];
            let end = rest.find([',', ' ', '}']).unwrap_or(rest.len());
            &rest[..end]
        };
        let flag = |name: &str| field(name) == "true";
        let number = |name: &str| -> i64 {
            let text = field(name);
            // std prints the mode in octal (`0o000666`).
            let parsed = match text.strip_prefix("0o") {
                Some(octal) => i64::from_str_radix(octal, 8),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|_| {
                panic!("sim: cannot read `{name}` from std::fs::OpenOptions' Debug form: {text}")
            })
        };
        OpenOptions {
            flags: sim_fs::OpenFlags {
                read: flag("read"),
                write: flag("write"),
                append: flag("append"),
                truncate: flag("truncate"),
                create: flag("create"),
                create_new: flag("create_new"),
                mode: number("mode") as u32,
                custom_flags: number("custom_flags") as i32,
            },
        }
    }
}
