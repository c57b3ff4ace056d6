//! `sim-harness`: a simulation of named hosts on the simulated network,
//! with faults at virtual times. The facade re-exports it as `tokio::sim`,
//! so users reach it with nothing in their `Cargo.toml` but `tokio`.
//!
//! - [`sim`]: [`Sim`], the hosts, the clients and the run.
//! - [`fault`]: [`Fault`], what a test does to the world.
//! - `host.rs`: hosts' factories, main tasks and restarts.
//! - [`observe`]: [`publish`], what service code tells the checkers.
//! - [`history`]: a run's history of client operations, and the checks
//!   of it (linearizability, transactional anomalies).
//! - `checker.rs`: invariants after every harness event ([`Sim::check`]).
//! - `liveness.rs`: the liveness phase ([`Sim::eventually`]).
//! - [`nemesis`]: fault generators at seeded times ([`Nemesis`]).
//! - [`swarm`]: per-seed fault settings ([`swarm::Swarm`]).
//! - `horizon.rs`: the swarm's horizon, measured from a run of the test
//!   without it.
//! - [`one_host`]: the swarm of a plain one-host test (`SIM_SWARM=1`).
//! - [`control`]: which connections a scripted reset takes
//!   ([`control::Conns`]).
//! - [`rollout`]: a new version over the replicas behind a route
//!   ([`rollout::Rollout`]).
//! - [`shrink`]: fault units, left out or listed for
//!   `cargo sim test --shrink`.

#![warn(missing_docs)]

mod checker;
pub mod control;
pub mod fault;
pub mod history;
mod horizon;
mod host;
mod liveness;
pub mod nemesis;
pub mod observe;
pub mod one_host;
pub mod rollout;
pub mod shrink;
pub mod sim;
pub mod swarm;

pub use fault::Fault;
pub use nemesis::Nemesis;
pub use observe::{publish, Observations, Publication};
pub use sim::{Sim, SimReport};
pub use sim_fs::DiskConfig;
pub use sim_net::LinkConfig;
