//! `cargo sim test --shrink DIR`: a failing seed made small.
//!
//! 1. The schedule: the seed runs with every task pick FIFO (a decision
//!    file whose `schedule` stream is `rest=min`; everything else from the
//!    seed). If the same failure (class, and checker or panic site) still
//!    happens, every later run keeps that schedule.
//! 2. The faults: the seed runs once more listing the harness's fault
//!    units (each `Sim::at` fault, each action of the nemesis; see
//!    `sim_harness::shrink`); then each unit is left out in turn, latest
//!    first, and stays out while the same failure still happens; then
//!    links are made fast (0 ms) if the failure survives that too.
//! 3. If the failure needed its schedule, the small run is recorded
//!    (`SIM_RECORD`) and a bisection finds the shortest prefix of its picks
//!    after which every pick can be FIFO; then each pick of that prefix,
//!    latest first, becomes FIFO where the failure stays. What is left are
//!    the picks the failure needs.
//! 4. Each remaining fault unit, latest first, moves as late as the failure
//!    allows (`SIM_SHRINK_LATER`, a bisection up to the end of the run):
//!    what is left shows how close to the failure each fault can come.
//!
//! What remains is printed as `Sim::at` lines to paste into a scenario
//! test, and written with the settings to `DIR/<test>-<seed>.shrink`; the
//! decision file that replays the small run alone is
//! `DIR/<test>-<seed>.decisions` (`SIM_REPLAY=<it>`).

use crate::compile::TestBinary;
use crate::runner::{self, SweepConfig, TestCase};
use sim_runtime::decision::{Log, Rest, Stream, Value, Values, RECORD_VAR, REPLAY_VAR, SCHEDULE};
use sim_runtime::sweep::{
    FailureClass, SHRINK_FAST_LINKS_VAR, SHRINK_LATER_VAR, SHRINK_OUT_VAR, SHRINK_SKIP_VAR,
};
use std::path::Path;

/// The most units tried: a run with more faults than this shrinks its
/// first ones only (each try is one run of the seed).
const UNITS_MAX: usize = 200;
/// The most passes over the remaining faults.
const PASSES_MAX: usize = 4;
/// The most runs spent bisecting the schedule (2^24 picks need 24).
const SCHEDULE_TRIES_MAX: usize = 24;
/// The most kept picks tried one by one as FIFO picks.
const PICKS_TRIED_MAX: usize = 64;
/// The most fault units moved later, and the bisection steps for each.
const LATER_UNITS_MAX: usize = 8;
const LATER_STEPS_MAX: usize = 6;

/// What must stay the same for a smaller run to count: the class, and the
/// checker's or liveness property's name, or the panic's site.
fn key(failure: &(FailureClass, String)) -> (FailureClass, String) {
    let (class, message) = failure;
    let detail = if let Some(rest) = message
        .split("checker `")
        .nth(1)
        .or_else(|| message.split("liveness: `").nth(1))
    {
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

/// The most draws of one stream tried one by one.
const DRAWS_TRIED_MAX: usize = 32;

/// The mildest value of a link or disk draw stream: the least latency,
/// and no loss, duplicate, reordering or disk error (a chance draw at its
/// largest is over every rate). `None`: not a draw the shrinker moves.
fn mild_value(stream: &str) -> Option<Value> {
    if stream.ends_with(" latency") && (stream.starts_with("net") || stream.starts_with("disk")) {
        Some(Value::Min)
    } else if stream == "net chance"
        || stream == "net segment"
        || (stream.starts_with("disk ") && stream.ends_with(" chance"))
    {
        Some(Value::Num(u64::MAX))
    } else {
        None
    }
}

/// The draws of one stream a failure needs: the stream, each kept draw's
/// index and value, and how many the stream drew.
type KeptDraws = (String, Vec<(usize, Value)>, usize);

/// What each link draw of the last run was for, by (stream, index), from
/// the file `SIM_SHRINK_DRAWS_OUT` wrote.
fn draws_said(path: &Path) -> std::collections::BTreeMap<(String, usize), String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let stream = fields.next()?.to_string();
            let index = fields.next()?.parse().ok()?;
            Some(((stream, index), fields.next()?.to_string()))
        })
        .collect()
}

