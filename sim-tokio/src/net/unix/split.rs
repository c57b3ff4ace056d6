//! The halves of a `UnixStream`.

use super::{SocketAddr, UnixStream};

crate::net::halves::stream_halves!(UnixStream, SocketAddr);
