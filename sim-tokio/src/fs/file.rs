//! `tokio::fs::File` on the simulated disk.

use super::OpenOptions;
use crate::io::{AsyncRead, AsyncSeek, AsyncWrite, ReadBuf};
use std::fmt;
use std::fs::{File as StdFile, Metadata, Permissions};
use std::future::Future;
use std::io::{self, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{ready, Context, Poll};

/// The most one read or write moves by default, as tokio's.
const MAX_BUF_SIZE_DEFAULT: usize = 2 * 1024 * 1024;

/// An open file on the simulated disk of the host that opened it.
///
/// Reads and writes each take a latency of virtual time; a write is in the
/// page cache when it returns, and durable after [`File::sync_all`] or
/// [`File::sync_data`]. The position is shared with clones made by
/// [`File::try_clone`], as a duplicated descriptor's is.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// let path = std::env::temp_dir().join("file-doc.txt");
/// let mut file = tokio::fs::File::create(&path).await?;
/// file.write_all(b"durable once synced").await?;
/// file.sync_all().await?;
/// let mut text = String::new();
/// tokio::fs::File::open(&path).await?.read_to_string(&mut text).await?;
/// assert_eq!(text, "durable once synced");
/// # Ok(())
/// # }
/// ```
pub struct File {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    node: u32,
    handle: sim_fs::Handle,
    pos: Arc<AtomicU64>,
    /// The latency of the operation in progress.
    latency: Option<sim_fs::Delay>,
    seek: Option<SeekFrom>,
    max_buf_size: usize,
    placeholder: OnceLock<OwnedFd>,
}

fn escape(what: &str) -> ! {
    panic!(
        "sim: escape refused: {what}. A real file's contents and timing are outside the \
         simulation, so the run could not be replayed from its seed. Open the file with \
         tokio::fs (File::open, OpenOptions) on the simulated disk instead."
    )
}

impl File {
    pub(crate) fn from_handle(node: u32, handle: sim_fs::Handle) -> File {
        File {
            _unwind: std::marker::PhantomData,
            node,
            handle,
            pos: Arc::new(AtomicU64::new(0)),
            latency: None,
            seek: None,
            max_buf_size: MAX_BUF_SIZE_DEFAULT,
            placeholder: OnceLock::new(),
        }
    }

    /// Opens a file for reading.
    ///
    /// # Errors
    /// `NotFound` when it does not exist, `PermissionDenied` when it is not
    /// readable.
    pub async fn open(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new().read(true).open(path).await
    }

    /// Opens a file for writing, creating it or truncating it.
    ///
    /// # Errors
    /// `NotFound` when the parent does not exist, `PermissionDenied`.
    pub async fn create(path: impl AsRef<Path>) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .await
    }

    /// Creates a new file for reading and writing, failing if it exists.
    ///
    /// # Errors
    /// `AlreadyExists` when the path exists.
    pub async fn create_new<P: AsRef<Path>>(path: P) -> std::io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .await
    }

    /// Options to open a file with.
    pub fn options() -> OpenOptions {
        OpenOptions::new()
    }

    /// Takes a `std::fs::File` opened in the simulation (on the host's
    /// simulated disk, as `std::fs` is during a run), at its position.
    ///
    /// # Panics
    /// For a real file (opened outside the simulation), naming the escape.
    pub fn from_std(std: StdFile) -> File {
        // SAFETY: the descriptor is the std file's, handed over here.
        unsafe { File::from_raw_fd(std::os::unix::io::IntoRawFd::into_raw_fd(std)) }
    }

    async fn op<R>(
        &self,
        f: impl FnOnce(&mut sim_fs::Disk, &sim_fs::Handle) -> io::Result<R>,
    ) -> io::Result<R> {
        sim_fs::delay_on(self.node).await;
        let handle = self.handle;
        sim_fs::with_disk_on(self.node, |disk| f(disk, &handle))
    }

    /// Makes the file's data and metadata durable: they survive a crash of
    /// the host. On a directory opened with [`File::open`], makes its
    /// entries durable (new, renamed and removed names).
    ///
    /// # Errors
    /// `EIO` when the disk fails it; as on Linux, the unsynced writes are
    /// then dropped and the next sync succeeds.
    pub async fn sync_all(&self) -> io::Result<()> {
        self.op(|disk, h| disk.sync(h)).await
    }

    /// As [`File::sync_all`]: on the simulated disk, data and the length
    /// needed to read it are one.
    ///
    /// # Errors
    /// As [`File::sync_all`].
    pub async fn sync_data(&self) -> io::Result<()> {
        self.op(|disk, h| disk.sync(h)).await
    }

    /// Truncates or extends the file (with zeros). The position does not
    /// move.
    ///
    /// # Errors
    /// `InvalidInput` when the file is not open for writing, `StorageFull`.
    pub async fn set_len(&self, size: u64) -> io::Result<()> {
        self.op(|disk, h| disk.set_len(h, size)).await
    }

    /// The file's metadata.
    ///
    /// # Errors
    /// When the host crashed since the file was opened.
    pub async fn metadata(&self) -> io::Result<Metadata> {
        let stat = self.op(|disk, h| disk.stat(h)).await?;
        Ok(super::to_metadata(stat))
    }

    /// Another `File` for the same open file, sharing its position.
    ///
    /// # Errors
    /// When the host crashed since the file was opened.
    pub async fn try_clone(&self) -> io::Result<File> {
        let handle = self.op(|disk, h| disk.dup(h)).await?;
        let mut clone = File::from_handle(self.node, handle);
        clone.pos = self.pos.clone();
        clone.max_buf_size = self.max_buf_size;
        Ok(clone)
    }

    /// The file as a `std::fs::File` of the simulation (see
    /// [`File::try_into_std`]).
    ///
    /// # Panics
    /// When no descriptor is left.
    pub async fn into_std(self) -> StdFile {
        match self.try_into_std() {
            Ok(std) => std,
            Err(_) => panic!("sim: no descriptor left for File::into_std"),
        }
    }

    /// The file as a `std::fs::File` of the simulation, at its position:
    /// `std::fs` calls on it reach the same simulated file.
    ///
    /// # Errors
    /// With the file back, when no descriptor is left.
    pub fn try_into_std(self) -> Result<StdFile, Self> {
        let pos = self.pos.load(Ordering::SeqCst);
        let Ok(fd) = sim_fs::give_descriptor(self.node, self.handle, pos) else {
            return Err(self);
        };
        // The open file lives on under the descriptor: this handle must not
        // close it.
        let mut this = std::mem::ManuallyDrop::new(self);
        drop(this.placeholder.take());
        // SAFETY: `give_descriptor` made `fd` for this file and hands it over.
        Ok(unsafe { StdFile::from_raw_fd(fd) })
    }

    /// Sets the file's permission bits.
    ///
    /// # Errors
    /// When the host crashed since the file was opened.
    pub async fn set_permissions(&self, perm: Permissions) -> io::Result<()> {
        self.op(move |disk, h| disk.set_mode(h, perm.mode())).await
    }

    /// Sets the file's access and modification times (those set in
    /// `times`).
    ///
    /// # Errors
    /// When the host crashed since the file was opened.
    pub async fn set_times(&self, times: super::FileTimes) -> io::Result<()> {
        let accessed = times.accessed.map(unix_ns);
        let modified = times.modified.map(unix_ns);
        self.op(move |disk, h| disk.set_times(h, accessed, modified))
            .await
    }

    /// Sets the file's modification time.
    ///
    /// # Errors
    /// When the host crashed since the file was opened.
    pub async fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        let ns = unix_ns(time);
        self.op(move |disk, h| disk.set_times(h, None, Some(ns)))
            .await
    }

    /// The most one read or write moves.
    ///
    /// # Panics
    /// When `max_buf_size` is 0, as tokio does.
    #[track_caller]
    pub fn set_max_buf_size(&mut self, max_buf_size: usize) {
        assert!(max_buf_size > 0, "`max_buf_size` must be greater than 0");
        self.max_buf_size = max_buf_size;
    }

    /// See [`File::set_max_buf_size`].
    pub fn max_buf_size(&self) -> usize {
        self.max_buf_size
    }

    /// Waits out the latency of the operation about to run.
    fn poll_latency(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let node = self.node;
        let delay = self.latency.get_or_insert_with(|| sim_fs::delay_on(node));
        ready!(Pin::new(delay).poll(cx));
        self.latency = None;
        Poll::Ready(())
    }
}

