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
//! 5. Each link and disk draw goes to its mildest value where the failure
//!    stays, and each latency that stays is pushed toward the least
//!    (`draws.rs`): a failure caused by one late message ends with that
//!    message, named in words.
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

mod draws;

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
/// checker's, liveness property's or history's name, or the panic's site
/// (a shrunk consistency failure still breaks the same history).
fn key(failure: &(FailureClass, String)) -> (FailureClass, String) {
    let (class, message) = failure;
    let detail = if let Some(rest) = message
        .split("checker `")
        .nth(1)
        .or_else(|| message.split("liveness: `").nth(1))
    {
        rest.split('`').next().unwrap_or("").to_string()
    } else if let Some(rest) = message.split("consistency: history `").nth(1) {
        // The history and the verdict, before the counts: "ops` is not
        // linearizable", "ops` shows anomalies Serializable forbids".
        rest.split('(').next().unwrap_or("").trim_end().to_string()
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

/// The draws of one stream a failure needs: the stream, each kept draw's
/// index and value, and how many the stream drew.
type KeptDraws = (String, Vec<(usize, Value)>, usize);

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
    let base = work_file(config, seed, what);
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
    let mut shrinker = Shrinker::start(config, binaries, case, seed)?;
    let fifo = shrinker.fifo_schedule()?;
    shrinker.faults_pass()?;
    let small = match fifo {
        Some(log) => {
            shrinker.note.push_str(", every pick FIFO");
            Some(log)
        }
        None => shrinker.schedule_pass()?,
    };
    shrinker.replay_file = shrinker.write_replay_file(small, dir)?;
    shrinker.later_pass()?;
    let draws_kept = shrinker.draws_pass()?;
    shrinker.finish(draws_kept, dir)
}

/// One shrink: what stays fixed (the seed, the failure it must keep) and
/// what it has found so far. Each pass is a method: the schedule
/// (`fifo_schedule`, `schedule_pass`), the faults (`faults_pass`,
/// `later_pass`) and the draws (`draws_pass`).
struct Shrinker<'a> {
    config: &'a SweepConfig,
    binaries: &'a [TestBinary],
    case: &'a TestCase,
    seed: u64,
    /// The failure a smaller run must keep.
    wanted: (FailureClass, String),
    /// The first run, and the faults it applied.
    first: runner::OneRun,
    lines: Vec<FaultLine>,
    /// Units the first run never began stay out of every try: leaving a
    /// fault out, or moving one later, can move the failure later, and no
    /// new fault may come in then.
    skip_from: Option<u64>,
    /// The units left out, fast links, and units moved later (unit, ns).
    skip: Vec<u64>,
    fast: bool,
    later: Vec<(u64, u64)>,
    /// The decision file every try replays (FIFO, or the small schedule).
    schedule_file: Option<std::path::PathBuf>,
    /// The small run's own decision file, once written.
    replay_file: Option<std::path::PathBuf>,
    /// Runs so far.
    tries: usize,
    /// What the passes found, for the report's first line.
    note: String,
}

