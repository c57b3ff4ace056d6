use std::ffi::OsString;
use std::fs::{FileType, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::task::{Context, Poll};

/// Lists a directory. Entries come in name order (a deterministic order;
/// a real disk's order is arbitrary, so code must not rely on any).
///
/// # Errors
/// `NotFound` when the path does not exist, `NotADirectory` when it is not
/// a directory.
pub async fn read_dir(path: impl AsRef<Path>) -> io::Result<ReadDir> {
    let path = path.as_ref().to_owned();
    let node = sim_fs::current_node();
    let listed = path.clone();
    let entries = super::on_disk(move |disk| disk.read_dir(&listed)).await?;
    Ok(ReadDir {
        _unwind: std::marker::PhantomData,
        dir: path,
        node,
        entries: entries.into_iter(),
    })
}

/// The entries of a directory, from [`read_dir`]: a snapshot taken when it
/// was listed.
#[derive(Debug)]
pub struct ReadDir {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    dir: PathBuf,
    node: u32,
    entries: std::vec::IntoIter<sim_fs::Entry>,
}

impl ReadDir {
    /// The next entry, or `None` at the end.
    ///
    /// # Errors
    /// None on the simulated disk; the signature is tokio's.
    pub async fn next_entry(&mut self) -> io::Result<Option<DirEntry>> {
        std::future::poll_fn(|cx| self.poll_next_entry(cx)).await
    }

    /// Polls for the next entry.
    ///
    /// # Errors
    /// None on the simulated disk; the signature is tokio's.
    pub fn poll_next_entry(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<Option<DirEntry>>> {
        Poll::Ready(Ok(self.entries.next().map(|entry| DirEntry {
            path: self.dir.join(&entry.name),
            node: self.node,
            entry,
        })))
    }
}

/// One entry of a [`ReadDir`].
#[derive(Debug)]
pub struct DirEntry {
    path: PathBuf,
    node: u32,
    entry: sim_fs::Entry,
}

impl DirEntry {
    /// The inode number of the entry.
    pub fn ino(&self) -> u64 {
        self.entry.ino
    }

    /// The directory's path joined with the entry's name.
    pub fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The entry's name.
    pub fn file_name(&self) -> OsString {
        self.entry.name.clone()
    }

    /// The entry's metadata, read now, not following a symlink.
    ///
    /// # Errors
    /// `NotFound` when the entry was removed since the listing.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let path = self.path.clone();
        sim_fs::delay_on(self.node).await;
        let stat = sim_fs::with_disk_on(self.node, |disk| disk.stat_path(&path, false))?;
        Ok(super::to_metadata(stat))
    }

    /// The entry's type, as listed (not following a symlink).
    ///
    /// # Errors
    /// None on the simulated disk; the signature is tokio's.
    pub async fn file_type(&self) -> io::Result<FileType> {
        let type_bits = match self.entry.kind {
            sim_fs::Kind::File => libc_dep::S_IFREG,
            sim_fs::Kind::Dir => libc_dep::S_IFDIR,
            sim_fs::Kind::Symlink => libc_dep::S_IFLNK,
            sim_fs::Kind::Fifo => libc_dep::S_IFIFO,
            sim_fs::Kind::Socket => libc_dep::S_IFSOCK,
        };
        let stat = sim_os::interpose::FakeStat {
            mode: type_bits,
            ..Default::default()
        };
        Ok(super::to_metadata(stat).file_type())
    }
}
