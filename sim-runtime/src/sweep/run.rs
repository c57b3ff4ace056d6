//! In-process sweeps: what `#[tokio::test]`'s expansion calls. Under a
//! runner, the body runs once per seed, each on a fresh thread, and every
//! outcome is recorded.

use super::panic::{classify, payload_text};
use super::record::{reporting, write_record, Record};
use super::state::{LAST_PANIC, POLICY_OVERRIDE, SEED_OVERRIDE, SWEEP_THREAD};
use super::vars::{KEEP_GOING_VAR, SEEDS_VAR};
use crate::failure::FailureClass;
use std::io::Write;
use std::process::{ExitCode, Termination};

/// PCT's horizon, measured as the reference harness does: seed 0 runs
/// once under the random schedule, and its scheduling decisions times 1.5,
/// at least 100 and at least room for the change points, are the horizon.
/// Fixing the measuring seed keeps a found seed replayable alone: its
/// replay measures the same horizon.
pub(crate) fn measure_decisions<R: Termination + 'static>(body: fn() -> R) -> u64 {
    let measuring = std::thread::Builder::new()
        .name("sim-pct-horizon".to_string())
        .spawn(move || {
            SWEEP_THREAD.with(|s| s.set(true));
            SEED_OVERRIDE.with(|s| s.set(Some(0)));
            POLICY_OVERRIDE.with(|p| p.set(Some(crate::config::Policy::Random)));
            let _ = std::panic::catch_unwind(move || {
                let _ = body();
            });
            crate::summary::last_run().map_or(0, |run| run.decisions)
        })
        .expect("a thread for the horizon's measuring run");
    measuring.join().unwrap_or(0)
}

/// What a `#[should_panic]` attribute asked of a test.
#[derive(Clone, Copy, Debug)]
pub enum ShouldPanic {
    /// No attribute: a panic fails the test.
    No,
    /// `#[should_panic]`, with the `expected` text if given.
    Yes(Option<&'static str>),
}

pub(crate) struct Plan {
    seeds: Vec<u64>,
    keep_going: bool,
}

pub(crate) fn plan() -> Option<Plan> {
    let seeds = std::env::var(SEEDS_VAR).ok().filter(|s| !s.is_empty())?;
    if !reporting() {
        return None;
    }
    let seeds = seeds
        .split(',')
        .map(|s| {
            crate::config::parse_seed(s)
                .unwrap_or_else(|e| panic!("sim: {SEEDS_VAR} holds a bad seed: {e}"))
        })
        .collect();
    let keep_going = std::env::var(KEEP_GOING_VAR).is_ok_and(|v| v == "1");
    Some(Plan { seeds, keep_going })
}

/// Runs a `#[tokio::test]` body: once, or, under a sweep runner, once per
/// seed on a fresh thread each, recording every outcome; then the process
/// ends (the runner reads the records, not libtest's verdict).
///
/// `body` builds the runtime and runs the test's future to completion.
pub fn run_test<R: Termination + 'static>(should_panic: ShouldPanic, body: fn() -> R) -> R {
    let Some(plan) = plan() else {
        return body();
    };
    write_record(&Record::Sweep);
    let name = std::thread::current().name().map(str::to_string);
    // PCT without a given horizon: measure it once for this test (seed 0
    // under the uniform policy; its decisions set the horizon).
    let given = match crate::config::policy_from(&crate::decision::var) {
        Ok(crate::config::Policy::Pct { depth, .. })
            if std::env::var(crate::config::PCT_HORIZON_VAR).is_err() =>
        {
            let decisions = measure_decisions(body);
            Some(crate::config::Policy::Pct {
                depth,
                horizon: crate::config::pct_horizon(decisions, depth),
            })
        }
        _ => None,
    };
    let portfolio = super::portfolio::active();
    for &seed in &plan.seeds {
        let policy = if portfolio {
            Some(super::portfolio::policy(seed))
        } else {
            given
        };
        write_record(&Record::Begin(seed));
        let mut builder = std::thread::Builder::new();
        if let Some(name) = &name {
            builder = builder.name(name.clone());
        }
        let seed_thread = builder.spawn(move || {
            POLICY_OVERRIDE.with(|p| p.set(policy));
            run_seed(seed, should_panic, body)
        });
        let record = match seed_thread.map(|t| t.join()) {
            Ok(Ok(record)) => record,
            Ok(Err(payload)) => Record::Fail {
                seed,
                class: FailureClass::Panic,
                message: format!(
                    "the test thread panicked outside the test: {}",
                    payload_text(&*payload)
                ),
            },
            Err(e) => panic!("sim: cannot start a thread for seed {seed:#x}: {e}"),
        };
        let failed = matches!(record, Record::Fail { .. });
        write_record(&record);
        if failed && !plan.keep_going {
            break;
        }
    }
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(0);
}

pub(crate) fn run_seed<R: Termination>(
    seed: u64,
    should_panic: ShouldPanic,
    body: fn() -> R,
) -> Record {
    SWEEP_THREAD.with(|s| s.set(true));
    SEED_OVERRIDE.with(|s| s.set(Some(seed)));
    let before = crate::summary::last_run();
    let result = std::panic::catch_unwind(move || body().report() == ExitCode::SUCCESS);
    let hash = crate::summary::last_run()
        .filter(|run| Some(run) != before.as_ref())
        .map(|run| run.trace_hash)
        .unwrap_or_default();
    let panic_text = || {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "the test panicked".to_string())
    };
    match (result, should_panic) {
        (Ok(true), ShouldPanic::No) => Record::Pass { seed, hash },
        (Ok(false), ShouldPanic::No) => {
            let (class, message) = classify(
                "the test returned an error (its Debug form is in the test's output)".to_string(),
            );
            Record::Fail {
                seed,
                class,
                message,
            }
        }
        (Ok(_), ShouldPanic::Yes(_)) => Record::Fail {
            seed,
            class: FailureClass::Panic,
            message: "the test did not panic as #[should_panic] expects".to_string(),
        },
        (Err(payload), ShouldPanic::Yes(expected)) => {
            let text = payload_text(&*payload);
            match expected {
                Some(expected) if !text.contains(expected) => Record::Fail {
                    seed,
                    class: FailureClass::Panic,
                    message: format!(
                        "the test panicked with {text:?}, which does not contain the expected \
                         {expected:?}"
                    ),
                },
                _ => Record::Pass { seed, hash },
            }
        }
        (Err(_), ShouldPanic::No) => {
            let (class, message) = classify(panic_text());
            Record::Fail {
                seed,
                class,
                message,
            }
        }
    }
}