/// The draws of `stream` a failure needs, in words: what each was for
/// (`datagram #17 client0:49152>server:9`) and what it drew.
fn describe_draws(
    stream: &str,
    left: &[(usize, Value)],
    total: usize,
    what: &std::collections::BTreeMap<(String, usize), String>,
) -> String {
    let shown: Vec<String> = left
        .iter()
        .take(4)
        .map(|(i, v)| {
            let drawn = match (stream.ends_with(" latency"), v) {
                (true, Value::Num(ns)) => {
                    format!("{:.3} ms late (over the link's least)", *ns as f64 / 1e6)
                }
                (false, Value::Num(n)) => {
                    format!("chance {:.4}", *n as f64 / (1u64 << 53) as f64)
                }
                (_, Value::Min) => "the least".to_string(),
            };
            match what.get(&(stream.to_string(), *i)) {
                Some(what) => format!("{what} {drawn}"),
                None => format!("#{i}: {drawn}"),
            }
        })
        .collect();
    let more = match left.len().saturating_sub(4) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "{stream} {} of {total} ({}{more})",
        left.len(),
        shown.join(", ")
    )
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

/// The settings of a try: units left out (`from`: every unit from this one
/// on, those the first run never began), fast links, units moved later.
fn settings(
    skip: &[u64],
    from: Option<u64>,
    fast: bool,
    later: &[(u64, u64)],
) -> Vec<(String, String)> {
    let mut env = Vec::new();
    let mut list: Vec<String> = skip.iter().map(u64::to_string).collect();
    if let Some(from) = from {
        list.push(format!("{from}-"));
    }
    if !list.is_empty() {
        env.push((SHRINK_SKIP_VAR.to_string(), list.join(",")));
    }
    if fast {
        env.push((SHRINK_FAST_LINKS_VAR.to_string(), "1".to_string()));
    }
    if !later.is_empty() {
        let list: Vec<String> = later.iter().map(|(u, ns)| format!("{u}:{ns}")).collect();
        env.push((SHRINK_LATER_VAR.to_string(), list.join(",")));
    }
    env
}

/// A decision file for `seed` whose schedule keeps the first `k` of
/// `picks` and is FIFO after them (everything else as `log` has it).
fn schedule_prefix(log: &Log, k: u64) -> Log {
    let mut log = log.clone();
    let stream = log
        .streams
        .entry(SCHEDULE.to_string())
        .or_insert_with(|| Stream {
            rest: Rest::Min,
            values: Default::default(),
            cut: false,
        });
    stream.values = stream.values.prefix(k);
    stream.rest = Rest::Min;
    stream.cut = false;
    log
}