impl<'a> Shrinker<'a> {
    /// Runs the seed once, listing its faults; an error when it passes.
    fn start(
        config: &'a SweepConfig,
        binaries: &'a [TestBinary],
        case: &'a TestCase,
        seed: u64,
    ) -> Result<Shrinker<'a>, String> {
        let (first, lines) = run_listing(config, binaries, case, seed, Vec::new())?;
        let Some(failure) = first.failure.as_ref() else {
            return Err("the seed passed when run again".to_string());
        };
        Ok(Shrinker {
            config,
            binaries,
            case,
            seed,
            wanted: key(failure),
            skip_from: lines.iter().map(|(u, _, _)| u + 1).max(),
            first,
            lines,
            skip: Vec::new(),
            fast: false,
            later: Vec::new(),
            schedule_file: None,
            replay_file: None,
            tries: 0,
            note: String::new(),
        })
    }

    fn work_file(&self, what: &str) -> std::path::PathBuf {
        work_file(self.config, self.seed, what)
    }

    /// Runs the seed with `env`, listing the faults it applied.
    fn listed(
        &self,
        env: Vec<(String, String)>,
    ) -> Result<(runner::OneRun, Vec<FaultLine>), String> {
        run_listing(self.config, self.binaries, self.case, self.seed, env)
    }

    /// The settings of a try with these faults and this decision file.
    fn env_of(
        &self,
        skip: &[u64],
        fast: bool,
        later: &[(u64, u64)],
        decisions: Option<&Path>,
    ) -> Vec<(String, String)> {
        let mut env = settings(skip, self.skip_from, fast, later);
        if let Some(file) = decisions {
            env.push((REPLAY_VAR.to_string(), file.display().to_string()));
        }
        env
    }

    /// Whether a run with `env` fails as the first did.
    fn same(&mut self, env: &[(String, String)]) -> Result<bool, String> {
        Ok(self.try_run(env)?.0)
    }

    /// One try: whether the run with `env` fails as the first did, and
    /// the virtual time it ended at.
    fn try_run(&mut self, env: &[(String, String)]) -> Result<(bool, u64), String> {
        self.tries += 1;
        let run = runner::run_one(self.config, self.binaries, self.case, self.seed, env)?;
        let same = run.failure.as_ref().map(key).as_ref() == Some(&self.wanted);
        Ok((same, run.end_ns))
    }

    /// Whether a try with fewer faults (`skip`, `fast`) on the current
    /// schedule fails as the first did.
    fn same_faults(&mut self, skip: &[u64], fast: bool) -> Result<bool, String> {
        let env = self.env_of(skip, fast, &[], self.schedule_file.as_deref());
        self.same(&env)
    }

    /// An all-FIFO schedule first: when the failure needs no particular
    /// interleaving, every later run keeps it (the rest from the seed).
    fn fifo_schedule(&mut self) -> Result<Option<Log>, String> {
        let fifo_file = self.work_file("fifo");
        let fifo_log = schedule_prefix(
            &Log {
                seed: self.seed,
                ..Log::default()
            },
            0,
        );
        write_log(&fifo_file, &fifo_log)?;
        let env = self.env_of(&[], false, &[], Some(&fifo_file));
        if !self.same(&env)? {
            return Ok(None);
        }
        self.schedule_file = Some(fifo_file);
        Ok(Some(fifo_log))
    }

    /// Each fault unit left out in turn, latest first, staying out while
    /// the failure stays; links made fast (0 ms) if it survives that too;
    /// passes until nothing more can go.
    fn faults_pass(&mut self) -> Result<(), String> {
        let mut candidates = self.units();
        for pass in 0..PASSES_MAX {
            if candidates.is_empty() {
                break;
            }
            let mut changed = false;
            for &unit in candidates.iter().rev().take(UNITS_MAX) {
                if crate::signals::received().is_some() || self.skip.contains(&unit) {
                    continue;
                }
                let mut trial = self.skip.clone();
                trial.push(unit);
                trial.sort_unstable();
                if self.same_faults(&trial, self.fast)? {
                    self.skip = trial;
                    changed = true;
                }
            }
            if pass == 0 {
                let skip = self.skip.clone();
                self.fast = self.same_faults(&skip, true)?;
                changed |= self.fast;
            }
            if !changed {
                break;
            }
            // Leaving faults out can move the failure later, where faults
            // the first run never reached begin.
            let env = self.env_of(&self.skip, self.fast, &[], self.schedule_file.as_deref());
            let (_, now) = self.listed(env)?;
            candidates = sorted_units(&now);
        }
        Ok(())
    }

    /// The first run's units, sorted.
    fn units(&self) -> Vec<u64> {
        sorted_units(&self.lines)
    }

    /// The failure needed its schedule: the small run is recorded, a
    /// bisection finds the shortest prefix of its picks after which every
    /// pick can be FIFO, then each pick of that prefix, latest first,
    /// becomes FIFO where the failure stays.
    fn schedule_pass(&mut self) -> Result<Option<Log>, String> {
        let env = self.env_of(&self.skip, self.fast, &[], None);
        let Some(log) = record(
            self.config,
            self.binaries,
            self.case,
            self.seed,
            "record",
            env,
        )?
        else {
            return Ok(None);
        };
        let picks = log.streams.get(SCHEDULE).map_or(0, |s| s.values.len());
        let trial_file = self.work_file("decisions");
        // `hi` reproduces (the whole record replays the run), `lo` does
        // not (0, the FIFO schedule, did not).
        let (mut lo, mut hi) = (0, picks);
        let mut spent = 0;
        while hi - lo > 1 && spent < SCHEDULE_TRIES_MAX && crate::signals::received().is_none() {
            let mid = lo + (hi - lo) / 2;
            spent += 1;
            if self.same_schedule(&schedule_prefix(&log, mid), &trial_file)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let small = self.fifo_picks(schedule_prefix(&log, hi), &trial_file)?;
        let chosen = small.streams[SCHEDULE]
            .values
            .to_vec()
            .iter()
            .filter(|v| **v != Value::Min)
            .count();
        self.note = format!(", schedule {picks} picks -> {chosen} not FIFO (of the first {hi})");
        Ok(Some(small))
    }

    /// Whether the run on the schedule `log` (written to `file`) fails as
    /// the first did.
    fn same_schedule(&mut self, log: &Log, file: &Path) -> Result<bool, String> {
        write_log(file, log)?;
        let env = self.env_of(&self.skip, self.fast, &[], Some(file));
        self.same(&env)
    }

    /// Each kept pick of `small`, latest first, becomes a FIFO pick where
    /// the failure stays.
    fn fifo_picks(&mut self, mut small: Log, trial_file: &Path) -> Result<Log, String> {
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
            if self.same_schedule(&log, trial_file)? {
                kept = trial;
                small = log;
            }
        }
        Ok(small)
    }

    /// The small run's decision file, which replays it alone (the
    /// settings ride along): `DIR/<test>-<seed>.decisions`.
    fn write_replay_file(
        &self,
        small: Option<Log>,
        dir: &Path,
    ) -> Result<Option<std::path::PathBuf>, String> {
        let Some(mut log) = small else {
            return Ok(None);
        };
        log.settings
            .retain(|(k, _)| k != SHRINK_SKIP_VAR && k != SHRINK_FAST_LINKS_VAR);
        log.settings
            .extend(settings(&self.skip, self.skip_from, self.fast, &[]));
        let clean = sim_runtime::trace::file_name_part(&self.case.name);
        let file = dir.join(format!("{clean}-{:#x}.decisions", self.seed));
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        write_log(&file, &log)?;
        Ok(Some(file))
    }

    /// Each remaining unit as late as the failure allows: a bisection of
    /// its delay up to the end of the run, latest unit first.
    fn later_pass(&mut self) -> Result<(), String> {
        let env = self.env_of(&self.skip, self.fast, &[], self.replay_file.as_deref());
        let (run, lines) = self.listed(env)?;
        let mut end_ns = run.end_ns;
        let mut starts: Vec<(u64, u64)> = Vec::new();
        for (unit, ns, _) in &lines {
            match starts.iter_mut().find(|(u, _)| u == unit) {
                Some((_, start)) => *start = (*start).min(*ns),
                None => starts.push((*unit, *ns)),
            }
        }
        starts.sort_by_key(|&(u, ns)| std::cmp::Reverse((ns, u)));
        let mut moved = Vec::new();
        for &(unit, start) in starts.iter().take(LATER_UNITS_MAX) {
            if crate::signals::received().is_some() {
                break;
            }
            let delay = self.latest_delay(unit, end_ns.saturating_sub(start), &mut end_ns)?;
            if delay > 0 {
                self.later.push((unit, delay));
                moved.push(format!("unit {unit} +{:.3}s", delay as f64 / 1e9));
            }
        }
        if let (Some(file), false) = (&self.replay_file, self.later.is_empty()) {
            let mut log = Log::parse(&std::fs::read_to_string(file).map_err(|e| e.to_string())?)?;
            log.settings.retain(|(k, _)| k != SHRINK_LATER_VAR);
            log.settings.extend(settings(&[], None, false, &self.later));
            write_log(file, &log)?;
        }
        if !moved.is_empty() {
            self.note
                .push_str(&format!(", moved later: {}", moved.join(", ")));
        }
        Ok(())
    }

    /// The most `unit` can move later (up to `room` ns, bisected) while the
    /// failure stays; `end_ns` grows with the runs that end later.
    fn latest_delay(&mut self, unit: u64, room: u64, end_ns: &mut u64) -> Result<u64, String> {
        let (mut lo, mut hi) = (0, room);
        for _ in 0..LATER_STEPS_MAX {
            let mid = lo + (hi - lo).div_ceil(2);
            if mid == lo {
                break;
            }
            let mut trial = self.later.clone();
            trial.push((unit, mid));
            let env = self.env_of(&self.skip, self.fast, &trial, self.replay_file.as_deref());
            let (same, run_end_ns) = self.try_run(&env)?;
            if same {
                lo = mid;
                *end_ns = (*end_ns).max(run_end_ns);
            } else {
                hi = mid - 1;
            }
        }
        Ok(lo)
    }

    /// The last run (which says what each draw was for), the report, and
    /// `DIR/<test>-<seed>.shrink`.
    fn finish(mut self, draws_kept: Option<Vec<KeptDraws>>, dir: &Path) -> Result<String, String> {
        let draws_file = self.work_file("what");
        let _ = std::fs::remove_file(&draws_file);
        let mut last_env = self.env_of(
            &self.skip,
            self.fast,
            &self.later,
            self.replay_file.as_deref(),
        );
        last_env.push((
            sim_runtime::sweep::SHRINK_DRAWS_OUT_VAR.to_string(),
            draws_file.display().to_string(),
        ));
        let (last, remaining) = self.listed(last_env)?;
        let mut draw_lines = Vec::new();
        if let Some(kept_draws) = draws_kept {
            let (per_stream, per_draw) = self.draws_in_words(&kept_draws, &draws_file);
            self.note.push_str(&if kept_draws.is_empty() {
                ", every link and disk draw at its mildest".to_string()
            } else {
                format!(", draws kept: {}", per_stream.join("; "))
            });
            draw_lines = per_draw;
        }
        if last.failure.as_ref().map(key) != Some(self.wanted.clone()) {
            return Err(format!(
                "the shrunk run of seed {:#x} no longer fails as the first did ({} {})",
                self.seed,
                self.wanted.0.as_str(),
                self.wanted.1
            ));
        }
        let code = scenario_lines(&remaining, &draw_lines);
        let env = settings(&self.skip, self.skip_from, self.fast, &self.later);
        let mut report = self.report_head(&last, &remaining, &env);
        report.push_str(&code.join("\n"));
        let file = write_shrink_file(dir, &self.case.name, self.seed, &env, &code)?;
        report.push_str(&format!("\n  written to {}", file.display()));
        if let Some(decisions) = &self.replay_file {
            report.push_str(&format!(
                "\n  the decisions that replay it: {}",
                decisions.display()
            ));
        }
        Ok(report)
    }

    /// The report's first lines: what shrank, and the replay line.
    fn report_head(
        &self,
        last: &runner::OneRun,
        remaining: &[FaultLine],
        env: &[(String, String)],
    ) -> String {
        let seed = self.seed;
        // The decision file carries the settings and the seed.
        let replay_env: String = match &self.replay_file {
            Some(file) => format!("{REPLAY_VAR}={}", file.display()),
            None => {
                let mut line: String = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
                line.push_str(&format!("SIM_SEED={seed:#x}"));
                line
            }
        };
        format!(
            "shrunk {} seed {seed:#x}: {} faults ({} units) -> {} faults ({} units, {} left out), \
             {} -> {} events{}{} ({} runs)\n  \
             replay: {replay_env} {} -- {} --exact\n  the faults that remain, as a scenario:\n",
            self.case.name,
            self.lines.len(),
            self.units().len(),
            remaining.len(),
            sorted_units(remaining).len(),
            self.skip.len(),
            self.first.events,
            last.events,
            if self.fast { ", links at 0 ms" } else { "" },
            self.note,
            self.tries,
            self.case.replay_prefix,
            self.case.name
        )
    }
}

