#!/usr/bin/env bash
# Every test, in both builds: plain (real tokio) and simulation (the facade,
# through `cargo sim`). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
# The target directory, as cargo resolves it (CARGO_TARGET_DIR, a config's
# build.target-dir, or target/).
target_dir=$(cargo metadata --format-version 1 --no-deps |
  grep -o '"target_directory":"[^"]*"' | cut -d'"' -f4)
# `cargo sim` as this checkout builds it (an installed one may be older):
# the binary the plain build's `cargo test` below makes for cargo-sim's own
# tests. (`cargo run -p cargo-sim` would resolve the features of its
# dependencies for cargo-sim alone, not with the workspace's, and build
# clap, serde_json and cargo-sim again: 10 s before the simulation build.)
cargo_sim() { "$target_dir/debug/cargo-sim" sim "$@"; }

# Both builds and the builds of cargo-sim's fixture crates fill about 6 GB
# of the target directory on a fresh clone (6.7 GB with CI's clippy). A
# full disk shows up as a linker's "No space left on device" deep in a
# build: say it up front.
need_gb=7
mkdir -p "$target_dir"
used_kb=$(du -sk "$target_dir" | cut -f1)
free_kb=$(df -Pk "$target_dir" | awk 'NR == 2 { print $4 }')
if (( (free_kb + used_kb) / 1048576 < need_gb )); then
  echo "test-all.sh: warning: $((free_kb / 1048576)) GB free beside the $((used_kb / 1048576)) GB" \
    "of $target_dir, where a run from scratch fills about $need_gb GB: free some disk if a" \
    "build fails with 'No space left on device'." >&2
fi

echo "== plain build: real tokio =="
# The facade (package `tokio`) and the harness are simulation-only: their
# doc examples run simulations, so the simulation build below tests them
# (the harness's test files are `#![cfg(simulation)]` as well). sim-bench
# has no tests: it is a benchmark binary, built by CI's clippy. Every
# target with tests, then the doc tests: `cargo test` alone would also
# build the examples (sim-history's benchmarks, optimized: a tenth of this
# build's CPU), which have no tests and which CI's clippy checks.
plain_packages=(--workspace --exclude tokio --exclude sim-harness --exclude sim-bench)
cargo test "${plain_packages[@]}" --lib --bins --tests
cargo test "${plain_packages[@]}" --doc

echo "== simulation build: cargo sim test =="
# sim-bench compares real tokio with the facade in one plain build; under the
# patch both would be the facade, so it has no simulation build. cargo-sim
# is the runner, no tokio user: its tests (which run cargo sim on fixture
# crates) are the plain build's. sim-runtime and sim-history depend on no
# tokio and hold no `cfg(simulation)`: their tests are the same code in both
# builds, and the plain build ran them.
sim_packages=(--workspace --exclude sim-bench --exclude cargo-sim --exclude sim-runtime
  --exclude sim-history)
cargo_sim test "${sim_packages[@]}"

echo "== simulation build: replays in a fresh process =="
# Each seed of the tests that mix OS threads, std sockets and several
# runtimes runs again in a process of its own and must give the same trace:
# what a saved seed promises (process-wide state, such as a count of
# threads, once named a seed's threads differently in a replay). The same
# packages as above, so that their features resolve alike and nothing
# builds again; `threads` is compat-tests' and sim-os's.
cargo_sim test "${sim_packages[@]}" --test threads --test std_net --test runtime_background \
  --test two_runtimes --seeds 2 --check-determinism --no-save
