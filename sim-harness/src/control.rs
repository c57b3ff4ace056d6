//! Which connections a scripted reset acts on ([`Conns`]), for
//! [`crate::Fault::Reset`] and [`crate::Fault::ResetWhen`].
//!
//! ```
//! use tokio::sim::{control::Conns, Fault};
//!
//! // Every connection between the proxy and the db, now.
//! Fault::Reset(Conns::between("proxy", "db"));
//! // From now on, the connection that sends a DELETE is reset instead.
//! Fault::ResetWhen(Conns::port(8080).containing(b"DELETE "));
//! ```

use sim_net::{ConnEnds, ConnPredicate, HostId, Network};
use std::fmt;
use std::rc::Rc;

type BytesFn = Rc<dyn Fn(&[u8]) -> bool>;

/// A set of TCP connections: by host, by pair of hosts, by port, and (for
/// [`crate::Fault::ResetWhen`]) by the bytes one sends. Conditions add up:
/// a connection must meet each one given.
#[derive(Clone, Default)]
pub struct Conns {
    of: Option<String>,
    and: Option<String>,
    port: Option<u16>,
    bytes: Option<(String, BytesFn)>,
}

impl Conns {
    /// Every connection.
    pub fn all() -> Conns {
        Conns::default()
    }

    /// The connections with `host` at one end.
    pub fn of(host: &str) -> Conns {
        Conns {
            of: Some(host.to_string()),
            ..Conns::default()
        }
    }

    /// The connections between `a` and `b` (either way).
    pub fn between(a: &str, b: &str) -> Conns {
        Conns {
            of: Some(a.to_string()),
            and: Some(b.to_string()),
            ..Conns::default()
        }
    }

    /// The connections with `port` at one end (a server's port, or a
    /// client's ephemeral one).
    pub fn port(port: u16) -> Conns {
        Conns::all().on_port(port)
    }

    /// These, with `port` at one end.
    pub fn on_port(mut self, port: u16) -> Conns {
        self.port = Some(port);
        self
    }

    /// These, when a send's bytes contain `needle` (only for
    /// [`crate::Fault::ResetWhen`]: a reset by content).
    pub fn containing(self, needle: &[u8]) -> Conns {
        let needle = needle.to_vec();
        let name = format!("bytes contain {:?}", String::from_utf8_lossy(&needle));
        self.bytes_match(&name, move |data| {
            !needle.is_empty() && data.windows(needle.len()).any(|w| w == needle.as_slice())
        })
    }

    /// These, when a send's bytes meet `predicate`, named `name` in the
    /// trace (only for [`crate::Fault::ResetWhen`]).
    pub fn bytes_match(mut self, name: &str, predicate: impl Fn(&[u8]) -> bool + 'static) -> Conns {
        self.bytes = Some((name.to_string(), Rc::new(predicate)));
        self
    }

    pub(crate) fn has_bytes(&self) -> bool {
        self.bytes.is_some()
    }

    /// The network's predicate for these connections.
    #[track_caller]
    pub(crate) fn predicate(&self, net: &Network) -> ConnPredicate {
        let id = |name: &String| -> HostId {
            net.host_id(name).unwrap_or_else(|| {
                panic!("sim: Conns names {name:?}, which is no host of this simulation")
            })
        };
        let of = self.of.as_ref().map(id);
        let and = self.and.as_ref().map(id);
        let port = self.port;
        let bytes = self.bytes.as_ref().map(|(_, f)| f.clone());
        Rc::new(move |ends: &ConnEnds, data: &[u8]| {
            let hosts_ok = match (of, and) {
                (Some(a), Some(b)) => {
                    (ends.from == a && ends.to == b) || (ends.from == b && ends.to == a)
                }
                (Some(a), None) => ends.from == a || ends.to == a,
                _ => true,
            };
            let port_ok = port.is_none_or(|p| ends.src.port() == p || ends.dst.port() == p);
            let bytes_ok = bytes.as_ref().is_none_or(|f| f(data));
            hosts_ok && port_ok && bytes_ok
        })
    }
}

impl fmt::Debug for Conns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match (&self.of, &self.and) {
            (Some(a), Some(b)) => parts.push(format!("between {a} and {b}")),
            (Some(a), None) => parts.push(format!("of {a}")),
            _ => {}
        }
        if let Some(p) = self.port {
            parts.push(format!("port {p}"));
        }
        if let Some((name, _)) = &self.bytes {
            parts.push(name.clone());
        }
        if parts.is_empty() {
            parts.push("all".to_string());
        }
        write!(f, "connections {}", parts.join(", "))
    }
}

impl PartialEq for Conns {
    fn eq(&self, other: &Conns) -> bool {
        let same_bytes = match (&self.bytes, &other.bytes) {
            (None, None) => true,
            (Some((a, f)), Some((b, g))) => a == b && Rc::ptr_eq(f, g),
            _ => false,
        };
        self.of == other.of && self.and == other.and && self.port == other.port && same_bytes
    }
}