/// A file of the shrink of `seed` in the sweep's work directory.
fn work_file(config: &SweepConfig, seed: u64, what: &str) -> std::path::PathBuf {
    config.work_dir.join(format!("shrink-{seed:016x}.{what}"))
}

/// Runs `seed` of `case` with `env`, listing the faults it applied.
fn run_listing(
    config: &SweepConfig,
    binaries: &[TestBinary],
    case: &TestCase,
    seed: u64,
    mut env: Vec<(String, String)>,
) -> Result<(runner::OneRun, Vec<FaultLine>), String> {
    let list = work_file(config, seed, "faults");
    let _ = std::fs::remove_file(&list);
    env.push((SHRINK_OUT_VAR.to_string(), list.display().to_string()));
    let run = runner::run_one(config, binaries, case, seed, &env)?;
    let text = std::fs::read_to_string(&list).unwrap_or_default();
    Ok((run, unit_lines(&text)))
}

/// The units of `lines`, sorted, each once.
fn sorted_units(lines: &[FaultLine]) -> Vec<u64> {
    let mut units: Vec<u64> = lines.iter().map(|(u, _, _)| *u).collect();
    units.sort_unstable();
    units.dedup();
    units
}

/// The faults that remain as lines to paste into a scenario test, then
/// the link and disk draws the failure needs as comments (a scenario has
/// no `Sim::at` line for a draw: the decision file replays them).
fn scenario_lines(remaining: &[FaultLine], draws: &[String]) -> Vec<String> {
    let mut code: Vec<String> = remaining
        .iter()
        .map(|(_, _, line)| format!("    {line}"))
        .collect();
    let head = match (code.is_empty(), draws.is_empty()) {
        (true, true) => Some("none: the failure needs no injected fault"),
        (true, false) => Some(
            "no Sim::at fault; the failure needs these draws (the decision file replays them):",
        ),
        (false, false) => Some("and these draws (the decision file replays them):"),
        (false, true) => None,
    };
    code.extend(head.map(|head| format!("    // {head}")));
    code.extend(draws.iter().map(|draw| format!("    //   {draw}")));
    code
}

/// `DIR/<test>-<seed>.shrink`: the settings that replay the small run, and
/// its faults as a scenario.
fn write_shrink_file(
    dir: &Path,
    test: &str,
    seed: u64,
    env: &[(String, String)],
    code: &[String],
) -> Result<std::path::PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let clean = sim_runtime::trace::file_name_part(test);
    let file = dir.join(format!("{clean}-{seed:#x}.shrink"));
    let mut text =
        String::from("# cargo sim test --shrink: the settings that replay the small run\n");
    for (k, v) in env {
        text.push_str(&format!("{k}={v}\n"));
    }
    text.push_str(&format!(
        "SIM_SEED={seed:#x}\n# the faults that remain, as a scenario:\n"
    ));
    for line in code {
        text.push_str(&format!("#{line}\n"));
    }
    std::fs::write(&file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}
