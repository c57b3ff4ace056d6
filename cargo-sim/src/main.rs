//! `cargo sim`: runs a cargo command as a simulation build, and runs tests
//! over many seeds.
//!
//! - `cargo sim test`: builds the tests as a simulation build, then runs
//!   every selected test once per seed (`--seeds`) over `--jobs` processes,
//!   and reports each failing seed with its class and replay command
//!   (`runner.rs`, `report.rs`). Failing seeds are kept in the package's
//!   `sim-regressions/` and run first next time (`regressions.rs`).
//! - `cargo sim diff A B`: the first event where two traces differ.
//! - `cargo sim merge SHARD...`: one report from a sweep's shards
//!   (`merge.rs`).
//! - `cargo sim timeline TRACE`: a trace as an HTML timeline.
//! - `cargo sim <any other cargo command>`: that command, as a simulation
//!   build (`cargo sim run`, `cargo sim clippy`, `cargo sim nextest run`).
//!
//! The command line, help and options are `args.rs`.
//!
//! A simulation build swaps the `tokio` facade in for tokio across the
//! whole dependency graph (`[patch.crates-io]`), adds `--cfg simulation`
//! for rustc and rustdoc, and builds into a target directory of its own
//! (`config.rs`). The patch needs a lock that names the facade; the user's
//! `Cargo.lock` is journaled before it is swapped and put back after the
//! build, on any signal, and by the next run after a `kill -9` (`lock.rs`,
//! `signals.rs`).

mod args;
mod compile;
mod config;
mod diff;
mod identity;
mod lock;
mod merge;
mod outcomes;
mod process;
mod regressions;
mod report;
mod runner;
mod seeds;
mod shrink;
mod signals;
mod timeline;

use args::{build_args, split_test_args, Cli, TestOptions};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // As `cargo sim ...`, cargo passes "sim" first; as `cargo run -p
    // cargo-sim -- ...` (the workspace alias), it does not.
    if args.first().is_some_and(|a| a == "sim") {
        args.remove(0);
    }
    let mut argv = vec!["cargo sim".to_string()];
    // Top-level --help/--version only when they come first: `cargo sim
    // build --help` is cargo's help.
    let top = args.first().cloned();
    if matches!(
        top.as_deref(),
        None | Some("--help" | "-h" | "--version" | "-V" | "help")
    ) {
        if top.as_deref() == Some("help") {
            args[0] = "--help".to_string();
        }
        argv.extend(args.iter().cloned());
        if top.is_none() {
            argv.push("--help".to_string());
        }
        return match Cli::try_parse_from(argv) {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                let _ = e.print();
                ExitCode::from(if e.use_stderr() { 2 } else { 0 })
            }
        };
    }
    signals::install();
    let result = match args[0].as_str() {
        "test" => test_command(&args[1..]),
        "diff" => diff_command(&args[1..]),
        "merge" => merge::command(&args[1..]),
        "timeline" => timeline::command(&args[1..]),
        _ => passthrough(&args),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("cargo sim: {message}");
            ExitCode::from(2)
        }
    }
}

/// The most seeds of a test that carries state run again, one process each.
const FRESH_PROCESS_SEEDS_MAX: usize = 10_000;

/// For a test that ran its seeds in one process: its first failing seed,
/// when that seed passes run alone in a fresh process (state carried
/// between seeds made it fail).
fn confirm_alone(
    config: &runner::SweepConfig,
    binaries: &[compile::TestBinary],
    result: &runner::TestResult,
) -> Option<u64> {
    if result.mode != runner::Mode::InProcess || result.case.seeds.len() < 2 {
        return None;
    }
    let (index, outcome) = result.failures().into_iter().next()?;
    if let runner::Outcome::Fail {
        class: sim_runtime::sweep::FailureClass::Nondeterminism,
        ..
    } = outcome
    {
        // `--check-determinism` already compared it with a fresh process:
        // state carried between seeds is what it reports.
        return None;
    }
    if index == 0 {
        // The process's first seed: nothing ran before it.
        return None;
    }
    let seed = result.case.seeds.get(index);
    match runner::run_one(config, binaries, &result.case, seed, &[]) {
        Ok(run) if run.failure.is_none() => Some(seed),
        _ => None,
    }
}

fn diff_command(args: &[String]) -> Result<ExitCode, String> {
    match args {
        [a, b] => diff::command(a.as_ref(), b.as_ref()),
        _ => Err("usage: cargo sim diff <trace A> <trace B>".to_string()),
    }
}

