#!/usr/bin/env bash
# Seed sweeps, measured in one run: `cargo sim test --seeds` against the
# shell loop a user writes without it. Debug builds, as `cargo test` builds.
# Prints the table BENCHMARKS.md shows.
set -euo pipefail
cd "$(dirname "$0")/.."
# `cargo sim` as this checkout builds it (an installed one may be older).
cargo_sim() { cargo run --quiet --package cargo-sim -- sim "$@"; }

loop_seeds=${LOOP_SEEDS:-30}
sweep_seeds=${SWEEP_SEEDS:-1000}
kv_seeds=${KV_SEEDS:-100}

# Build everything first: no row includes compile time.
cargo_sim test -q -p sim-examples --test small --test jobs --test kv --no-run > /dev/null 2>&1

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }

start=$(now)
for seed in $(seq 1 "$loop_seeds"); do
    SIM_SEED=$seed cargo_sim test -q -p sim-examples --test small -- spawn_and_join --exact \
        > /dev/null 2>&1
done
end=$(now)
shell_loop=$(rate "$loop_seeds" "$start" "$end")

sweep() {
    local s e
    s=$(now)
    cargo_sim test -p sim-examples --seeds "$sweep_seeds" --no-doc --no-save "$@" > /dev/null 2>&1
    e=$(now)
    echo "$s $e"
}

# A real harness test (the replicated store under a swarm and a nemesis:
# three hosts, a client, two invariants checked after every event) with
# one job and with two: seeds/s, and the runner's own CPU per seed, which
# its closing line tells.
kv() {
    local s e log
    log=$(mktemp)
    s=$(now)
    cargo_sim test -p sim-examples --test kv --seeds "$kv_seeds" --no-doc --no-save --jobs "$1" \
        -- the_store_keeps_every_acknowledged_write_under_faults --exact > /dev/null 2> "$log"
    e=$(now)
    overhead=$(sed -n "s/.*the runner's own CPU [0-9.]*s, \([0-9]*\) µs a seed.*/\1/p" "$log")
    rm -f "$log"
    echo "$s $e ${overhead:-?}"
}

read -r s e < <(sweep --test small -- spawn_and_join --exact)
trivial=$(rate "$sweep_seeds" "$s" "$e")
trivial_s=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
read -r s e < <(sweep --test small)
four=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
four_rate=$(rate $((4 * sweep_seeds)) "$s" "$e")
read -r s e < <(sweep --test jobs)
jobs=$(rate "$sweep_seeds" "$s" "$e")
jobs_s=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')

read -r s e kv1_over < <(kv 1)
kv1=$(awk -v n="$kv_seeds" -v a="$s" -v b="$e" 'BEGIN { printf "%.1f", n / (b - a) }')
kv1_s=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
read -r s e kv2_over < <(kv 2)
kv2=$(awk -v n="$kv_seeds" -v a="$s" -v b="$e" 'BEGIN { printf "%.1f", n / (b - a) }')
kv2_s=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')
speedup=$(awk -v a="$kv1" -v b="$kv2" 'BEGIN { printf "%.2f", b / a }')

echo "| what | seeds | wall time | seeds/s |"
echo "| --- | --- | --- | --- |"
echo "| shell loop over \`SIM_SEED=\$s cargo sim test ... -- spawn_and_join --exact\` | $loop_seeds | - | $shell_loop |"
echo "| \`cargo sim test --seeds $sweep_seeds\`, one trivial test (\`spawn_and_join\`) | $sweep_seeds | ${trivial_s} s | $trivial |"
echo "| \`cargo sim test --seeds $sweep_seeds\`, four tests (\`tests/small.rs\`) | $((4 * sweep_seeds)) | ${four} s | $four_rate |"
echo "| \`cargo sim test --seeds $sweep_seeds\`, the jobs service (\`tests/jobs.rs\`) | $sweep_seeds | ${jobs_s} s | $jobs |"
echo "| \`cargo sim test --seeds $kv_seeds --jobs 1\`, the replicated store (\`tests/kv.rs\`, harness) | $kv_seeds | ${kv1_s} s | $kv1 |"
echo "| \`cargo sim test --seeds $kv_seeds --jobs 2\`, the same | $kv_seeds | ${kv2_s} s | $kv2 |"
echo
echo "The store's sweep with two jobs: ${speedup}x one job's seeds/s. The runner's own CPU (its bookkeeping, not the tests nor cargo): ${kv1_over} µs a seed with one job, ${kv2_over} µs with two."
