use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Things that resolve to socket addresses: addresses, `(host, port)`
/// pairs, and `"host:port"` strings. Host names are the simulation's hosts.
pub trait ToSocketAddrs: sealed::ToSocketAddrsPriv {}

pub(crate) mod sealed {
    use std::io;
    use std::net::SocketAddr;

    /// The addresses a name resolved to: one address needs no allocation
    /// (sending a datagram to a `SocketAddr` resolves it on every call).
    pub enum Addrs {
        One(std::option::IntoIter<SocketAddr>),
        Many(std::vec::IntoIter<SocketAddr>),
    }

    impl Addrs {
        pub(crate) fn one(addr: SocketAddr) -> Addrs {
            Addrs::One(Some(addr).into_iter())
        }
    }

    impl From<Vec<SocketAddr>> for Addrs {
        fn from(addrs: Vec<SocketAddr>) -> Addrs {
            Addrs::Many(addrs.into_iter())
        }
    }

    impl Iterator for Addrs {
        type Item = SocketAddr;

        fn next(&mut self) -> Option<SocketAddr> {
            match self {
                Addrs::One(one) => one.next(),
                Addrs::Many(many) => many.next(),
            }
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            match self {
                Addrs::One(one) => one.size_hint(),
                Addrs::Many(many) => many.size_hint(),
            }
        }
    }

    /// Resolution against the simulated network.
    pub trait ToSocketAddrsPriv {
        /// The addresses this names.
        fn resolve(&self) -> io::Result<Addrs>;

        /// The host name to resolve, if this is one (not an address).
        fn host_name(&self) -> Option<&str> {
            None
        }
    }
}

use sealed::{Addrs, ToSocketAddrsPriv};

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("invalid socket address: {what}"),
    )
}

fn resolve_host(host: &str, port: u16) -> io::Result<Addrs> {
    let ips = sim_net::with_net(|net| net.resolve(host))?;
    Ok(Addrs::from(
        ips.into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect::<Vec<_>>(),
    ))
}

/// The host part of a `"host:port"` string that is not an address.
fn host_of_str(s: &str) -> Option<&str> {
    if s.parse::<SocketAddr>().is_ok() {
        return None;
    }
    s.rsplit_once(':').map(|(host, _)| host)
}

/// Resolves `addr`, waiting first for the simulated DNS's delay of its
/// host name, if a scripted control set one.
async fn resolve_timed<A: ToSocketAddrsPriv + ?Sized>(addr: &A) -> io::Result<Addrs> {
    if let Some(name) = addr.host_name() {
        let delay = sim_net::with_net(|net| net.dns_delay(name));
        if !delay.is_zero() {
            crate::time::sleep(delay).await;
        }
    }
    addr.resolve()
}

fn resolve_str(s: &str) -> io::Result<Addrs> {
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(Addrs::one(addr));
    }
    let (host, port) = s.rsplit_once(':').ok_or_else(|| invalid(s))?;
    let port: u16 = port.parse().map_err(|_| invalid(s))?;
    resolve_host(host, port)
}

macro_rules! direct {
    ($($ty:ty),*) => {$(
        impl ToSocketAddrs for $ty {}
        impl ToSocketAddrsPriv for $ty {
            fn resolve(&self) -> io::Result<Addrs> {
                Ok(Addrs::one(SocketAddr::from(*self)))
            }
        }
    )*};
}

direct!(
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
    (IpAddr, u16),
    (Ipv4Addr, u16),
    (Ipv6Addr, u16)
);

impl ToSocketAddrs for &[SocketAddr] {}
impl ToSocketAddrsPriv for &[SocketAddr] {
    fn resolve(&self) -> io::Result<Addrs> {
        Ok(Addrs::from(self.to_vec()))
    }
}

impl ToSocketAddrs for str {}
impl ToSocketAddrsPriv for str {
    fn resolve(&self) -> io::Result<Addrs> {
        resolve_str(self)
    }

    fn host_name(&self) -> Option<&str> {
        host_of_str(self)
    }
}

impl ToSocketAddrs for String {}
impl ToSocketAddrsPriv for String {
    fn resolve(&self) -> io::Result<Addrs> {
        resolve_str(self)
    }

    fn host_name(&self) -> Option<&str> {
        host_of_str(self)
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl ToSocketAddrsPriv for (&str, u16) {
    fn resolve(&self) -> io::Result<Addrs> {
        if let Ok(ip) = self.0.parse::<IpAddr>() {
            return Ok(Addrs::one(SocketAddr::new(ip, self.1)));
        }
        resolve_host(self.0, self.1)
    }

    fn host_name(&self) -> Option<&str> {
        self.0.parse::<IpAddr>().is_err().then_some(self.0)
    }
}

impl ToSocketAddrs for (String, u16) {}
impl ToSocketAddrsPriv for (String, u16) {
    fn resolve(&self) -> io::Result<Addrs> {
        (self.0.as_str(), self.1).resolve()
    }

    fn host_name(&self) -> Option<&str> {
        self.0.parse::<IpAddr>().is_err().then_some(self.0.as_str())
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: ToSocketAddrsPriv + ?Sized> ToSocketAddrsPriv for &T {
    fn resolve(&self) -> io::Result<Addrs> {
        (**self).resolve()
    }

    fn host_name(&self) -> Option<&str> {
        (**self).host_name()
    }
}

/// Resolves `host` against the simulation's hosts (no DNS, no wall time):
/// a host name gives its synthetic address, `localhost` the caller's own.
///
/// # Errors
/// For a name no host has, as a real resolver fails.
pub async fn lookup_host<T>(host: T) -> io::Result<impl Iterator<Item = SocketAddr>>
where
    T: ToSocketAddrs,
{
    resolve_timed(&host).await
}

/// Tries each address in turn, returning the first success or the last
/// error.
pub(crate) async fn each_addr<A, T, F, Fut>(addr: A, mut f: F) -> io::Result<T>
where
    A: ToSocketAddrs,
    F: FnMut(SocketAddr) -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    let addrs = resolve_timed(&addr).await?;
    let mut last_err = None;
    for addr in addrs {
        match f(addr).await {
            Ok(v) => return Ok(v),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}
