//! The cost of one property evaluation (`assert_always!`, `assert_sometimes!`
//! through `sim-assert`) in a hot loop (BENCHMARKS.md):
//!
//! ```sh
//! cargo sim run --release -p sim-examples --bin property_cost   # the simulator
//! cargo run --release -p sim-examples --bin property_cost       # real tokio
//! ```
//!
//! A task evaluates each kind `EVALUATIONS` times and prints the real time
//! per evaluation, on libc's own clock (the run's clocks are virtual). In a
//! plain build the assertions expand to nothing: the loop is what remains.

use std::hint::black_box;

const EVALUATIONS: u64 = 10_000_000;

fn per_evaluation(f: impl Fn(u64)) -> f64 {
    let start = sim_examples::bench::real_now_ns();
    for i in 0..EVALUATIONS {
        f(black_box(i));
    }
    (sim_examples::bench::real_now_ns() - start) / EVALUATIONS as f64
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let empty = per_evaluation(|i| {
        black_box(i < u64::MAX);
    });
    let always = per_evaluation(|i| {
        sim_assert::assert_always!(i < u64::MAX, "bench: below the maximum");
    });
    let sometimes = per_evaluation(|i| {
        sim_assert::assert_sometimes!(i % 1_000 == 0, "bench: a round thousand", i);
    });
    println!("empty loop: {empty:.1} ns per iteration");
    println!("assert_always!: {always:.1} ns per evaluation");
    println!("assert_sometimes! (with details): {sometimes:.1} ns per evaluation");
}
