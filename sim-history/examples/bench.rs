//! The checkers' speed on the workloads BENCHMARKS.md names: CPU time of
//! each check, median of five. Run it optimized:
//!
//! ```sh
//! cargo run --release -p sim-history --example bench
//! ```

#[path = "../tests/support/mod.rs"]
mod support;

use sim_history::elle::{self, Isolation, Workload as TxnWorkload};
use sim_history::linear::{check, models, Budget, Model};
use sim_history::History;
use std::time::Duration;
use support::{generate_over, serial_history_over, Workload};

/// CPU time of this process (user + system).
fn cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<[i64; 18]>::zeroed();
    // getrusage(RUSAGE_SELF) fills a struct rusage: two timevals first.
    extern "C" {
        fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
    }
    // SAFETY: `usage` is writable memory at least as large as struct
    // rusage on 64-bit Linux (144 bytes), and RUSAGE_SELF (0) is valid.
    let usage = unsafe {
        getrusage(0, usage.as_mut_ptr());
        usage.assume_init()
    };
    Duration::from_secs((usage[0] + usage[2]) as u64)
        + Duration::from_micros((usage[1] + usage[3]) as u64)
}

fn median_cpu<M: Model>(model: &M, history: &History) -> (Duration, String) {
    let mut times = Vec::new();
    let mut verdict = String::new();
    for _ in 0..5 {
        let start = cpu();
        let report = check(model, history, Budget::default());
        times.push(cpu() - start);
        verdict = format!(
            "{:?}, {} steps, {} partitions",
            report.verdict, report.steps, report.partitions
        );
        verdict.truncate(80);
    }
    times.sort();
    (times[2], verdict)
}

fn main() {
    println!("| workload | operations | CPU (median of 5) | verdict |");
    println!("| --- | ---: | ---: | --- |");
    let rows: [(&str, Workload, usize, usize, u64, u64); 5] = [
        (
            "one register, 5 clients, 10% info, big",
            Workload::Register,
            5,
            5_000,
            20,
            1,
        ),
        (
            "key-value map, 100 keys, 10 clients, no info",
            Workload::KeyValue,
            10,
            10_000,
            0,
            100,
        ),
        (
            "key-value map, 100 keys, 10 clients, 10% info",
            Workload::KeyValue,
            10,
            10_000,
            20,
            100,
        ),
        (
            "one register, 5 clients, 10% info",
            Workload::Register,
            5,
            1_000,
            20,
            1,
        ),
        (
            "one register, 5 clients, no info",
            Workload::Register,
            5,
            1_000,
            0,
            1,
        ),
    ];
    for (name, workload, clients, ops, info, keys) in rows {
        let history = generate_over(workload, 7, clients, ops, info, keys);
        let infos = history
            .operations()
            .iter()
            .filter(|o| o.outcome == sim_history::Outcome::Info)
            .count();
        let (time, verdict) = match workload {
            Workload::Register => median_cpu(&models::Register::new(), &history),
            _ => median_cpu(&models::KeyValue::new(), &history),
        };
        println!(
            "| {name} ({infos} info) | {ops} | {:.1} ms | {verdict} |",
            time.as_secs_f64() * 1e3
        );
    }
    transactions();
}

/// Elle's checks on histories of a serializable store: CPU time, median
/// of 5.
fn transactions() {
    println!();
    println!("| workload | transactions | CPU (median of 5) | verdict |");
    println!("| --- | ---: | ---: | --- |");
    for (name, workload, txns, keys) in [
        (
            "list-append, 10 keys, strict serializable",
            TxnWorkload::ListAppend,
            10_000,
            10,
        ),
        (
            "read-write registers, 10 keys, strict serializable",
            TxnWorkload::RwRegister,
            10_000,
            10,
        ),
    ] {
        let history = serial_history_over(7, workload, txns, keys);
        let mut times = Vec::new();
        let mut valid = false;
        for _ in 0..5 {
            let start = cpu();
            valid = elle::check(&history, workload, Isolation::StrictSerializable).is_valid();
            times.push(cpu() - start);
        }
        times.sort();
        println!(
            "| {name} | {txns} | {:.1} ms | {} |",
            times[2].as_secs_f64() * 1e3,
            if valid { "valid" } else { "anomalies" }
        );
    }
}
