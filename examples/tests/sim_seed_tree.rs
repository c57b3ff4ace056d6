//! The seed tree and BUGGIFY: named streams follow the seed and their own
//! name only; BUGGIFY sites are enabled one run in four and fire one time
//! in four, each firing a trace event. Simulation build only.
#![cfg(simulation)]

use sim_runtime::SimConfig;

/// Runs `body` on a fresh runtime with `seed`; returns its output and the
/// run's trace event count.
fn run<T>(seed: u64, body: impl std::future::Future<Output = T>) -> (T, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build_with(SimConfig::with_seed(seed));
    let out = rt.block_on(body);
    drop(rt);
    (out, sim_runtime::last_run().expect("the run ended").events)
}

#[test]
fn a_named_stream_is_its_seed_and_name_only() {
    let draws = |seed, other_first: bool| {
        run(seed, async move {
            if other_first {
                // Another stream drawing first shifts nothing of "a".
                for _ in 0..10 {
                    tokio::sim::rng("b").next_u64();
                }
            }
            (0..8)
                .map(|_| tokio::sim::rng("a").range(0..1000))
                .collect::<Vec<_>>()
        })
        .0
    };
    assert_eq!(draws(7, false), draws(7, true));
    assert_ne!(draws(7, false), draws(8, false));
    let (a, b) = run(7, async {
        (
            tokio::sim::rng("a").next_u64(),
            tokio::sim::rng("b").next_u64(),
        )
    })
    .0;
    assert_ne!(a, b, "two names, two streams");
    let (hits, _) = run(9, async {
        (0..10_000)
            .filter(|_| tokio::sim::rng("coin").chance(0.25))
            .count()
    });
    assert!((2_200..2_800).contains(&hits), "{hits}");
}

const CALLS: usize = 200;

/// One BUGGIFY site, reached `CALLS` times; how often it fired.
async fn workload() -> usize {
    (0..CALLS).filter(|_| tokio::sim::buggify()).count()
}

#[test]
fn buggify_sites_are_enabled_one_run_in_four_and_fire_one_time_in_four() {
    let mut enabled_runs = 0;
    let mut fired_in_enabled = 0;
    let mut base_events = None;
    for seed in 0..400u64 {
        let (fired, events) = run(seed, workload());
        // Same seed, same decisions.
        assert_eq!(fired, run(seed, workload()).0, "seed {seed}");
        // Each firing is one trace event, and nothing else differs.
        let base = events - fired as u64;
        assert_eq!(*base_events.get_or_insert(base), base, "seed {seed}");
        if fired > 0 {
            enabled_runs += 1;
            fired_in_enabled += fired;
        }
    }
    // One in four of 400 runs: about 100.
    assert!((70..130).contains(&enabled_runs), "{enabled_runs}");
    let rate = fired_in_enabled as f64 / (enabled_runs * CALLS) as f64;
    assert!((0.2..0.3).contains(&rate), "{rate}");
    // Outside a run it never fires.
    assert!(!(0..100).any(|_| tokio::sim::buggify()));
}
