//! Phase 2: the simulation build of the test binaries. The user's lock is
//! swapped for one that names the facade while cargo builds, and is back
//! before any test runs. A build that fails with no target chosen is run
//! again going on past the targets that do not compile, so the others
//! still run (and the broken ones are reported as `build` failures).

use super::plan::Plan;
use super::{check_signal, Halt};
use crate::compile::{self, BrokenTarget, TestBinary};
use crate::config::SimBuild;
use crate::identity::Identity;
use crate::lock::LockFiles;

/// What the build gave.
pub(crate) struct Built {
    pub(crate) sim: SimBuild,
    pub(crate) identity: Identity,
    pub(crate) files: LockFiles,
    pub(crate) binaries: Vec<TestBinary>,
    /// Targets that do not compile (only when none was chosen).
    pub(crate) broken: Vec<BrokenTarget>,
}

/// Builds the tests; prints the identity line first and a line for each
/// target that does not compile.
pub(crate) fn build(plan: &Plan) -> Result<Built, Halt> {
    let sim = SimBuild::prepare()?;
    let identity = Identity::read(&sim.root, &sim.facade);
    eprintln!("sim: identity: {}", identity.line());
    let files = LockFiles::new(&sim.root, &sim.target);
    let (binaries, broken) = {
        let mut held = files.acquire()?;
        held.swap_in()?;
        let built = sim
            .point_lock_at_facade()
            .and_then(|()| compile::build_tests(&sim, &plan.cargo_args));
        let built = match built {
            Err(_) if !plan.targets_chosen && crate::signals::received().is_none() => {
                keep_going(&sim, &plan.cargo_args)
            }
            other => other.map(|binaries| (binaries, Vec::new())),
        };
        // The lock is back before any test runs.
        held.swap_out()?;
        check_signal()?;
        built?
    };
    for target in &broken {
        eprintln!(
            "sim: {} {} does not compile; the other targets run (its first error is in the report)",
            target.package, target.target
        );
    }
    Ok(Built {
        sim,
        identity,
        files,
        binaries,
        broken,
    })
}

/// The build again, going on past the targets that do not compile; an
/// error when none was broken on its own (the failure was elsewhere).
fn keep_going(
    sim: &SimBuild,
    cargo_args: &[String],
) -> Result<(Vec<TestBinary>, Vec<BrokenTarget>), String> {
    match compile::build_tests_keep_going(sim, cargo_args) {
        Ok((binaries, broken)) if !broken.is_empty() => Ok((binaries, broken)),
        Ok(_) => Err("the simulation build failed (see cargo's errors above)".to_string()),
        Err(e) => Err(e),
    }
}
