//! Branch jobs (`crate::explore`): several branch runs from one point in
//! one process, which forks at the point (`sim_runtime::property::fork`).
//! Which tests may fork, the settings a job gets, and the runs a process
//! did not run. (How a job's records and its children's ends count is
//! `records.rs`.)

use super::{Job, JobKind, Mode, SweepConfig, TestState};
use sim_runtime::property::branch::Plan;
use std::path::PathBuf;
use std::process::Command;

/// Branch runs one process runs at most from one point (the fork server):
/// its prefix is replayed once for all of them.
pub(super) const FORK_BATCH_MAX: usize = 16;

/// Whether the test's branch runs may share a process, forked at their
/// point (`sim_runtime::property::fork`): no trace file per run, which
/// children would write over one another; and an in-process sweep (a
/// child ends in its seed's record), or a test libtest runs once per
/// process whose plain runs showed that a panic is how it fails (one
/// passed with none, none failed without one), as a child judges it.
pub(super) fn forkable(state: &TestState, config: &SweepConfig) -> bool {
    let verdicts = match state.result.mode {
        Mode::InProcess => true,
        Mode::PerProcess => state.passed_without_panic && !state.failed_without_panic,
        _ => false,
    };
    verdicts && config.traces.is_none() && config.sim_trace.is_none() && !config.check_determinism
}

/// The branch runs of a finished job that never started: given back when
/// the job was stopped early for a new point, else (its process could not
/// fork at their point) each runs alone, replayed from the start.
pub(super) fn requeue_unrun(job: &Job, state: &mut TestState) {
    if job.kind != JobKind::Branch || job.batch.len() < 2 {
        return;
    }
    let index = job.seeds.get(0).expect("a job has a seed");
    // Without any `branched` record the process ran the first plan alone.
    let skip = usize::from(job.branched.is_empty());
    let unrun: Vec<crate::explore::Branch> = job
        .batch
        .iter()
        .skip(skip)
        .filter(|plan| !job.branched.contains(&last_salt(plan)))
        .map(|plan| crate::explore::Branch {
            index,
            plan: plan.clone(),
        })
        .collect();
    // Stopped early for a new point: the runs left go back to the budget.
    // Otherwise the process could not fork: they run alone.
    match job.stop_asked {
        true => state.result.explorer.give_back(&unrun),
        false => state.result.explorer.requeue(unrun),
    }
}

/// A branch job's settings: the first run's plan (`SIM_BRANCH`), the
/// others' salts (`SIM_BRANCH_FORK`) and the stop file its process looks
/// for (`SIM_BRANCH_STOP`, returned); none for a plain job. `counter`
/// names the job.
pub(super) fn branch_settings(
    command: &mut Command,
    plans: &[Plan],
    config: &SweepConfig,
    counter: u64,
) -> Option<PathBuf> {
    command.env_remove(sim_runtime::settings::BRANCH_FORK.name);
    command.env_remove(sim_runtime::settings::BRANCH_STOP.name);
    let mut stop_file = None;
    if plans.len() > 1 {
        let salts: Vec<String> = plans[1..]
            .iter()
            .map(|p| format!("{:#x}", last_salt(p)))
            .collect();
        command.env(sim_runtime::settings::BRANCH_FORK.name, salts.join(","));
        let path = config.work_dir.join(format!("job-{counter}.stop"));
        let _ = std::fs::remove_file(&path);
        command.env(sim_runtime::settings::BRANCH_STOP.name, &path);
        stop_file = Some(path);
    }
    match plans.first() {
        Some(plan) if !plan.cuts.is_empty() => {
            command.env(sim_runtime::settings::BRANCH.name, plan.encode());
        }
        // A sweep's plain seeds are plain, whatever the runner inherited (a
        // branch run's replay line sets SIM_BRANCH for one seed).
        _ if config.explore => {
            command.env_remove(sim_runtime::settings::BRANCH.name);
        }
        _ => {}
    }
    stop_file
}

/// The salt of a plan's last point.
pub(super) fn last_salt(plan: &Plan) -> u64 {
    plan.cuts.last().map_or(0, |cut| cut.salt)
}

/// A run of branch job `job` made a new point: its process forks no more
/// children (it looks for the stop file before each fork), so the new
/// point is dug at once rather than after the whole batch.
pub(super) fn ask_stop(job: &mut Job) {
    if job.stop_asked {
        return;
    }
    if let Some(path) = &job.stop_file {
        job.stop_asked = std::fs::write(path, b"").is_ok();
    }
}
