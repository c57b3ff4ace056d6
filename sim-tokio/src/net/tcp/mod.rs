//! TCP on the simulated network.

mod listener;
mod socket;
pub(crate) mod split;
pub(crate) mod stream;

pub use listener::TcpListener;
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;

pub(crate) fn escape_for_udp(what: &str) -> std::io::Error {
    stream::escape(&format!("UdpSocket on {what}"))
}
