//! How often the planted worker-starvation race (`sim_examples::race`)
//! fails, and its fixed twin:
//!
//! - `cargo run --release -p sim-examples --bin worker_race`: on real
//!   tokio, 100 runs each on a `multi_thread` runtime of 4 workers and on a
//!   `current_thread` runtime;
//! - `cargo sim run --release -p sim-examples --bin worker_race`: on the
//!   simulator, 500 seeds each on 4 simulated workers and on
//!   `current_thread`.

use sim_examples::race::transaction;
use tokio::runtime::{Builder, Runtime};

#[cfg(not(simulation))]
const RUNS: u64 = 100;
#[cfg(simulation)]
const RUNS: u64 = 500;

fn runtime(multi_thread: bool, run: u64) -> Runtime {
    let mut builder = if multi_thread {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(4);
        b
    } else {
        Builder::new_current_thread()
    };
    builder.enable_all();
    #[cfg(simulation)]
    {
        let mut config = sim_runtime::SimConfig::from_env();
        config.seed = run;
        builder.build_with(config)
    }
    #[cfg(not(simulation))]
    {
        let _ = run;
        builder.build().expect("a runtime")
    }
}

fn main() {
    let system = if cfg!(simulation) {
        "simulator"
    } else {
        "real tokio"
    };
    for (flavor, multi_thread) in [("multi_thread, 4 workers", true), ("current_thread", false)] {
        for (name, fixed) in [("buggy", false), ("fixed", true)] {
            let failed = (0..RUNS)
                .filter(|&run| {
                    runtime(multi_thread, run)
                        .block_on(transaction(fixed))
                        .is_err()
                })
                .count();
            println!("{system}: {name} on {flavor}: failed {failed} of {RUNS} runs");
        }
    }
}
