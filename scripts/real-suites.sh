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
# It needs crates.io (and GitHub, for hyper and tonic) and takes about an
# hour on two cores; it is not part of the test command. README's table is
# checked against the list below by cargo-sim/tests/real_suites.rs.
set -euo pipefail

# name version [git=URL] cargo-test-arguments (one line per suite; keep in
# step with README's table). A package published without its tests (hyper)
# names its repository: the script clones the tag v<version> (a
# SUITE_GIT_<name> variable, dashes as underscores, overrides the URL, as
# a local mirror). axum's package lacks the dev-dependency of its
# repository that turns its test macro on: its line asks for the feature.
SUITES=(
  "tokio-util 0.7.20 --features full"
  "tokio-stream 0.1.19 --all-features"
  "tower 0.5.3 --features full"
  "mini-redis 0.4.1"
  "bb8 0.9.1"
  "hyper-util 0.1.21 --features full"
  "tower-http 0.6.11 --features full"
  "hyper 1.11.0 git=https://github.com/hyperium/hyper --features full"
  "tonic 0.14.5 git=https://github.com/hyperium/tonic -p integration-tests"
  "quinn 0.11.9"
  "axum 0.8.9 --features http2,ws,multipart,macros,axum-macros/__private"
)
SEEDS=20

root=$(cd "$(dirname "$0")/.." && pwd)
work=${SUITES_DIR:-$root/target/real-suites}
mkdir -p "$work"
export CARGO_TARGET_DIR=$work/target
cargo build --quiet --manifest-path "$root/Cargo.toml" -p cargo-sim
sim=$CARGO_TARGET_DIR/debug/cargo-sim
# tonic's tests generate code with protoc: the vendored one of the
# workspace's dependencies (protoc-bin-vendored) when none is installed.
if [ -z "${PROTOC:-}" ] && ! command -v protoc > /dev/null; then
  cargo fetch --quiet --manifest-path "$root/Cargo.toml"
  PROTOC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/protoc-bin-vendored-linux-x86_64-*/bin/protoc 2>/dev/null | head -1)
  export PROTOC
fi

# A crate's repository at the tag of its version, for a package published
# without its tests.
clone() {
  local name=$1 version=$2 url=$3
  local override="SUITE_GIT_${name//-/_}"
  rm -rf "${work:?}/$name"
  mkdir -p "$work/$name"
  git -c advice.detachedHead=false clone --quiet --depth 1 --branch "v$version" "${!override:-$url}" "$work/$name/$name"
  local crate=$work/$name/$name
  grep -q '^\[workspace\]' "$crate/Cargo.toml" || printf '\n[workspace]\n' >> "$crate/Cargo.toml"
  rm -f "$crate/Cargo.lock"
}

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
  case "$args" in
    git=*)
      url=${args%% *}
      url=${url#git=}
      args=${args#git=* }
      [ "$args" = "git=$url" ] && args=
      clone "$name" "$version" "$url"
      ;;
    *) fetch "$name" "$version" ;;
  esac
  dir=$work/$name/$name
  # shellcheck disable=SC2086
  (cd "$dir" && cargo test --no-fail-fast --tests $args > "$work/$name.plain.log" 2>&1) || true
  read -r plain_passed plain_total < <(plain_counts "$work/$name.plain.log")
  # shellcheck disable=SC2086
  (cd "$dir" && "$sim" sim test --tests --seeds "$SEEDS" --keep-going --no-save --no-doc $args \
    > "$work/$name.sim.log" 2>&1) || true
  read -r sim_passed sim_total < <(sim_counts "$work/$name.sim.log" || echo "0 0")
  echo "| \`$name\` | $version | $sim_total | $plain_passed of $plain_total | $sim_passed of $sim_total |"
done
