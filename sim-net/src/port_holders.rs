//! Ports that hold several sockets (by slab index). As on Linux, one port
//! holds several sockets when their addresses do not overlap:
//! `127.0.0.1:8080` and `[::1]:8080` (or the host's own address) side by
//! side, where `0.0.0.0:8080` takes the port for every IPv4 address and
//! `[::]:8080`, dual-stack, for every address. A host's TCP ports are a
//! table of these (a connection's own port counts as bound while it
//! lives); its UDP ports keep their first socket in the `PortMap` a
//! delivery reads and only the others here.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// The sockets bound to each port, in bind order.
#[derive(Default)]
pub(crate) struct PortHolders {
    ports: BTreeMap<u16, Vec<u32>>,
}

impl PortHolders {
    /// The sockets bound to `port`, oldest first.
    pub(crate) fn holders(&self, port: u16) -> &[u32] {
        self.ports.get(&port).map_or(&[], Vec::as_slice)
    }

    /// Whether any socket is bound to `port` (an ephemeral pick skips it).
    pub(crate) fn contains(&self, port: u16) -> bool {
        self.ports.contains_key(&port)
    }

    /// Binds the socket at `index` to `port` too.
    pub(crate) fn add(&mut self, port: u16, index: u32) {
        let holders = self.ports.entry(port).or_default();
        if !holders.contains(&index) {
            holders.push(index);
        }
    }

    /// Unbinds the socket at `index` from `port` (nothing when it was not
    /// bound there).
    pub(crate) fn remove(&mut self, port: u16, index: u32) {
        if let Some(holders) = self.ports.get_mut(&port) {
            holders.retain(|&held| held != index);
            if holders.is_empty() {
                self.ports.remove(&port);
            }
        }
    }

    /// Unbinds every port (the host restarts).
    pub(crate) fn clear(&mut self) {
        self.ports.clear();
    }

    /// Whether no port holds a socket here (the common case for UDP:
    /// one socket per port, kept in the `PortMap` alone).
    pub(crate) fn is_empty(&self) -> bool {
        self.ports.is_empty()
    }
}

/// Whether binding `a` and `b` to one port conflicts, as Linux decides
/// without `SO_REUSEPORT`: the same address, or an unspecified one that
/// covers the other (`0.0.0.0` every IPv4 address, `[::]` every address,
/// as a dual-stack socket does by default).
pub(crate) fn overlap(a: IpAddr, b: IpAddr) -> bool {
    let covers =
        |wide: IpAddr, other: IpAddr| wide.is_unspecified() && (wide.is_ipv6() || other.is_ipv4());
    a == b || covers(a, b) || covers(b, a)
}

/// How well a listener bound to `bound` matches a connection to `dst`:
/// `Some(2)` for its own address, `Some(1)` for an unspecified address
/// that covers it, `Some(0)` for another loopback address (the simulated
/// loopback is one), `None` for no match.
pub(crate) fn match_rank(bound: IpAddr, dst: IpAddr) -> Option<u8> {
    if bound == dst {
        Some(2)
    } else if bound.is_unspecified() && (bound.is_ipv6() || dst.is_ipv4()) {
        Some(1)
    } else if bound.is_loopback() && dst.is_loopback() {
        Some(0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn loopbacks_of_two_families_share_a_port_and_wildcards_cover() {
        assert!(!overlap(ip("127.0.0.1"), ip("::1")));
        assert!(overlap(ip("127.0.0.1"), ip("127.0.0.1")));
        assert!(overlap(ip("0.0.0.0"), ip("127.0.0.1")));
        assert!(!overlap(ip("0.0.0.0"), ip("::1")));
        assert!(overlap(ip("::"), ip("127.0.0.1")));
        assert!(overlap(ip("::1"), ip("::")));
        assert!(!overlap(ip("10.0.0.1"), ip("127.0.0.1")));
    }

    #[test]
    fn a_connection_goes_to_the_closest_listener() {
        assert_eq!(match_rank(ip("::1"), ip("::1")), Some(2));
        assert_eq!(match_rank(ip("::"), ip("127.0.0.1")), Some(1));
        assert_eq!(match_rank(ip("0.0.0.0"), ip("::1")), None);
        assert_eq!(match_rank(ip("127.0.0.1"), ip("::1")), Some(0));
        assert_eq!(match_rank(ip("10.0.0.1"), ip("127.0.0.1")), None);
    }

    #[test]
    fn a_port_keeps_its_holders_until_the_last_goes() {
        let mut ports = PortHolders::default();
        ports.add(8080, 1);
        ports.add(8080, 2);
        ports.add(8080, 2);
        assert_eq!(ports.holders(8080), &[1, 2]);
        ports.remove(8080, 1);
        assert!(ports.contains(8080));
        ports.remove(8080, 2);
        assert!(!ports.contains(8080));
        assert!(ports.holders(8080).is_empty());
    }
}
