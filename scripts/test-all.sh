#!/usr/bin/env bash
# Every test, in both builds: plain (real tokio) and simulation (the facade,
# through `cargo sim`). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== plain build: real tokio =="
cargo test --workspace

echo "== simulation build: cargo sim test =="
# sim-bench compares real tokio with the facade in one plain build; under the
# patch both would be the facade, so it has no simulation build.
cargo sim test --workspace --exclude sim-bench
