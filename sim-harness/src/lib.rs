//! `sim-harness`: a simulation of named hosts on the simulated network,
//! with faults at virtual times. The facade re-exports it as `tokio::sim`,
//! so users reach it with nothing in their `Cargo.toml` but `tokio`.
//!
//! - [`sim`]: [`Sim`], the hosts, the clients and the run; [`Fault`].

#![warn(missing_docs)]

pub mod sim;

pub use sim::{Fault, Sim, SimReport};
pub use sim_fs::DiskConfig;
pub use sim_net::LinkConfig;
