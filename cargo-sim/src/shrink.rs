//! `cargo sim test --shrink DIR`: a failing harness seed made small. The
//! seed runs once more listing the harness's fault units (each `Sim::at`
//! fault, each action of the nemesis; see `sim_harness::shrink`); then each
//! unit is left out in turn, latest first, and stays out while the same
//! failure (class, and checker or panic site) still happens; then links are
//! made fast (0 ms) if the failure survives that too. What remains is
//! printed as `Sim::at` lines to paste into a scenario test, and written
//! with the settings that replay it to `DIR/<test>-<seed>.shrink`.

use crate::compile::TestBinary;
use crate::runner::{self, SweepConfig, TestCase};
use sim_runtime::sweep::{FailureClass, SHRINK_FAST_LINKS_VAR, SHRINK_OUT_VAR, SHRINK_SKIP_VAR};
use std::path::Path;

/// The most units tried: a run with more faults than this shrinks its
/// first ones only (each try is one run of the seed).
const UNITS_MAX: usize = 200;
/// The most passes over the remaining faults.
const PASSES_MAX: usize = 4;

/// What must stay the same for a smaller run to count: the class, and the
/// checker's name or the panic's site.
fn key(failure: &(FailureClass, String)) -> (FailureClass, String) {
    let (class, message) = failure;
    let detail = if let Some(rest) = message.split("checker `").nth(1) {
        rest.split('`').next().unwrap_or("").to_string()
    } else if let Some(rest) = message.split(" panicked at ").nth(1) {
        rest.split('\n')
            .next()
            .unwrap_or("")
            .trim_end_matches(':')
            .to_string()
    } else {
        String::new()
    };
    (*class, detail)
}

/// A fault applied: its unit, its virtual time (ns), its `Sim::at` line.
type FaultLine = (u64, u64, String);

fn unit_lines(text: &str) -> Vec<FaultLine> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ' ');
            let unit = parts.next()?.parse().ok()?;
            let ns = parts.next()?.parse().ok()?;
            Some((unit, ns, parts.next()?.to_string()))
        })
        .collect()
}

fn settings(skip: &[u64], fast: bool) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if !skip.is_empty() {
        let list: Vec<String> = skip.iter().map(u64::to_string).collect();
        env.push((SHRINK_SKIP_VAR.to_string(), list.join(",")));
    }
    if fast {
        env.push((SHRINK_FAST_LINKS_VAR.to_string(), "1".to_string()));
    }
    env
}

/// Shrinks `seed` of `case`; returns the report to print.
pub fn shrink(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    dir: &Path,
) -> Result<String, String> {
    let list = config.work_dir.join(format!("shrink-{seed:016x}.faults"));
    let listed = |skip: &[u64], fast: bool| -> Result<(runner::OneRun, Vec<FaultLine>), String> {
        let _ = std::fs::remove_file(&list);
        let mut env = settings(skip, fast);
        env.push((SHRINK_OUT_VAR.to_string(), list.display().to_string()));
        let run = runner::run_one(config, binaries, case, seed, &env)?;
        let text = std::fs::read_to_string(&list).unwrap_or_default();
        Ok((run, unit_lines(&text)))
    };
    let (first, lines) = listed(&[], false)?;
    let Some(failure) = first.failure.as_ref() else {
        return Err("the seed passed when run again".to_string());
    };
    let wanted = key(failure);
    let mut units: Vec<u64> = lines.iter().map(|(u, _, _)| *u).collect();
    units.sort_unstable();
    units.dedup();
    if units.is_empty() {
        return Ok(format!(
            "shrink {} seed {seed:#x}: nothing to shrink (the run injected no harness faults)",
            case.name
        ));
    }
    let same = |skip: &[u64], fast: bool| -> Result<bool, String> {
        let run = runner::run_one(config, binaries, case, seed, &settings(skip, fast))?;
        Ok(run.failure.as_ref().map(key) == Some(wanted.clone()))
    };
    let mut skip: Vec<u64> = Vec::new();
    let mut fast = false;
    let mut tries = 0;
    let mut candidates = units.clone();
    // Passes until nothing more can go: leaving faults out can move the
    // failure later, where faults the first run never reached begin.
    for pass in 0..PASSES_MAX {
        let mut changed = false;
        for &unit in candidates.iter().rev().take(UNITS_MAX) {
            if crate::signals::received().is_some() || skip.contains(&unit) {
                continue;
            }
            let mut trial = skip.clone();
            trial.push(unit);
            trial.sort_unstable();
            tries += 1;
            if same(&trial, fast)? {
                skip = trial;
                changed = true;
            }
        }
        if pass == 0 {
            tries += 1;
            fast = same(&skip, true)?;
            changed |= fast;
        }
        if !changed {
            break;
        }
        let (_, now) = listed(&skip, fast)?;
        candidates = now.iter().map(|(u, _, _)| *u).collect();
        candidates.sort_unstable();
        candidates.dedup();
    }
    let (last, remaining) = listed(&skip, fast)?;
    let kept: Vec<u64> = {
        let mut k: Vec<u64> = remaining.iter().map(|(u, _, _)| *u).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let env = settings(&skip, fast);
    let replay_env: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    let mut report = format!(
        "shrunk {} seed {seed:#x}: {} faults ({} units) -> {} faults ({} units, {} left out), \
         {} -> {} events{} ({tries} runs)\n  \
         replay: {replay_env}SIM_SEED={seed:#x} {} -- {} --exact\n  the faults that remain, as a scenario:\n",
        case.name,
        lines.len(),
        units.len(),
        remaining.len(),
        kept.len(),
        skip.len(),
        first.events,
        last.events,
        if fast { ", links at 0 ms" } else { "" },
        case.replay_prefix,
        case.name
    );
    let mut code = Vec::new();
    for (_, _, line) in &remaining {
        code.push(format!("    {line}"));
    }
    if code.is_empty() {
        code.push("    // none: the failure needs no injected fault".to_string());
    }
    report.push_str(&code.join("\n"));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let clean = sim_runtime::trace::file_name_part(&case.name);
    let file = dir.join(format!("{clean}-{seed:#x}.shrink"));
    let mut text =
        String::from("# cargo sim test --shrink: the settings that replay the small run\n");
    for (k, v) in &env {
        text.push_str(&format!("{k}={v}\n"));
    }
    text.push_str(&format!(
        "SIM_SEED={seed:#x}\n# the faults that remain, as a scenario:\n"
    ));
    for line in &code {
        text.push_str(&format!("#{line}\n"));
    }
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    report.push_str(&format!("\n  written to {}", file.display()));
    Ok(report)
}
