//! Networking on the simulated network (`sim-net`): TCP and UDP between the
//! simulation's hosts, with seeded latency and injectable faults.
//!
//! Each task runs on a host (a plain `#[tokio::test]` on the implicit host
//! `main`); `127.0.0.1`, `localhost` and `0.0.0.0` mean that host. Names of
//! hosts resolve to their synthetic addresses.

mod addr;
mod fd;
mod halves;
mod readiness;
mod stream_io;
pub mod tcp;
mod udp;
pub mod unix;

pub use addr::{lookup_host, ToSocketAddrs};
pub use tcp::{TcpListener, TcpSocket, TcpStream};
pub use udp::UdpSocket;
pub use unix::{UnixDatagram, UnixListener, UnixSocket, UnixStream};
