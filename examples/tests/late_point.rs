//! A run whose one `reachable` comes 90% of the way through: the workload
//! of the fork server's benchmark (`scripts/bench-branch.sh`,
//! BENCHMARKS.md). A branch run from that point costs, forked, its last
//! tenth; replayed from the start, all of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Rounds of racers in the run.
const ROUNDS: u32 = 1_000;
/// The round at which the point is reached.
const POINT_ROUND: u32 = ROUNDS * 9 / 10;

#[tokio::test]
async fn a_point_ninety_percent_through() {
    // How many racers ran, and the sum of their numbers: checked at the
    // end in constant time, so the run's work is its rounds alone.
    let ran = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    for round in 0..ROUNDS {
        if round == POINT_ROUND {
            sim_assert::assert_reachable!("nine tenths of the run are behind");
        }
        let racers: Vec<_> = (0..4u64)
            .map(|racer| {
                let ran = ran.clone();
                tokio::spawn(async move {
                    tokio::task::yield_now().await;
                    ran.0.fetch_add(1, Ordering::Relaxed);
                    ran.1
                        .fetch_add(racer + 4 * u64::from(round), Ordering::Relaxed);
                })
            })
            .collect();
        for racer in racers {
            racer.await.unwrap();
        }
    }
    let count = 4 * u64::from(ROUNDS);
    assert_eq!(ran.0.load(Ordering::Relaxed), count);
    assert_eq!(
        ran.1.load(Ordering::Relaxed),
        count * (count - 1) / 2,
        "every racer ran once"
    );
}
