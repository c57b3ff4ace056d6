//! Phase 6: the doc tests of the swept libraries, through cargo, at the
//! sweep's first seed, when no target was chosen (they are not swept: one
//! rustdoc process per example makes a seed per example too slow).

use super::build::Built;
use super::plan::Plan;
use super::Halt;
use crate::compile::{self, TargetKind};

/// How the doc tests went.
#[derive(Default)]
pub(crate) struct DocTests {
    /// Whether they ran and passed.
    pub(crate) passed: bool,
    /// Each failure's report (with its replay line).
    pub(crate) failures: Vec<String>,
}

impl DocTests {
    /// Whether they ran.
    pub(crate) fn ran(&self) -> bool {
        self.passed || !self.failures.is_empty()
    }
}

/// Runs the doc tests of the libraries among the built binaries; their
/// output goes to `work_dir`.
pub(crate) fn run(
    plan: &Plan,
    built: &Built,
    work_dir: &std::path::Path,
) -> Result<DocTests, Halt> {
    if plan.options.no_doc || plan.targets_chosen {
        return Ok(DocTests::default());
    }
    let mut packages: Vec<&str> = built
        .binaries
        .iter()
        .filter(|b| b.kind == TargetKind::Lib)
        .map(|b| b.package.as_str())
        .collect();
    packages.sort_unstable();
    packages.dedup();
    let packages = compile::with_doc_tests(&built.sim, &packages)?;
    if packages.is_empty() {
        return Ok(DocTests::default());
    }
    let seed = plan.seeds.get(0);
    let log = work_dir.join("doc-tests.out");
    let status = cargo_test_doc(plan, built, &packages, seed, &log)?;
    if status.success() {
        return Ok(DocTests {
            passed: true,
            failures: Vec::new(),
        });
    }
    let selected: Vec<String> = packages.iter().map(|p| format!("-p {p}")).collect();
    Ok(DocTests {
        passed: false,
        failures: vec![format!(
            "FAIL doc tests (seed {seed:#x})\n{}\n    replay: SIM_SEED={seed:#x} cargo sim test --doc {}",
            std::fs::read_to_string(log).unwrap_or_default().trim_end(),
            selected.join(" "),
        )],
    })
}

/// `cargo test --doc` on `packages`, as a simulation build, its output in
/// `log`.
fn cargo_test_doc(
    plan: &Plan,
    built: &Built,
    packages: &[String],
    seed: u64,
    log: &std::path::Path,
) -> Result<std::process::ExitStatus, Halt> {
    let mut held = built.files.acquire()?;
    held.swap_in()?;
    let mut command = built.sim.cargo();
    command.args(["test", "--doc", "--quiet"]).args(&plan.kept);
    for package in packages {
        command.args(["-p", package]);
    }
    command.arg("--").args(&plan.test_args);
    command.env(sim_runtime::settings::SEED.name, format!("{seed:#x}"));
    let file = std::fs::File::create(log).map_err(|e| e.to_string())?;
    command
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run cargo test --doc: {e}"))?;
    let status = crate::signals::wait(&mut child);
    held.swap_out()?;
    status.map_err(|crate::signals::Interrupted(signal)| Halt::Signal(signal))
}
