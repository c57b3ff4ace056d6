//! The halves of a `TcpStream`.

use super::TcpStream;
use std::net::SocketAddr;

crate::net::halves::stream_halves!(TcpStream, SocketAddr);
