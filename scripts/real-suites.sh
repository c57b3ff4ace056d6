#!/usr/bin/env bash
# Runs real projects' own test suites, unmodified, on real tokio (`cargo
# test`) and on the simulator (`cargo sim test --seeds 20`), and prints the
# rows of README's "Real projects' test suites" table.
#
# Each suite is a crate as published on crates.io, whose package carries
# its tests and its Cargo.lock: the script fetches it with cargo, copies it
# into $SUITES_DIR (default target/real-suites) as a workspace of its own,
# and runs its unit and integration tests (not its doc tests) both ways.
#
#   bash scripts/real-suites.sh              # every suite
#   bash scripts/real-suites.sh bb8 axum     # some of them
#
# It needs crates.io and takes about an hour on two cores; it is not part
# of the test command. README's table is checked against the list below by
# compat-tests/ecosystem/tests/readme_suites.rs.
set -euo pipefail

# name version cargo-test-arguments (one line per suite; keep in step with
# README's table).
SUITES=(
  "tokio-util 0.7.20 --features full"
  "tokio-stream 0.1.19 --all-features"
  "tower 0.5.3 --features full"
  "mini-redis 0.4.1"
  "bb8 0.9.1"
  "hyper-util 0.1.21 --features full"
  "tower-http 0.6.11 --features full"
)
SEEDS=20

root=$(cd "$(dirname "$0")/.." && pwd)
work=${SUITES_DIR:-$root/target/real-suites}
mkdir -p "$work"
export CARGO_TARGET_DIR=$work/target
cargo build --quiet --manifest-path "$root/Cargo.toml" -p cargo-sim
sim=$root/target/debug/cargo-sim

# The published package of a crate, by way of cargo's own download.
fetch() {
  local name=$1 version=$2 probe=$work/fetch-$1
  mkdir -p "$probe/src"
  : > "$probe/src/lib.rs"
  printf '[package]\nname = "fetch-probe"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s = "=%s"\n\n[workspace]\n' \
    "$name" "$version" > "$probe/Cargo.toml"
  cargo fetch --quiet --manifest-path "$probe/Cargo.toml"
  local home=${CARGO_HOME:-$HOME/.cargo}
  local src
  src=$(ls -d "$home"/registry/src/*/"$name-$version" | head -1)
  # One level down, with its README beside it as well: some tests read
  # the README of their repository's root (tower-http's).
  rm -rf "${work:?}/$name"
  mkdir -p "$work/$name"
  cp -r "$src" "$work/$name/$name"
  cp "$src/README.md" "$work/$name/" 2>/dev/null || true
  local crate=$work/$name/$name
  # A workspace of its own, not the checkout's.
  grep -q '^\[workspace\]' "$crate/Cargo.toml" || printf '\n[workspace]\n' >> "$crate/Cargo.toml"
  # Dependencies as cargo resolves them today: a package's Cargo.lock can
  # be older than its manifest (tower 0.5.3's locks a tracing without
  # what it imports).
  rm -f "$crate/Cargo.lock"
}

# "passed total" from libtest's summaries.
plain_counts() {
  awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
       END { printf "%d %d\n", p, p + f }' "$1"
}

# "passed total" from cargo sim's last line ("sim: P passed, F failed").
sim_counts() {
  grep -E '^sim: [0-9]+ passed, [0-9]+ failed' "$1" | tail -1 |
    awk '{ p = $2; f = $4; printf "%d %d\n", p, p + f }'
}

echo "| suite | version | tests | real tokio | simulator, $SEEDS seeds each |"
echo "| --- | --- | ---: | ---: | ---: |"
for line in "${SUITES[@]}"; do
  read -r name version args <<< "$line"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then
    continue
  fi
  fetch "$name" "$version"
  dir=$work/$name/$name
  # shellcheck disable=SC2086
  (cd "$dir" && cargo test --tests $args > "$work/$name.plain.log" 2>&1) || true
  read -r plain_passed plain_total < <(plain_counts "$work/$name.plain.log")
  # shellcheck disable=SC2086
  (cd "$dir" && "$sim" sim test --seeds "$SEEDS" --keep-going --no-save --no-doc $args \
    > "$work/$name.sim.log" 2>&1) || true
  read -r sim_passed sim_total < <(sim_counts "$work/$name.sim.log" || echo "0 0")
  echo "| \`$name\` | $version | $sim_total | $plain_passed of $plain_total | $sim_passed of $sim_total |"
done