fn write_log(path: &Path, log: &Log) -> Result<(), String> {
    std::fs::write(path, log.to_text()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `seed` of `case` with `env`, recording its decisions, and reads
/// them back (`None`: the run recorded none).
fn record(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    what: &str,
    mut env: Vec<(String, String)>,
) -> Result<Option<Log>, String> {
    let base = config.work_dir.join(format!("shrink-{seed:016x}.{what}"));
    env.push((RECORD_VAR.to_string(), base.display().to_string()));
    runner::run_one(config, binaries, case, seed, &env)?;
    let thread = (!case.whole_binary).then_some(case.name.as_str());
    let path = sim_runtime::trace::trace_path(&base.display().to_string(), thread, 1);
    Ok(std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| Log::parse(&text).ok()))
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
    let listed = |env: Vec<(String, String)>| -> Result<(runner::OneRun, Vec<FaultLine>), String> {
        let _ = std::fs::remove_file(&list);
        let mut env = env;
        env.push((SHRINK_OUT_VAR.to_string(), list.display().to_string()));
        let run = runner::run_one(config, binaries, case, seed, &env)?;
        let text = std::fs::read_to_string(&list).unwrap_or_default();
        Ok((run, unit_lines(&text)))
    };
    let (first, lines) = listed(Vec::new())?;
    let Some(failure) = first.failure.as_ref() else {
        return Err("the seed passed when run again".to_string());
    };
    let wanted = key(failure);
    // Units the first run never began stay out of every try: leaving a
    // fault out, or moving one later, can move the failure later, and no
    // new fault may come in then.
    let skip_from = lines.iter().map(|(u, _, _)| u + 1).max();
    // Every run of the shrink: the units left out, fast links, and the
    // decision file that drives the schedule, if any.
    let env_of = |skip: &[u64], fast: bool, later: &[(u64, u64)], decisions: Option<&Path>| {
        let mut env = settings(skip, skip_from, fast, later);
        if let Some(file) = decisions {
            env.push((REPLAY_VAR.to_string(), file.display().to_string()));
        }
        env
    };
    let same = |env: Vec<(String, String)>| -> Result<bool, String> {
        let run = runner::run_one(config, binaries, case, seed, &env)?;
        Ok(run.failure.as_ref().map(key) == Some(wanted.clone()))
    };
    let mut tries = 0;
    // An all-FIFO schedule first: when the failure needs no particular
    // interleaving, every later run keeps it (the rest from the seed).
    let fifo_file = config.work_dir.join(format!("shrink-{seed:016x}.fifo"));
    let fifo_log = schedule_prefix(
        &Log {
            seed,
            ..Log::default()
        },
        0,
    );
    write_log(&fifo_file, &fifo_log)?;
    tries += 1;
    let fifo = same(env_of(&[], false, &[], Some(&fifo_file)))?;
    let schedule_file = fifo.then_some(fifo_file.as_path());

    let mut units: Vec<u64> = lines.iter().map(|(u, _, _)| *u).collect();
    units.sort_unstable();
    units.dedup();
    let mut skip: Vec<u64> = Vec::new();
    let mut fast = false;
    let mut candidates = units.clone();
    // Passes until nothing more can go: leaving faults out can move the
    // failure later, where faults the first run never reached begin.
    for pass in 0..PASSES_MAX {
        if units.is_empty() {
            break;
        }
        let mut changed = false;
        for &unit in candidates.iter().rev().take(UNITS_MAX) {
            if crate::signals::received().is_some() || skip.contains(&unit) {
                continue;
            }
            let mut trial = skip.clone();
            trial.push(unit);
            trial.sort_unstable();
            tries += 1;
            if same(env_of(&trial, fast, &[], schedule_file))? {
                skip = trial;
                changed = true;
            }
        }
        if pass == 0 {
            tries += 1;
            fast = same(env_of(&skip, true, &[], schedule_file))?;
            changed |= fast;
        }
        if !changed {
            break;
        }
        let (_, now) = listed(env_of(&skip, fast, &[], schedule_file))?;
        candidates = now.iter().map(|(u, _, _)| *u).collect();
        candidates.sort_unstable();
        candidates.dedup();
    }

    // The decision file of the small run: the FIFO one, or the run
    // recorded and its schedule bisected toward FIFO.
    let mut schedule_note = String::new();
    let small: Option<Log> = if fifo {
        schedule_note = ", every pick FIFO".to_string();
        Some(fifo_log)
    } else {
        let recorded = record(
            config,
            binaries,
            case,
            seed,
            "record",
            env_of(&skip, fast, &[], None),
        )?;
        match recorded {
            None => None,
            Some(log) => {
                let picks = log.streams.get(SCHEDULE).map_or(0, |s| s.values.len());
                let trial_file = config
                    .work_dir
                    .join(format!("shrink-{seed:016x}.decisions"));
                let mut try_prefix = |k: u64| -> Result<bool, String> {
                    write_log(&trial_file, &schedule_prefix(&log, k))?;
                    tries += 1;
                    same(env_of(&skip, fast, &[], Some(&trial_file)))
                };
                // Bisect the shortest kept prefix: `hi` reproduces (the
                // whole record replays the run), `lo` does not (0, the
                // FIFO schedule, did not).
                let (mut lo, mut hi) = (0, picks);
                let mut spent = 0;
                while hi - lo > 1
                    && spent < SCHEDULE_TRIES_MAX
                    && crate::signals::received().is_none()
                {
                    let mid = lo + (hi - lo) / 2;
                    spent += 1;
                    if try_prefix(mid)? {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                // Then each kept pick, latest first, becomes a FIFO pick
                // where the failure stays.
                let mut small = schedule_prefix(&log, hi);
                let mut kept = small.streams[SCHEDULE].values.to_vec();
                let mut tried = 0;
                for i in (0..kept.len()).rev() {
                    if tried >= PICKS_TRIED_MAX || crate::signals::received().is_some() {
                        break;
                    }
                    if kept[i] == Value::Min {
                        continue;
                    }
                    tried += 1;
                    let mut trial = kept.clone();
                    trial[i] = Value::Min;
                    let mut log = small.clone();
                    log.streams
                        .get_mut(SCHEDULE)
                        .expect("made by schedule_prefix")
                        .values = Values::from_slice(&trial);
                    write_log(&trial_file, &log)?;
                    tries += 1;
                    if same(env_of(&skip, fast, &[], Some(&trial_file)))? {
                        kept = trial;
                        small = log;
                    }
                }
                let chosen = kept.iter().filter(|v| **v != Value::Min).count();
                schedule_note =
                    format!(", schedule {picks} picks -> {chosen} not FIFO (of the first {hi})");
                Some(small)
            }
        }
    };
    let replay_file = match small {
        Some(mut log) => {
            // The file replays alone: the settings ride along.
            log.settings
                .retain(|(k, _)| k != SHRINK_SKIP_VAR && k != SHRINK_FAST_LINKS_VAR);
            log.settings.extend(settings(&skip, skip_from, fast, &[]));
            let clean = sim_runtime::trace::file_name_part(&case.name);
            let file = dir.join(format!("{clean}-{seed:#x}.decisions"));
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            write_log(&file, &log)?;
            Some(file)
        }
        None => None,
    };
    // Each remaining unit as late as the failure allows: a bisection of
    // its delay up to the end of the run, latest unit first.
    let mut later: Vec<(u64, u64)> = Vec::new();
    let mut moved = Vec::new();
    {
        let (run, lines) = listed(env_of(&skip, fast, &later, replay_file.as_deref()))?;
        let mut end_ns = run.end_ns;
        let mut starts: Vec<(u64, u64)> = Vec::new();
        for (unit, ns, _) in &lines {
            match starts.iter_mut().find(|(u, _)| u == unit) {
                Some((_, start)) => *start = (*start).min(*ns),
                None => starts.push((*unit, *ns)),
            }
        }
        starts.sort_by_key(|&(u, ns)| std::cmp::Reverse((ns, u)));
        for &(unit, start) in starts.iter().take(LATER_UNITS_MAX) {
            if crate::signals::received().is_some() {
                break;
            }
            let (mut lo, mut hi) = (0, end_ns.saturating_sub(start));
            for _ in 0..LATER_STEPS_MAX {
                let mid = lo + (hi - lo).div_ceil(2);
                if mid == lo {
                    break;
                }
                let mut trial = later.clone();
                trial.push((unit, mid));
                tries += 1;
                let run = runner::run_one(
                    config,
                    binaries,
                    case,
                    seed,
                    &env_of(&skip, fast, &trial, replay_file.as_deref()),
                )?;
                if run.failure.as_ref().map(key) == Some(wanted.clone()) {
                    lo = mid;
                    end_ns = end_ns.max(run.end_ns);
                } else {
                    hi = mid - 1;
                }
            }
            if lo > 0 {
                later.push((unit, lo));
                moved.push(format!("unit {unit} +{:.3}s", lo as f64 / 1e9));
            }
        }
    }
    if let (Some(file), false) = (&replay_file, later.is_empty()) {
        let mut log = Log::parse(&std::fs::read_to_string(file).map_err(|e| e.to_string())?)?;
        log.settings.retain(|(k, _)| k != SHRINK_LATER_VAR);
        log.settings.extend(settings(&[], None, false, &later));
        write_log(file, &log)?;
    }
    if !moved.is_empty() {
        schedule_note.push_str(&format!(", moved later: {}", moved.join(", ")));
    }
    // Each link and disk draw toward its mildest value, keeping the draws
    // the failure needs.
    let mut draws_kept: Option<Vec<KeptDraws>> = None;
    if let Some(file) = &replay_file {
        let recorded = record(
            config,
            binaries,
            case,
            seed,
            "draws",
            env_of(&skip, fast, &later, Some(file)),
        )?;
        if let Some(recorded) = recorded {
            let mut log = Log::parse(&std::fs::read_to_string(file).map_err(|e| e.to_string())?)?;
            let mut try_log = |log: &Log| -> Result<bool, String> {
                write_log(file, log)?;
                tries += 1;
                same(env_of(&skip, fast, &later, Some(file)))
            };
            let mut kept_draws = Vec::new();
            for (name, stream) in &recorded.streams {
                let Some(mild) = mild_value(name) else {
                    continue;
                };
                if crate::signals::received().is_some() {
                    break;
                }
                let original = stream.values.to_vec();
                // Past the recorded draws (a run that moves its failure
                // later draws more), the stream stays at its mildest too.
                let rest = if mild == Value::Min {
                    Rest::Min
                } else {
                    Rest::Max
                };
                let with = |values: &[Value]| {
                    let mut log = log.clone();
                    log.streams.insert(
                        name.clone(),
                        Stream {
                            rest,
                            values: Values::from_slice(values),
                            cut: false,
                        },
                    );
                    log
                };
                let all_mild = vec![mild; original.len()];
                let mut kept = original.clone();
                if original.iter().all(|v| *v == mild) || try_log(&with(&all_mild))? {
                    kept = all_mild;
                } else {
                    // One draw at a time, the latest first, bounded.
                    let mut tried = 0;
                    for i in (0..kept.len()).rev() {
                        if tried >= DRAWS_TRIED_MAX || crate::signals::received().is_some() {
                            break;
                        }
                        if kept[i] == mild {
                            continue;
                        }
                        tried += 1;
                        let mut trial = kept.clone();
                        trial[i] = mild;
                        if try_log(&with(&trial))? {
                            kept = trial;
                        }
                    }
                }
                let left: Vec<(usize, Value)> = kept
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v != mild)
                    .map(|(i, v)| (i, *v))
                    .collect();
                if !left.is_empty() {
                    kept_draws.push((name.clone(), left, kept.len()));
                }
                log = with(&kept);
            }
            write_log(file, &log)?;
            draws_kept = Some(kept_draws);
        }
    }
    // The last run says what each draw was for.
    let draws_file = config.work_dir.join(format!("shrink-{seed:016x}.what"));
    let _ = std::fs::remove_file(&draws_file);
    let mut last_env = env_of(&skip, fast, &later, replay_file.as_deref());
    last_env.push((
        sim_runtime::sweep::SHRINK_DRAWS_OUT_VAR.to_string(),
        draws_file.display().to_string(),
    ));
    let (last, remaining) = listed(last_env)?;
    if let Some(kept_draws) = draws_kept {
        let what = draws_said(&draws_file);
        schedule_note.push_str(&if kept_draws.is_empty() {
            ", every link and disk draw at its mildest".to_string()
        } else {
            let said: Vec<String> = kept_draws
                .iter()
                .map(|(name, left, total)| describe_draws(name, left, *total, &what))
                .collect();
            format!(", draws kept: {}", said.join("; "))
        });
    }
    if last.failure.as_ref().map(key) != Some(wanted.clone()) {
        return Err(format!(
            "the shrunk run of seed {seed:#x} no longer fails as the first did ({} {})",
            wanted.0.as_str(),
            wanted.1
        ));
    }
    let kept: Vec<u64> = {
        let mut k: Vec<u64> = remaining.iter().map(|(u, _, _)| *u).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let env = settings(&skip, skip_from, fast, &later);
    // The decision file carries the settings and the seed.
    let replay_env: String = match &replay_file {
        Some(file) => format!("{REPLAY_VAR}={}", file.display()),
        None => {
            let mut line: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
            line.push_str(&format!("SIM_SEED={seed:#x}"));
            line
        }
    };
    let mut report = format!(
        "shrunk {} seed {seed:#x}: {} faults ({} units) -> {} faults ({} units, {} left out), \
         {} -> {} events{}{schedule_note} ({tries} runs)\n  \
         replay: {replay_env} {} -- {} --exact\n  the faults that remain, as a scenario:\n",
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
    if let Some(decisions) = &replay_file {
        report.push_str(&format!(
            "\n  the decisions that replay it: {}",
            decisions.display()
        ));
    }
    Ok(report)
}
