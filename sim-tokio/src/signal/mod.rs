//! Signals, delivered per simulated host by the harness
//! (`sim_net::Fault::Signal`). A host that registered no handler for a
//! terminating signal crashes, as a process would exit.

mod ctrl_c;
pub mod unix;

pub use ctrl_c::ctrl_c;
