//! In-process sweeps: what `#[tokio::test]`'s expansion calls. Under a
//! runner, the body runs once per seed, each on a fresh thread, and every
//! outcome is recorded.

use super::panic::{classify, payload_text};
use super::record::{reporting, write_record, Record};
use super::state::{LAST_PANIC, POLICY_OVERRIDE, SEED_OVERRIDE, SWEEP_THREAD};
use super::vars::SEEDS_VAR;
use crate::failure::FailureClass;
use std::io::Write;
use std::process::{ExitCode, Termination};

/// PCT's horizon, measured as the reference harness does: seed 0 runs
/// once under the random schedule, and its scheduling decisions times 1.5,
/// at least 100 and at least room for the change points, are the horizon.
/// Fixing the measuring seed keeps a found seed replayable alone: its
/// replay measures the same horizon.
pub(crate) fn measure_decisions<R: Termination + 'static>(body: fn() -> R) -> u64 {
    // The harness's own threads are plain ones (`outside`): never the
    // first thread of a plain test's simulation (sim-os's `ambient`).
    let measuring = crate::outside::outside(|| {
        std::thread::Builder::new()
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
    })
    .expect("a thread for the horizon's measuring run");
    join_uncounted(measuring).unwrap_or(0)
}

/// Joins the thread of a run. This thread (libtest's, a real one) only
/// waits meanwhile, so it is not counted among the real threads that may
/// wake a task of the run: a deadlock is reported at once, not after the
/// two seconds a run out of work waits for such a wake.
fn join_uncounted<T>(thread: std::thread::JoinHandle<T>) -> std::thread::Result<T> {
    let mut thread = Some(thread);
    let mut joined = None;
    let mut join = || joined = thread.take().map(std::thread::JoinHandle::join);
    match crate::seams::os_layer() {
        Some(layer) => layer.wait_uncounted(&mut join),
        None => join(),
    }
    joined.expect("the join ran once")
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
    seeds: Vec<SeedItem>,
    keep_going: bool,
}

/// One item of `SIM_SWEEP_SEEDS`: a seed, or every `step`-th seed from
/// `start` up to (not including) `end`, so a share of a sweep of any size
/// is a few bytes and is never held in memory whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedItem {
    /// One seed.
    One(u64),
    /// `start, start + step, ...` below `end`.
    Every {
        /// The first seed.
        start: u64,
        /// The bound (not included).
        end: u64,
        /// The distance between two seeds (at least 1).
        step: u64,
    },
}

impl SeedItem {
    /// The seeds of the item, in order.
    pub fn seeds(self) -> impl Iterator<Item = u64> {
        // As an inclusive range, so a seed of u64::MAX is one too.
        let (first, last, step) = match self {
            SeedItem::One(seed) => (seed, seed, 1),
            SeedItem::Every { start, end, step } if end > start => (start, end - 1, step.max(1)),
            // Empty.
            SeedItem::Every { .. } => (1, 0, 1),
        };
        // Bounded: each turn moves `step` toward `last`.
        (first..=last).step_by(step as usize)
    }
}

/// Writes `seeds` compactly for `SIM_SWEEP_SEEDS`: runs of three or more
/// seeds an equal step apart become `start..end/step` (hex), the rest stay
/// single seeds, comma-separated.
pub fn encode_seeds(seeds: &[u64]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut i = 0;
    // Bounded: each turn consumes at least one seed.
    while i < seeds.len() {
        let start = seeds[i];
        let run_end = match seeds.get(i + 1) {
            Some(&next) if next > start => {
                let step = next - start;
                let mut j = i + 1;
                while j + 1 < seeds.len() && seeds[j + 1].checked_sub(seeds[j]) == Some(step) {
                    j += 1;
                }
                (j - i >= 2).then_some((j, step))
            }
            _ => None,
        };
        match run_end {
            Some((j, step)) => {
                let end = seeds[j].saturating_add(1);
                items.push(format!("{start:#x}..{end:#x}/{step:#x}"));
                i = j + 1;
            }
            None => {
                items.push(format!("{start:#x}"));
                i += 1;
            }
        }
    }
    items.join(",")
}

pub(crate) fn plan() -> Option<Plan> {
    let seeds = crate::settings::SWEEP_SEEDS
        .value()
        .filter(|s| !s.is_empty())?;
    if !reporting() {
        return None;
    }
    // A long list comes in a file (`@path`): an environment variable has a
    // size limit.
    let seeds = match seeds.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("sim: {SEEDS_VAR} names {path}, which cannot be read: {e}")),
        None => seeds,
    };
    let seeds =
        decode_seeds(&seeds).unwrap_or_else(|e| panic!("sim: {SEEDS_VAR} holds a bad seed: {e}"));
    let keep_going = crate::settings::SWEEP_KEEP_GOING.is_on();
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
        Ok(crate::config::Policy::Pct { depth, .. }) if !crate::settings::PCT_HORIZON.is_set() => {
            let decisions = measure_decisions(body);
            Some(crate::config::Policy::Pct {
                depth,
                horizon: crate::config::pct_horizon(decisions, depth),
            })
        }
        _ => None,
    };
    let portfolio = super::portfolio::active();
    crate::property::fork::sweep_caller();
    for seed in plan.seeds.iter().flat_map(|item| item.seeds()) {
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
        // A plain thread (`outside`), as the horizon's above.
        let seed_thread = crate::outside::outside(|| {
            builder.spawn(move || {
                POLICY_OVERRIDE.with(|p| p.set(policy));
                let record = run_seed(seed, should_panic, body);
                // A forked branch run ends here (`property::fork`).
                crate::property::fork::child_done(&record);
                record
            })
        });
        let record = match seed_thread.map(join_uncounted) {
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

/// Writes `items` for `SIM_SWEEP_SEEDS` (see [`encode_seeds`]).
pub fn encode_items(items: &[SeedItem]) -> String {
    items
        .iter()
        .map(|item| match *item {
            SeedItem::One(seed) => format!("{seed:#x}"),
            SeedItem::Every { start, end, step } => format!("{start:#x}..{end:#x}/{step:#x}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads what [`encode_seeds`] wrote.
pub fn decode_seeds(text: &str) -> Result<Vec<SeedItem>, String> {
    text.split(',')
        .filter(|item| !item.trim().is_empty())
        .map(|item| {
            let item = item.trim();
            match item.split_once("..") {
                None => crate::config::parse_seed(item).map(SeedItem::One),
                Some((start, rest)) => {
                    let (end, step) = rest.split_once('/').unwrap_or((rest, "1"));
                    Ok(SeedItem::Every {
                        start: crate::config::parse_seed(start)?,
                        end: crate::config::parse_seed(end)?,
                        step: crate::config::parse_seed(step)?.max(1),
                    })
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod seed_items {
    use super::*;

    #[test]
    fn a_share_of_any_size_is_a_few_bytes_and_comes_back_whole() {
        let mut seeds = vec![0x2a, 7];
        seeds.extend((10..1_000_000u64).step_by(4));
        seeds.push(u64::MAX);
        let text = encode_seeds(&seeds);
        assert!(text.len() < 64, "{text}");
        let back: Vec<u64> = decode_seeds(&text)
            .unwrap()
            .into_iter()
            .flat_map(SeedItem::seeds)
            .collect();
        assert_eq!(back, seeds);
    }
}
