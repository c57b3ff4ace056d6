//! Asynchronous filesystem operations, on the simulated disk of the
//! current task's host (`sim-fs`).
//!
//! Each host has its own disk, kept across its crashes and restarts. It
//! starts with `/`, the temporary directory (`std::env::temp_dir()`) and
//! the working directory, so relative paths and temporary files work as
//! they do outside. What survives a crash follows the durability model of
//! a real disk: data is durable once the file is synced (`sync_all`,
//! `sync_data`); a new, renamed or removed name once its directory is
//! synced (`File::open(dir).await?.sync_all().await?`). Every operation
//! takes a latency of virtual time drawn from the seed.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let dir = std::env::temp_dir().join("fs-doc-example");
//! tokio::fs::create_dir_all(&dir).await?;
//! tokio::fs::write(dir.join("greeting"), b"hello").await?;
//! assert_eq!(tokio::fs::read_to_string(dir.join("greeting")).await?, "hello");
//! # tokio::fs::remove_dir_all(&dir).await?;
//! # Ok(())
//! # }
//! ```

mod canonicalize;
mod copy;
mod create_dir;
mod create_dir_all;
mod dir_builder;
mod file;
mod file_times;
mod hard_link;
mod metadata;
mod open_options;
mod read;
mod read_dir;
mod read_link;
mod read_to_string;
mod remove_dir;
mod remove_dir_all;
mod remove_file;
mod rename;
mod set_permissions;
mod symlink;
mod symlink_metadata;
mod try_exists;
mod write;

pub use canonicalize::canonicalize;
pub use copy::copy;
pub use create_dir::create_dir;
pub use create_dir_all::create_dir_all;
pub use dir_builder::DirBuilder;
pub use file::File;
pub use file_times::FileTimes;
pub use hard_link::hard_link;
pub use metadata::metadata;
pub use open_options::OpenOptions;
pub use read::read;
pub use read_dir::{read_dir, DirEntry, ReadDir};
pub use read_link::read_link;
pub use read_to_string::read_to_string;
pub use remove_dir::remove_dir;
pub use remove_dir_all::remove_dir_all;
pub use remove_file::remove_file;
pub use rename::rename;
pub use set_permissions::set_permissions;
pub use symlink::symlink;
pub use symlink_metadata::symlink_metadata;
pub use try_exists::try_exists;
pub use write::write;

use sim_fs::Disk;
use std::io;

/// One disk operation on the current host: its latency in virtual time,
/// then `f` on the disk.
pub(crate) async fn on_disk<R>(f: impl FnOnce(&mut Disk) -> io::Result<R>) -> io::Result<R> {
    // On a runtime that shut down, tokio's blocking pool refuses the
    // operation, and the error says so in tokio's words.
    let shut_down = sim_runtime::context::with_current(|core| core.is_shut_down()).unwrap_or(false);
    if shut_down {
        return Err(io::Error::other("background task failed"));
    }
    let node = sim_fs::current_node();
    sim_fs::delay_on(node).await;
    sim_fs::with_disk_on(node, f)
}

/// A real `std::fs::Metadata` carrying a simulated file's attributes.
pub(crate) fn to_metadata(stat: sim_os::interpose::FakeStat) -> std::fs::Metadata {
    sim_os::interpose::fabricate_metadata(stat)
}

/// Reads a whole file (the heart of `read` and `read_to_string`).
pub(crate) fn read_all(disk: &mut Disk, path: &std::path::Path) -> io::Result<Vec<u8>> {
    let flags = sim_fs::OpenFlags {
        read: true,
        ..sim_fs::OpenFlags::default()
    };
    let handle = disk.open(path, &flags)?;
    let result = (|| {
        let len = disk.len(&handle)?;
        let mut buf = vec![0; len as usize];
        let mut filled = 0;
        // Bounded: each pass reads at least one byte or stops.
        while filled < buf.len() {
            let n = disk.read_at(&handle, filled as u64, &mut buf[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        buf.truncate(filled);
        Ok(buf)
    })();
    disk.close(&handle);
    result
}

/// Writes all of `bytes` at `offset` (short writes continue, as
/// `write_all` does).
pub(crate) fn write_all_at(
    disk: &mut Disk,
    handle: &sim_fs::Handle,
    mut offset: u64,
    bytes: &[u8],
) -> io::Result<()> {
    let mut written = 0;
    // Bounded: each pass writes at least one byte or returns an error.
    while written < bytes.len() {
        let (n, next) = disk.write_at(handle, offset, &bytes[written..])?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        written += n;
        offset = next;
    }
    Ok(())
}
