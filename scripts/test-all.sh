#!/usr/bin/env bash
# Every test, in both builds: plain (real tokio) and simulation (the facade,
# through `cargo sim`). This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== plain build: real tokio =="
cargo test --workspace

echo "== simulation build: cargo sim test =="
cargo sim test --workspace