/// A time as ns since the Unix epoch (earlier times clamp to the epoch).
fn unix_ns(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl AsyncRead for File {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        // Nothing to read: done at once, as in tokio.
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        ready!(me.poll_latency(cx));
        let want = buf.remaining().min(me.max_buf_size);
        let pos = me.pos.load(Ordering::Relaxed);
        let handle = me.handle;
        let dst = buf.initialize_unfilled_to(want);
        let n = sim_fs::with_disk_on(me.node, |disk| disk.read_at(&handle, pos, dst))?;
        buf.advance(n);
        me.pos.store(pos + n as u64, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for File {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        src: &[u8],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        ready!(me.poll_latency(cx));
        let n = src.len().min(me.max_buf_size);
        let pos = me.pos.load(Ordering::Relaxed);
        let handle = me.handle;
        let (written, next) =
            sim_fs::with_disk_on(me.node, |disk| disk.write_at(&handle, pos, &src[..n]))?;
        me.pos.store(next, Ordering::Relaxed);
        Poll::Ready(Ok(written))
    }

    /// Every buffer, in order, up to the most one operation writes, as in
    /// tokio (which copies them into its buffer).
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let max = self.max_buf_size;
        let mut joined = Vec::new();
        for buf in bufs {
            let room = max - joined.len();
            if room == 0 {
                break;
            }
            joined.extend_from_slice(&buf[..buf.len().min(room)]);
        }
        self.poll_write(cx, &joined)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    /// Writes reach the page cache before `poll_write` returns: nothing is
    /// left to flush. (Durability is [`File::sync_all`]'s.)
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for File {
    fn start_seek(self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let me = self.get_mut();
        if me.seek.is_some() {
            return Err(io::Error::other(
                "other file operation is pending, call poll_complete before start_seek",
            ));
        }
        me.seek = Some(position);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        let me = self.get_mut();
        let Some(seek) = me.seek else {
            return Poll::Ready(Ok(me.pos.load(Ordering::Relaxed)));
        };
        ready!(me.poll_latency(cx));
        me.seek = None;
        let pos = me.pos.load(Ordering::Relaxed);
        let handle = me.handle;
        let target = match seek {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(delta) => pos.checked_add_signed(delta),
            SeekFrom::End(delta) => {
                let len = sim_fs::with_disk_on(me.node, |disk| disk.len(&handle))?;
                len.checked_add_signed(delta)
            }
        };
        match target {
            Some(target) => {
                me.pos.store(target, Ordering::Relaxed);
                Poll::Ready(Ok(target))
            }
            None => Poll::Ready(Err(sim_fs::errno(libc_dep::EINVAL))),
        }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // After its runtime is gone, the disk is gone too.
        if sim_runtime::context::current_id().is_some() {
            let handle = self.handle;
            sim_fs::with_disk_on(self.node, |disk| disk.close(&handle));
        }
    }
}

impl From<StdFile> for File {
    /// Refused, as [`File::from_std`].
    fn from(std: StdFile) -> File {
        File::from_std(std)
    }
}

impl From<OwnedFd> for File {
    /// Refused: a real descriptor is outside the simulation.
    fn from(fd: OwnedFd) -> File {
        drop(fd);
        escape("File::from(OwnedFd) on a real descriptor")
    }
}

impl FromRawFd for File {
    /// Takes a descriptor of a file opened in the simulation (`std::fs` on
    /// the host's simulated disk). A real descriptor is refused.
    unsafe fn from_raw_fd(fd: RawFd) -> File {
        match sim_fs::take_descriptor(fd) {
            Some((node, handle, pos)) => {
                let file = File::from_handle(node, handle);
                file.pos.store(pos, Ordering::SeqCst);
                file
            }
            None => {
                // SAFETY: the caller hands over an open descriptor.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                escape("File::from_std (or from_raw_fd) on a real file")
            }
        }
    }
}

impl AsRawFd for File {
    /// A placeholder: `/dev/null`, opened on first use. Nothing done to it
    /// reaches the simulated file.
    fn as_raw_fd(&self) -> RawFd {
        self.placeholder
            .get_or_init(|| {
                std::fs::File::open("/dev/null")
                    .expect("sim: /dev/null opens, as a placeholder descriptor")
                    .into()
            })
            .as_raw_fd()
    }
}

impl AsFd for File {
    fn as_fd(&self) -> BorrowedFd<'_> {
        let fd = self.as_raw_fd();
        // SAFETY: the placeholder lives as long as `self`.
        unsafe { BorrowedFd::borrow_raw(fd) }
    }
}

impl fmt::Debug for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // tokio's form (`tokio::fs::File { std: File { fd: ... } }`), with
        // what identifies a simulated file in place of a real descriptor.
        struct Std<'a>(&'a File);
        impl fmt::Debug for Std<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("File")
                    .field("fd", &"simulated")
                    .field("host", &self.0.node)
                    .field("ino", &self.0.handle.ino)
                    .field("read", &self.0.handle.read)
                    .field("write", &self.0.handle.write)
                    .finish()
            }
        }
        f.debug_struct("tokio::fs::File")
            .field("std", &Std(self))
            .finish()
    }
}
