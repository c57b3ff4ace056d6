//! Histories of client operations, and the checkers that find what users
//! cannot check by hand: linearizability ([`linear`], as Knossos and
//! porcupine decide it) and transactional anomalies ([`elle`], as Elle
//! finds them).
//!
//! - [`History`]: invocations and completions in the order they happened
//!   (`history.rs`), made of [`Op`]s and [`Value`]s (`op.rs`,
//!   `value.rs`); as files, JSON lines and Jepsen's EDN (`file.rs`).
//! - [`linear`]: a [`linear::Model`], the search, the budget, the verdict
//!   and the smallest window of an illegal history; built-in models in
//!   [`linear::models`].
//! - [`elle`]: the dependency graph of a transactional history
//!   (list-append or read-write registers), its cycles and the anomalies
//!   they are (G0, G1a, G1b, G1c, G-single, G2), edge by edge in words.
//! - [`table`]: operations as a table of clients by time.
//! - [`note`]: a history's events as notes of a run's trace, and back.
//!
//! Nothing here knows of the simulator: `tokio::sim::history` records a
//! run's history into a [`History`] and checks it at the end of the run
//! (or as it goes), and a history saved to a file is checked the same way
//! anywhere.

#![warn(missing_docs)]

pub mod elle;
mod file;
mod hash;
mod history;
pub mod linear;
pub mod note;
mod op;
pub mod table;
mod value;

pub use history::{Event, History, Kind, Operation, Outcome};
pub use op::{Mop, MopKind, Op};
pub use value::Value;
