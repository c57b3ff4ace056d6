//! `sim-net`: the simulated network under `tokio::net`.
//!
//! A simulation has hosts. Each has a name, a synthetic IPv4 address
//! (`10.0.0.1`, `10.0.0.2`, ... in registration order), its own ports, and
//! its own tasks. Host 0, `main`, is implicit: a plain `#[tokio::test]`
//! runs there. `127.0.0.1`, `localhost`, `0.0.0.0` and `::1` mean the calling
//! task's own host.
//!
//! Every byte between sockets crosses a directed link whose latency is drawn
//! from the seed. Deliveries are events on the runtime's one event queue,
//! and every network event is recorded in the runtime's one trace. There is
//! no per-tick scan: a send schedules its delivery, and nothing else runs.
//!
//! - [`net`]: one simulation's network: hosts, links, deliveries, faults.
//! - `state.rs`: the shared state every part works on; `socket.rs`: what
//!   the socket slab holds and what travels between sockets.
//! - [`tcp`]: connections (reliable, ordered, with flow control).
//! - [`udp`]: datagrams (dropped, duplicated, reordered by link rates).
//! - [`std_net`]: `std::net`'s TCP and UDP sockets during a run, as sockets of this
//!   network (the hooks `sim-os`'s interposed socket calls ask).
//! - [`control`]: scripted controls (hold after N bytes, resets by
//!   predicate, silent ports, throttled readers, DNS delays, routes).

#![warn(missing_docs)]

pub mod control;
mod datagrams;
mod draws;
mod flight;
pub mod link;
pub mod net;
mod payload;
mod port_holders;
mod ports;
pub mod signal;
mod socket;
mod state;
pub mod std_net;
pub mod tcp;
pub mod udp;
pub mod unix;
pub mod watch;

pub use control::{ConnEnds, ConnPredicate};
pub use link::LinkConfig;
pub use net::{
    release_socket, try_with_net, try_with_socket, try_with_socket_net, with_net, with_socket,
    with_socket_net, ConnectPolicy, Gone, HostId, LoopbackFaults, Network, SocketId,
    SHUTDOWN_MESSAGE,
};
