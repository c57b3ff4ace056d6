//! TCP on the simulated network.

mod listener;
mod socket;
mod split;
mod split_owned;
mod stream;

pub use listener::TcpListener;
pub use socket::TcpSocket;
pub use split::{ReadHalf, WriteHalf};
pub use split_owned::{OwnedReadHalf, OwnedWriteHalf, ReuniteError};
pub use stream::TcpStream;

pub(crate) fn escape_for_udp(what: &str) -> std::io::Error {
    stream::escape(&format!("UdpSocket on {what}"))
}
