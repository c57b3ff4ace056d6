use std::io;
use std::path::Path;

/// Copies the contents and permission bits of one file to another,
/// creating or truncating the destination. Returns the bytes copied.
///
/// # Errors
/// `NotFound` when `from` does not exist; `InvalidInput` when it is not a
/// regular file; the destination's errors.
pub async fn copy(from: impl AsRef<Path>, to: impl AsRef<Path>) -> Result<u64, std::io::Error> {
    let (from, to) = (from.as_ref().to_owned(), to.as_ref().to_owned());
    super::on_disk(move |disk| {
        let stat = disk.stat_path(&from, true)?;
        if stat.mode & libc_dep::S_IFMT != libc_dep::S_IFREG {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the source path is neither a regular file nor a symlink to a regular file",
            ));
        }
        let bytes = super::read_all(disk, &from)?;
        let flags = sim_fs::OpenFlags {
            write: true,
            create: true,
            truncate: true,
            mode: stat.mode & 0o7777,
            ..sim_fs::OpenFlags::default()
        };
        let handle = disk.open(&to, &flags)?;
        let result = super::write_all_at(disk, &handle, 0, &bytes)
            .and_then(|()| disk.set_mode(&handle, stat.mode & 0o7777));
        disk.close(&handle);
        result.map(|()| bytes.len() as u64)
    })
    .await
}
