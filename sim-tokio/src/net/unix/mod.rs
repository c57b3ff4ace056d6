//! Unix domain sockets, in each simulated host's own namespace of paths.
//! A path names a socket only on the host that bound it. A bind leaves a
//! socket file at its path on the host's simulated disk (never on the real
//! filesystem), as Linux does, so `std::fs` sees it and can remove it.

mod datagram;
mod fifo;
mod listener;
pub mod pipe;
mod socket;
mod socketaddr;
pub(crate) mod split;
mod stream;
mod ucred;

pub use datagram::UnixDatagram;

/// The socket file a bind leaves at `path` on the host's simulated disk
/// (an abstract name, starting with a NUL byte, has none).
///
/// # Errors
/// `AddrInUse` when something other than a socket file is there; as
/// creating a file there.
pub(crate) fn bind_socket_file(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() || bytes[0] == 0 {
        return Ok(());
    }
    sim_fs::with_disk(|disk| disk.bind_socket_file(path))
}
pub use listener::UnixListener;
pub use socket::UnixSocket;
pub use socketaddr::SocketAddr;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::UnixStream;
pub use ucred::UCred;

/// A user id.
#[allow(non_camel_case_types)]
pub type uid_t = u32;
/// A group id.
#[allow(non_camel_case_types)]
pub type gid_t = u32;
/// A process id.
#[allow(non_camel_case_types)]
pub type pid_t = i32;
