#!/usr/bin/env bash
# Branch runs per second, forked at their point (the fork server) against
# replayed from the start, on a test whose point is 90% of the way through
# its run (examples/tests/late_point.rs). Debug build, as `cargo test`
# builds. For each batch size in BRANCHES (8, 16 and 32: a sweep gives a
# process up to 16), each round runs that many branch runs both ways, interleaved:
# one process forking at the point (as `cargo sim test` gives a batch),
# and one process per branch run with SIM_BRANCH alone (a replay line).
# Prints the table BENCHMARKS.md shows.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo_sim() { cargo run --quiet --package cargo-sim -- sim "$@"; }

rounds=${ROUNDS:-5}
test=a_point_ninety_percent_through

cargo_sim test -q -p sim-examples --test late_point --no-run > /dev/null 2>&1
target=${CARGO_TARGET_DIR:-target}
binary=$(ls -t "$target"/sim/debug/deps/late_point-* | grep -v '\.' | head -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One process of the binary, as the runner starts one: its records in $1.
run() {
    local out=$1
    shift
    env SIM_SWEEP_OUT="$out" SIM_SWEEP_SEEDS=0x5 SIM_SWEEP_PARENT=$$ SIM_SEED=0x5 "$@" \
        "$binary" "$test" --exact --test-threads=1 > /dev/null 2>&1
}

# The point's location, from a plain run's records.
run "$work/plain"
location=$(awk -F'\t' '$1 == "declare" { print $3; exit }' "$work/plain")
now() { date +%s.%N; }

# Rounds of `branches` branch runs both ways: one table row.
measure() {
    local branches=$1 start end runs salts=() forked_rates=() replayed_rates=()
    for i in $(seq 1 "$branches"); do salts+=("$(printf '0x%x' $((i * 7919)))"); done
    local others
    others=$(IFS=,; echo "${salts[*]:1}")
    for round in $(seq 1 "$rounds"); do
        start=$(now)
        run "$work/forked" SIM_BRANCH="${salts[0]}@1@$location" SIM_BRANCH_FORK="$others"
        end=$(now)
        runs=$(grep -c '^run' "$work/forked")
        [ "$runs" = "$branches" ] || { echo "forked: $runs runs, not $branches" >&2; exit 1; }
        grep -q '^branch-ended' "$work/forked" || { echo "the process did not fork" >&2; exit 1; }
        rm -f "$work/forked"
        forked_rates+=("$(awk -v n="$branches" -v a="$start" -v b="$end" 'BEGIN { print n / (b - a) }')")
        start=$(now)
        for salt in "${salts[@]}"; do
            run "$work/replayed" SIM_BRANCH="$salt@1@$location"
        done
        end=$(now)
        rm -f "$work/replayed"
        replayed_rates+=("$(awk -v n="$branches" -v a="$start" -v b="$end" 'BEGIN { print n / (b - a) }')")
    done
    echo "| $branches from one point, $rounds rounds | $(stats "${forked_rates[@]}") | $(stats "${replayed_rates[@]}") | $(ratio "${forked_rates[*]}" "${replayed_rates[*]}") |"
}

# Median, and the spread (min-max), of a list of numbers.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f (%.0f-%.0f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
# The per-round ratios of two lists (space-separated), as stats shows them.
ratio() {
    paste <(printf '%s\n' $1) <(printf '%s\n' $2) |
        awk '{ print $1 / $2 }' | sort -g |
        awk '{ v[NR] = $1 } END { printf "%.1fx (%.1f-%.1fx)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

echo "| branch runs | forked at the point: runs/s | replayed from the start: runs/s | speed-up |"
echo "| ---: | ---: | ---: | ---: |"
for branches in ${BRANCHES:-8 16 32}; do
    measure "$branches"
done
