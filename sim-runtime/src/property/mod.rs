//! Properties: the assertions of `tokio::sim` (`assert_always!`,
//! `assert_sometimes!`, `assert_reachable!`, ...), shaped like Antithesis's.
//!
//! Each call site is a static [`Site`]. The macro registers it before
//! `main` (a constructor in `.init_array`), so a sweep knows every site of
//! a binary, the ones no run reached too: a `sometimes` never satisfied
//! says the workload is too weak or the state unreachable, and both are
//! findings. A site not registered that way (another platform) registers
//! when first reached.
//!
//! During a run each evaluation is counted per site (a runtime extension,
//! so a simulated thread's count goes to its run); at the run's end the
//! counts go to the sweep as records (`sweep::run_finished`). A broken
//! `always` or a reached `unreachable` fails the run at once, with class
//! `assertion`. Outside a run an evaluation does nothing.
//!
//! The files: `site.rs` (the sites, the kinds, the registry; nothing of the
//! core), `run.rs` (counting in a run, failing it, what it reached) and
//! `branch.rs` (branch runs: where a run draws afresh) and `fork.rs` (the
//! fork server: a branch job's runs forked at their point).

pub mod branch;
pub(crate) mod fork;
mod run;
pub(crate) mod site;

pub use run::reached;
pub use site::{sites, Kind, Reached, Site};
