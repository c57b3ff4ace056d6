//! The job queue service accounts for every job, whatever the schedule:
//! on real tokio (paused clock) and, under `cargo sim test --seeds`, on
//! every seed. BENCHMARKS.md times a sweep of this test.

use sim_examples::jobs::{run, JOBS, WORKERS};

#[tokio::test(start_paused = true)]
async fn every_job_is_done_or_timed_out_once() {
    let report = run().await;
    let total: u32 = report.stats.iter().map(|(_, n)| n).sum();
    assert_eq!(total as usize, JOBS, "{report:?}");
    for (key, _) in &report.stats {
        let worker: usize = key.split(' ').nth(1).unwrap().parse().unwrap();
        assert!(worker < WORKERS, "{key}");
    }
    // The monitor saw the last job finish on its final tick.
    let last = report.lines.last().unwrap();
    assert!(last.ends_with(&format!("finished={JOBS}")), "{last}");
}
