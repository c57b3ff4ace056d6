use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// The address of a Unix socket: a path, or unnamed.
#[derive(Clone)]
pub struct SocketAddr(pub(super) std::os::unix::net::SocketAddr);

impl SocketAddr {
    pub(crate) fn from_path(path: Option<&Path>) -> SocketAddr {
        match path.and_then(|p| std::os::unix::net::SocketAddr::from_pathname(p).ok()) {
            Some(addr) => SocketAddr(addr),
            None => SocketAddr(unnamed()),
        }
    }

    /// Whether the socket is unnamed.
    pub fn is_unnamed(&self) -> bool {
        self.0.is_unnamed()
    }

    /// The path, if the socket has one.
    pub fn as_pathname(&self) -> Option<&Path> {
        self.0.as_pathname()
    }

    /// The abstract name: never one in a simulation.
    pub fn as_abstract_name(&self) -> Option<&[u8]> {
        None
    }
}

/// An unnamed address, taken once from a real, unbound socket (which sends
/// nothing).
fn unnamed() -> std::os::unix::net::SocketAddr {
    static UNNAMED: OnceLock<std::os::unix::net::SocketAddr> = OnceLock::new();
    UNNAMED
        .get_or_init(|| {
            std::os::unix::net::UnixDatagram::unbound()
                .and_then(|s| s.local_addr())
                .expect("an unbound socket has an unnamed address")
        })
        .clone()
}

impl fmt::Debug for SocketAddr {
    fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(fmt)
    }
}

impl From<std::os::unix::net::SocketAddr> for SocketAddr {
    fn from(value: std::os::unix::net::SocketAddr) -> Self {
        SocketAddr(value)
    }
}

impl From<SocketAddr> for std::os::unix::net::SocketAddr {
    fn from(value: SocketAddr) -> Self {
        value.0
    }
}