fn exit_for_signal(signal: i32) -> ExitCode {
    ExitCode::from((128 + signal).clamp(0, 255) as u8)
}

/// Any cargo command other than `test`, as a simulation build.
fn passthrough(args: &[String]) -> Result<ExitCode, String> {
    let sim = config::SimBuild::prepare()?;
    let files = lock::LockFiles::new(&sim.root, &sim.target);
    let mut held = files.acquire()?;
    held.swap_in()?;
    sim.point_lock_at_facade()?;
    let mut command = sim.cargo();
    if args[0] == "nextest" && args.len() > 1 {
        // cargo does not pass `--config` on to a third-party subcommand;
        // nextest takes it itself, after its own subcommand.
        command = sim.cargo_without_config();
        command.args(&args[..2]).arg("--config").arg(&sim.config);
        command.args(&args[2..]);
    } else {
        command.args(args);
    }
    let words: Vec<String> = args.iter().map(|a| shell_word(a)).collect();
    command.env("SIM_CARGO_ARGS", words.join(" "));
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let status = signals::wait(&mut child);
    held.swap_out()?;
    match status {
        Ok(status) => Ok(match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(code.clamp(1, 255) as u8),
            None => ExitCode::FAILURE,
        }),
        Err(signals::Interrupted(signal)) => Ok(exit_for_signal(signal)),
    }
}

fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The command that replays one of `binary`'s tests (up to `--`), and the
/// same after the `SIM_*` settings that change a run: the prefix a test
/// process's own seed line starts with.
fn replay_command(binary: &compile::TestBinary, kept: &[String]) -> (String, String) {
    let mut words: Vec<String> = ["cargo", "sim", "test", "-p"].map(String::from).to_vec();
    words.push(binary.package.clone());
    words.extend(kept.iter().cloned());
    words.extend(binary.target_args());
    let join = |words: &[String]| {
        words
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let command = join(&words);
    let mut prefixed = identity::sim_settings();
    prefixed.extend(words);
    (command, join(&prefixed))
}

/// `3 tests`, `1 test`, `2 binaries`, `2 tests ran`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    let (word, rest) = noun.split_once(' ').unwrap_or((noun, ""));
    let word = match word.strip_suffix('y') {
        Some(stem) => format!("{stem}ies"),
        None => format!("{word}s"),
    };
    if rest.is_empty() {
        format!("{n} {word}")
    } else {
        format!("{n} {word} {rest}")
    }
}

