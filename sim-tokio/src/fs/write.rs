use std::io;
use std::path::Path;

/// Writes a whole file, creating it or truncating it first.
///
/// The data is in the page cache when this returns, not durable: sync the
/// file (and, for a new file, its directory) to survive a crash.
///
/// # Errors
/// `NotFound` when the parent does not exist, `StorageFull` when the disk
/// is full, and the disk's write errors.
pub async fn write(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> io::Result<()> {
    let path = path.as_ref().to_owned();
    let contents = contents.as_ref().to_owned();
    super::on_disk(move |disk| {
        let flags = sim_fs::OpenFlags {
            write: true,
            create: true,
            truncate: true,
            ..sim_fs::OpenFlags::default()
        };
        let handle = disk.open(&path, &flags)?;
        let result = super::write_all_at(disk, &handle, 0, &contents);
        disk.close(&handle);
        result
    })
    .await
}
