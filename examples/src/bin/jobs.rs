//! A small job queue service, written against plain tokio (the service is
//! `sim_examples::jobs`).
//!
//! On real tokio (`cargo run -p sim-examples --bin jobs`) it takes a few
//! seconds of wall time and differs from run to run. On the simulator
//! (`cargo sim run -p sim-examples --bin jobs`) it takes milliseconds, and
//! with the same `SIM_SEED` prints the same report and writes the same
//! `SIM_TRACE`, event for event.

#[tokio::main]
async fn main() {
    let report = sim_examples::jobs::run().await;
    println!(
        "report at unix time {}, after {:?}",
        report.unix_time_s, report.elapsed
    );
    for line in report.lines {
        println!("  {line}");
    }
    for (key, count) in report.stats {
        println!("  {key}: {count}");
    }
}
