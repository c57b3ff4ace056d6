//! A replicated key-value store, the harness's showcase: three nodes elect
//! a leader and replicate a log by Raft's rules (terms, votes, the log
//! up-to-date check, commit by majority), each node keeps its term, vote
//! and log in a write-ahead log on its own disk, and they talk HTTP: axum
//! serves, reqwest calls. It is an ordinary tokio service: it runs on real
//! tokio and, unchanged, on the simulator.
//!
//! - `node.rs`: a node's roles, elections and replication;
//! - `store.rs`: its durable state (term, vote, log) on [`crate::wal`];
//! - `http.rs`: the HTTP API (`/raft/vote`, `/raft/append`, `/kv/{key}`)
//!   and `serve`, which runs a node behind it;
//! - `wire.rs`: the messages, as JSON;
//! - `client.rs`: a client that finds the leader and writes.
//!
//! Under `--cfg simulation` it publishes what the harness's checkers need
//! (`tokio::sim::publish`): each node's role and term, and each new
//! leader's log. Plain builds compile that to nothing.
//!
//! [`Config::planted_bug`] plants a bug for the simulator to find: a vote
//! is granted without the log up-to-date check, so a node that missed
//! acknowledged writes can be elected and lose them.

pub mod client;
mod http;
mod node;
mod store;
mod wire;

pub use client::{Ack, Client};
pub use http::serve;
pub use node::Config;
pub use store::Entry;

/// Publishes a fact for the simulation's checkers; nothing in plain builds.
macro_rules! observe {
    ($key:expr, $value:expr) => {{
        #[cfg(simulation)]
        tokio::sim::publish($key, $value);
        #[cfg(not(simulation))]
        let _ = (&$key, &$value);
    }};
}
pub(crate) use observe;