fn test_command(args: &[String]) -> Result<ExitCode, String> {
    let (ours, cargo_args, test_args) = split_test_args(args);
    if cargo_args.iter().any(|a| a == "--no-run" || a == "--doc") {
        // Build only, or doc tests only (cargo runs those, with SIM_SEED):
        // nothing to sweep.
        let mut argv = vec!["test".to_string()];
        argv.extend(args.iter().cloned());
        return passthrough(&argv);
    }
    let mut argv = vec!["cargo sim test".to_string()];
    argv.extend(ours);
    let options = match TestOptions::try_parse_from(argv) {
        Ok(options) => options,
        Err(e) => {
            let _ = e.print();
            return Ok(ExitCode::from(if e.use_stderr() { 2 } else { 0 }));
        }
    };
    if options.swarm {
        // Before anything reads the settings: the test processes inherit
        // it, and the identity and every replay line carry it.
        std::env::set_var("SIM_SWARM", "1");
    }
    let started = std::time::Instant::now();
    let replay_file = std::env::var_os(sim_runtime::decision::REPLAY_VAR).filter(|f| !f.is_empty());
    let one_seed = options
        .seed
        .as_deref()
        .map(sim_runtime::config::parse_seed)
        .transpose()
        .map_err(|e| format!("--seed: {e}"))?;
    // `--seeds ..`: a soak run with no end but Ctrl-C.
    let endless = options.seeds.as_deref().map(str::trim) == Some("..");
    let soak = match options.soak.as_deref() {
        Some(text) => Some(seeds::parse_duration(text)?),
        None if endless => Some(std::time::Duration::from_secs(100 * 365 * 86_400)),
        None => None,
    };
    let mut seed_list = match (
        &options.seeds.as_ref().filter(|_| !endless),
        std::env::var("SIM_SEED"),
    ) {
        _ if one_seed.is_some() => seeds::SeedSpec::one(one_seed.expect("checked")),
        // Fresh seeds from a random base: each soak run tries new ones.
        _ if soak.is_some() => seeds::soak_seeds(sim_runtime::rng::os_random_u64() >> 2),
        (Some(spec), _) => seeds::parse_seeds(spec)?,
        // A decision file's replay runs the seed it was recorded with.
        (None, _) if replay_file.is_some() => {
            seeds::SeedSpec::one(sim_runtime::decision::file_seed(std::path::Path::new(
                replay_file.as_ref().expect("checked"),
            ))?)
        }
        (None, Ok(seed)) => seeds::SeedSpec::one(sim_runtime::config::parse_seed(&seed)?),
        (None, Err(_)) => seeds::SeedSpec::one(sim_runtime::rng::os_random_u64()),
    };
    // A sweep of many seeds, with no policy asked for, spreads them over
    // the portfolio's policies (sim_runtime::sweep::portfolio); the test
    // processes inherit the setting, and PCT seeds' replay lines name it.
    if seed_list.len() > 1
        && replay_file.is_none()
        && std::env::var_os(sim_runtime::config::POLICY_VAR).is_none()
    {
        std::env::set_var(sim_runtime::sweep::portfolio::PORTFOLIO_VAR, "1");
    }
    let partition = options
        .partition
        .as_deref()
        .map(seeds::Partition::parse)
        .transpose()?;
    if let Some(partition) = partition {
        seed_list = partition.select(&seed_list);
        if seed_list.is_empty() {
            return Err(format!(
                "--partition {}/{} holds no seed of the {} asked for",
                partition.index,
                partition.count,
                options.seeds.as_deref().unwrap_or("1")
            ));
        }
    }
    let jobs = options.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if jobs == 0 {
        return Err("--jobs 0 runs nothing: give at least 1".to_string());
    }
    let selection = compile::selection_args(&test_args)?;
    let (kept, targets_chosen) = build_args(&cargo_args);

    let sim = config::SimBuild::prepare()?;
    let identity = identity::Identity::read(&sim.root, &sim.facade);
    eprintln!("sim: identity: {}", identity.line());
    let files = lock::LockFiles::new(&sim.root, &sim.target);
    let (binaries, broken) = {
        let mut held = files.acquire()?;
        held.swap_in()?;
        let built = sim
            .point_lock_at_facade()
            .and_then(|()| compile::build_tests(&sim, &cargo_args));
        // A build that failed, with no target chosen: build again going on
        // past the targets that do not compile, so the others still run.
        let built = match built {
            Err(_) if !targets_chosen && signals::received().is_none() => {
                match compile::build_tests_keep_going(&sim, &cargo_args) {
                    Ok((binaries, broken)) if !broken.is_empty() => Ok((binaries, broken)),
                    Ok(_) => {
                        Err("the simulation build failed (see cargo's errors above)".to_string())
                    }
                    Err(e) => Err(e),
                }
            }
            other => other.map(|binaries| (binaries, Vec::new())),
        };
        // The lock is back before any test runs.
        held.swap_out()?;
        if let Some(signal) = signals::received() {
            return Ok(exit_for_signal(signal));
        }
        built?
    };
    for target in &broken {
        eprintln!(
            "sim: {} {} does not compile; the other targets run (its first error is in the report)",
            target.package, target.target
        );
    }

    // The tests, each with its seeds: saved regressions first.
    let spec = std::sync::Arc::new(seed_list.clone());
    let mut cases = Vec::new();
    for (index, binary) in binaries.iter().enumerate() {
        // Not libtest's harness (`harness = false`): the binary is one
        // test, run whole with SIM_SEED.
        let whole_binary = compile::without_harness(binary);
        let listed = if whole_binary {
            vec![format!("({}, harness = false)", binary.file_stem())]
        } else {
            compile::list_tests(binary, &selection)?
        };
        for name in listed {
            let mut saved: Vec<u64> = Vec::new();
            // A replay (`SIM_SEED=... cargo sim test`) runs its one seed,
            // exactly; a sweep or a plain run starts with the saved ones.
            let replay = options.seed.is_some()
                || (options.seeds.is_none()
                    && (std::env::var_os("SIM_SEED").is_some() || replay_file.is_some()));
            if !replay && partition.is_none_or(|p| p.index == 1) {
                saved.extend(regressions::load(binary, &name));
            }
            // Never held whole: a sweep of any size plans at once.
            let seeds = seeds::SeedList::new(saved, spec.clone());
            if let Some(signal) = signals::received() {
                return Ok(exit_for_signal(signal));
            }
            let (replay_command, replay_prefix) = replay_command(binary, &kept);
            cases.push(runner::TestCase {
                binary: index,
                name,
                seeds,
                replay_prefix,
                replay_command,
                whole_binary,
                fresh_process_per_seed: false,
            });
        }
    }
    let built_in = started.elapsed();
    let swept_from = std::time::Instant::now();
    let work_dir = sim.target.join(format!("sweep-{}", std::process::id()));
    std::fs::create_dir_all(&work_dir)
        .map_err(|e| format!("cannot create {}: {e}", work_dir.display()))?;
    let single = cases.len() == 1 && seed_list.len() == 1;
    let seeds_said = match (soak, &options.soak) {
        (Some(_), Some(text)) => format!("fresh seeds for {text}"),
        (Some(_), None) => "fresh seeds until Ctrl-C".to_string(),
        _ => plural(seed_list.len() as usize, "seed"),
    };
    eprintln!(
        "sim: {} in {} × {seeds_said}{}, {jobs} jobs",
        plural(cases.len(), "test"),
        plural(binaries.len(), "binary"),
        partition
            .map(|p| format!(" (share {}/{})", p.index, p.count))
            .unwrap_or_default()
    );
    if options.trace.is_some() && options.check_determinism {
        return Err(
            "--trace and --check-determinism both write the sweep's traces: use one".to_string(),
        );
    }
    // Trace files go where the user said, wherever the tests run.
    let cwd = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let traces = match &options.trace {
        Some(dir) => {
            let dir = cwd.join(dir);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create --trace {}: {e}", dir.display()))?;
            Some(dir)
        }
        None => None,
    };
    let sim_trace = std::env::var_os("SIM_TRACE")
        .filter(|p| !p.is_empty())
        .map(|p| cwd.join(p));
    let config = runner::SweepConfig {
        jobs,
        // A soak run counts every seed, and keeps every failing one.
        keep_going: options.keep_going || soak.is_some(),
        deadline: soak.map(|d| std::time::Instant::now() + d),
        check_determinism: options.check_determinism,
        verbose: options.verbose || single,
        work_dir: work_dir.clone(),
        traces: traces.clone().filter(|_| !options.trace_failing),
        sim_trace,
    };
    let mut reporter = report::Reporter::new(config.deadline);
    let mut results = match runner::run(&config, &binaries, cases, &mut reporter) {
        Ok(results) => results,
        Err(runner::Interrupted(signal)) => {
            reporter.finish();
            eprintln!("sim: interrupted by signal {signal}; no test process is left running");
            return Ok(exit_for_signal(signal));
        }
    };
    reporter.finish();
    // Ctrl-C during the sweep: the report of what ran, nothing more
    // started (no doc tests, confirmations, shrinks or timelines).
    let interrupted = signals::received();
    if let Some(signal) = interrupted {
        eprintln!("sim: interrupted by signal {signal}; the report of what ran follows");
    }
    // A failing seed that passes alone failed because of the seeds before
    // it in its process (a static, a process-wide counter): the test
    // carries state, and its outcomes are not its seeds' own. Its seeds run
    // again, one process each (a bounded count), so what is reported and
    // saved reproduces.
    let mut carried = std::collections::BTreeMap::new();
    if interrupted.is_none() && soak.is_none() {
        for (index, result) in results.iter().enumerate() {
            if let Some(seed) = confirm_alone(&config, &binaries, result) {
                carried.insert(index, seed);
            }
        }
        let again: Vec<usize> = carried
            .keys()
            .copied()
            .filter(|&i| results[i].case.seeds.len() <= FRESH_PROCESS_SEEDS_MAX)
            .collect();
        if !again.is_empty() {
            let cases = again
                .iter()
                .map(|&i| runner::TestCase {
                    fresh_process_per_seed: true,
                    ..results[i].case.clone()
                })
                .collect();
            let mut reporter = report::Reporter::new(None);
            match runner::run(&config, &binaries, cases, &mut reporter) {
                Ok(rerun) => {
                    for (i, result) in again.iter().zip(rerun) {
                        results[*i] = result;
                    }
                }
                Err(runner::Interrupted(signal)) => {
                    reporter.finish();
                    eprintln!(
                        "sim: interrupted by signal {signal}; no test process is left running"
                    );
                    return Ok(exit_for_signal(signal));
                }
            }
            reporter.finish();
        }
    }
    if config.verbose {
        // One test at one seed (a replay): show what it printed.
        for entry in std::fs::read_dir(&work_dir).into_iter().flatten().flatten() {
            if entry.path().extension().is_some_and(|e| e == "log") {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                eprint!("{text}");
            }
        }
    }

    // Doc tests: through cargo, one seed, when no target was chosen.
    let mut doc_failures = Vec::new();
    let mut doc_passed = 0usize;
    if !options.no_doc && !targets_chosen && interrupted.is_none() {
        let mut packages: Vec<&str> = binaries
            .iter()
            .filter(|b| b.kind == compile::TargetKind::Lib)
            .map(|b| b.package.as_str())
            .collect();
        packages.sort_unstable();
        packages.dedup();
        let packages = compile::with_doc_tests(&sim, &packages)?;
        if !packages.is_empty() {
            let mut held = files.acquire()?;
            held.swap_in()?;
            let mut command = sim.cargo();
            command.args(["test", "--doc", "--quiet"]).args(&kept);
            for package in &packages {
                command.args(["-p", package]);
            }
            command.arg("--").args(&test_args);
            command.env("SIM_SEED", format!("{:#x}", seed_list.get(0)));
            let log = work_dir.join("doc-tests.out");
            let file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
            command
                .stdout(file.try_clone().map_err(|e| e.to_string())?)
                .stderr(file);
            let mut child = command
                .spawn()
                .map_err(|e| format!("cannot run cargo test --doc: {e}"))?;
            let status = signals::wait(&mut child);
            held.swap_out()?;
            match status {
                Err(signals::Interrupted(signal)) => return Ok(exit_for_signal(signal)),
                Ok(status) if status.success() => doc_passed = 1,
                Ok(_) => doc_failures.push(format!(
                    "FAIL doc tests (seed {:#x})\n{}\n    replay: SIM_SEED={:#x} cargo sim test --doc {}",
                    seed_list.get(0),
                    std::fs::read_to_string(&log).unwrap_or_default().trim_end(),
                    seed_list.get(0),
                    packages.iter().map(|p| format!("-p {p}")).collect::<Vec<_>>().join(" "),
                )),
            }
        }
    }

    // The report.
    let mut passed = 0usize;
    let mut failed = 0usize;
    let mut seeds_run = 0usize;
    let mut not_simulated = 0usize;
    for (index, result) in results.iter().enumerate() {
        seeds_run += result.outcomes.len();
        if result.mode == runner::Mode::NotSimulated {
            not_simulated += 1;
        }
        let rerun = result.case.fresh_process_per_seed;
        let carried_seed = carried.get(&index).copied();
        if let (Some(seed), true) = (carried_seed, rerun) {
            eprintln!(
                "sim: {} carries state from one seed to the next (a static, a process-wide \
                 counter, a cache): seed {seed:#x} failed after other seeds ran in its process \
                 and passes alone. Its {} ran again, one process each; the outcome below is \
                 theirs.",
                result.case.name,
                plural(result.case.seeds.len(), "seed")
            );
        }
        if result.passed() {
            passed += 1;
            continue;
        }
        failed += 1;
        let binary = &binaries[result.case.binary];
        // A seed that failed in a process shared with other seeds must
        // fail alone too, or its replay line would not reproduce it (too
        // many seeds to run again one process each).
        let carried = carried_seed.filter(|_| !rerun);
        let mut saved = None;
        if !options.no_save && carried.is_none() {
            // A soak run keeps every failing seed (up to the file's
            // bound per test); a sweep its first.
            let keep = if soak.is_some() {
                regressions::SEEDS_PER_TEST_MAX
            } else {
                1
            };
            for (index, outcome) in result.failures().into_iter().take(keep) {
                if let runner::Outcome::Fail { class, .. } = outcome {
                    let seed = result.case.seeds.get(index);
                    match regressions::save(binary, &result.case.name, seed, class.as_str()) {
                        Ok(Some(path)) => {
                            saved = Some(
                                path.strip_prefix(&sim.root)
                                    .unwrap_or(&path)
                                    .display()
                                    .to_string(),
                            )
                        }
                        Ok(None) => {}
                        Err(message) => eprintln!("cargo sim: {message}"),
                    }
                }
            }
        }
        if result.outcomes.is_empty() {
            eprintln!(
                "FAIL {} [{}]: it never ran (the binary did not run it by this name)",
                result.case.name, result.case.replay_prefix
            );
            continue;
        }
        eprint!(
            "{}",
            report::failure_report(result, options.keep_going, saved.as_deref(), single)
        );
        if let Some(seed) = carried {
            eprintln!(
                "  seed {seed:#x} passes when it runs alone: it failed only after other seeds ran \
                 in the same process, so the test carries state from one seed to the next (a \
                 static, a process-wide counter, a cache) and its replay line does not \
                 reproduce it. Not saved, and its {} are too many to run again one process \
                 each (at most {FRESH_PROCESS_SEEDS_MAX}). `--check-determinism` runs each seed \
                 again in a fresh process and names the first event where the runs part.",
                plural(result.case.seeds.len(), "seed")
            );
        }
        if let (Some(dir), None) = (&options.shrink, interrupted) {
            if let Some((index, _)) = result.failures().into_iter().next() {
                let seed = result.case.seeds.get(index);
                match shrink::shrink(&config, &binaries, &result.case, seed, dir) {
                    Ok(report) => eprintln!("  {report}"),
                    Err(message) => {
                        eprintln!("cargo sim: cannot shrink {}: {message}", result.case.name)
                    }
                }
            }
        }
        if let (true, Some(dir), None) = (options.trace_failing, &traces, interrupted) {
            for (index, _) in result
                .failures()
                .into_iter()
                .take(regressions::SEEDS_PER_TEST_MAX)
            {
                let seed = result.case.seeds.get(index);
                match runner::trace_failing(&config, &binaries, &result.case, seed, dir) {
                    Ok(path) => eprintln!("  trace of seed {seed:#x}: {}", path.display()),
                    Err(message) => eprintln!(
                        "cargo sim: no trace of {} seed {seed:#x}: {message}",
                        result.case.name
                    ),
                }
            }
        }
        if let (Some(dir), None) = (&options.timeline, interrupted) {
            if let Some((index, _)) = result.failures().into_iter().next() {
                let seed = result.case.seeds.get(index);
                match runner::trace_seed(&config, &binaries, &result.case, seed)
                    .and_then(|trace| timeline::for_failure(&trace, dir, &result.case.name, seed))
                {
                    Ok(line) => eprintln!("  {line}"),
                    Err(message) => {
                        eprintln!("cargo sim: no timeline for {}: {message}", result.case.name)
                    }
                }
            }
        }
    }
    for failure in &doc_failures {
        eprintln!("{failure}");
    }
    for target in &broken {
        eprintln!(
            "FAIL {} {} (build): it does not compile; its first error:\n{}",
            target.package,
            target.target,
            report::indent(&target.error, "    ")
        );
    }
    let elapsed = started.elapsed();
    if let Some(path) = &options.junit {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {} for --junit: {e}", parent.display()))?;
        }
        std::fs::write(path, report::junit(&results, &identity, elapsed))
            .map_err(|e| format!("cannot write --junit {}: {e}", path.display()))?;
    }
    if failed == 0 && doc_failures.is_empty() && broken.is_empty() {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    let swept = swept_from.elapsed();
    eprintln!(
        "sim: {} in {:.2}s ({:.0} seeds/s; the build took {:.1}s){}{}",
        plural(seeds_run, "seed"),
        swept.as_secs_f64(),
        seeds_run as f64 / swept.as_secs_f64().max(1e-3),
        built_in.as_secs_f64(),
        if not_simulated > 0 {
            format!(
                "; {} no simulation, so once each",
                plural(not_simulated, "test ran")
            )
        } else {
            String::new()
        },
        if doc_passed + doc_failures.len() > 0 {
            format!(
                "; doc tests {}",
                if doc_failures.is_empty() {
                    "passed"
                } else {
                    "failed"
                }
            )
        } else {
            String::new()
        }
    );
    println!(
        "sim: {} passed, {} failed{}",
        passed,
        failed + doc_failures.len() + broken.len(),
        match broken.len() {
            0 => String::new(),
            1 => " (1 target does not compile)".to_string(),
            n => format!(" ({n} targets do not compile)"),
        }
    );
    if let Some(signal) = interrupted {
        return Ok(exit_for_signal(signal));
    }
    Ok(
        if failed == 0 && doc_failures.is_empty() && broken.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(101)
        },
    )
}
