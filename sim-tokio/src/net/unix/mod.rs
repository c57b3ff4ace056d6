//! Unix domain sockets, in each simulated host's own namespace of paths.
//! A path names a socket only on the host that bound it; nothing is
//! created on the real filesystem. Dropping a listener removes its path.

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
