//! Phase 4: the sweep itself: every case's seeds over `--jobs` processes
//! (`crate::runner`), with the progress line (`crate::report::Reporter`).

use super::build::Built;
use super::plan::Plan;
use super::Halt;
use crate::runner::{self, SweepConfig, TestCase, TestResult};
use std::path::PathBuf;

/// What the sweep gave, and what later phases need of its setup.
pub(crate) struct Swept {
    pub(crate) config: SweepConfig,
    pub(crate) results: Vec<TestResult>,
    /// Where the test processes wrote (removed when all passed).
    pub(crate) work_dir: PathBuf,
    /// `--trace DIR`, made absolute.
    pub(crate) traces: Option<PathBuf>,
    /// One test at one seed: its output is shown, and the report is short.
    pub(crate) single: bool,
    /// For a test whose failing seed passed alone: that seed.
    pub(crate) carried: std::collections::BTreeMap<usize, u64>,
    /// For a failing test whose first failing seed passed in FIFO order
    /// (`order.rs`): that seed.
    pub(crate) fifo_passes: std::collections::BTreeMap<usize, u64>,
}

impl Swept {
    /// One test at one seed (a replay), or `--verbose`: show what it
    /// printed.
    pub(crate) fn show_logs(&self) {
        if !self.config.verbose {
            return;
        }
        let entries = std::fs::read_dir(&self.work_dir).into_iter().flatten();
        for entry in entries.flatten() {
            if entry.path().extension().is_some_and(|e| e == "log") {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                eprint!("{text}");
            }
        }
    }
}

/// Prints the start line and runs the cases.
pub(crate) fn sweep(plan: &Plan, built: &Built, cases: Vec<TestCase>) -> Result<Swept, Halt> {
    let work_dir = built
        .sim
        .target
        .join(format!("sweep-{}", std::process::id()));
    std::fs::create_dir_all(&work_dir)
        .map_err(|e| format!("cannot create {}: {e}", work_dir.display()))?;
    let single = cases.len() == 1 && plan.seeds.len() == 1;
    eprintln!(
        "sim: {} in {} × {}{}, {} jobs",
        crate::plural(cases.len(), "test"),
        crate::plural(built.binaries.len(), "binary"),
        plan.seeds_said(),
        plan.partition
            .map(|p| format!(" (share {}/{})", p.index, p.count))
            .unwrap_or_default(),
        plan.jobs
    );
    let traces = trace_dir(plan)?;
    let config = config(plan, work_dir.clone(), single, traces.clone())?;
    let mut reporter = crate::report::Reporter::new(config.deadline);
    let results = runner::run(&config, &built.binaries, cases, &mut reporter);
    reporter.finish();
    let results = results.map_err(|runner::Interrupted(signal)| {
        eprintln!("sim: interrupted by signal {signal}; no test process is left running");
        Halt::Signal(signal)
    })?;
    Ok(Swept {
        config,
        results,
        work_dir,
        traces,
        single,
        carried: Default::default(),
        fifo_passes: Default::default(),
    })
}

/// `--trace DIR`, made absolute and created: trace files go where the
/// user said, wherever the tests run.
fn trace_dir(plan: &Plan) -> Result<Option<PathBuf>, String> {
    if plan.options.trace.is_some() && plan.options.check_determinism {
        return Err(
            "--trace and --check-determinism both write the sweep's traces: use one".to_string(),
        );
    }
    let Some(dir) = &plan.options.trace else {
        return Ok(None);
    };
    let dir = cwd()?.join(dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create --trace {}: {e}", dir.display()))?;
    Ok(Some(dir))
}

fn cwd() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| format!("no working directory: {e}"))
}

fn config(
    plan: &Plan,
    work_dir: PathBuf,
    single: bool,
    traces: Option<PathBuf>,
) -> Result<SweepConfig, String> {
    let options = &plan.options;
    let sim_trace = sim_runtime::settings::TRACE
        .path()
        .map(|p| cwd().map(|c| c.join(p)))
        .transpose()?;
    Ok(SweepConfig {
        jobs: plan.jobs,
        // A soak run counts every seed, and keeps every failing one.
        keep_going: options.keep_going || plan.soak.is_some(),
        deadline: plan.soak.map(|d| std::time::Instant::now() + d),
        check_determinism: options.check_determinism,
        verbose: options.verbose || single,
        work_dir,
        traces: traces.filter(|_| !options.trace_failing),
        sim_trace,
        // A sweep digs where its rare states are; one seed, a replay or a
        // soak run (whose budget is time) runs its seeds plain.
        explore: !options.no_explore
            && plan.seeds.len() > 1
            && plan.soak.is_none()
            && !plan.is_replay(),
    })
}
