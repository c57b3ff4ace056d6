#!/usr/bin/env bash
# Ours against real tokio, turmoil and madsim on the same workloads
# (BENCHMARKS.md, "Peers"): each system's binary runs each workload as a
# whole process, 5 times; the table gives the median CPU time (user + sys)
# and each system's time divided by ours (above 1: slower than ours).
# The peers build here only, never in the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=${ROUNDS:-5}

echo "== building (release) ==" >&2
cargo build -q -p cargo-sim
(cd bench-peers/tokio-api && CARGO_TARGET_DIR="$root/target/peers-tokio" cargo build -q --release)
(cd bench-peers/tokio-api && "$root/target/debug/cargo-sim" sim build -q --release)
(cd bench-peers/turmoil && CARGO_TARGET_DIR="$root/target/peers-turmoil" cargo build -q --release)
(cd bench-peers/madsim && RUSTFLAGS="--cfg madsim" CARGO_TARGET_DIR="$root/target/peers-madsim" cargo build -q --release)

python3 - "$rounds" \
  "ours=bench-peers/tokio-api/target/sim/release/bench-peers-tokio-api" \
  "tokio=target/peers-tokio/release/bench-peers-tokio-api" \
  "turmoil=target/peers-turmoil/release/bench-peers-turmoil" \
  "madsim=target/peers-madsim/release/bench-peers-madsim" <<'PY'
import os, resource, subprocess, sys, statistics
rounds = int(sys.argv[1])
systems = [a.split("=", 1) for a in sys.argv[2:]]
# (argument, label, whether real tokio runs it: the cluster would take it
# 10 real minutes)
workloads = [("spawn", "spawn + join 100k tasks", True),
             ("sleeps", "100k sleeps, random 0-999 ms", True),
             ("echo", "100k TCP echo round trips, 0-1 ms links (tokio: loopback)", True),
             ("cluster", "5 hosts, 400 req/s over TCP, 10 simulated min", False)]

def cpu_of(binary, workload):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([binary, workload], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, out.stdout.strip()

print("| workload | " + " | ".join(name for name, _ in systems) + " | " +
      " | ".join(f"{name} / ours" for name, _ in systems[1:]) + " |")
print("| --- |" + " ---: |" * (2 * len(systems) - 1))
for workload, label, on_tokio in workloads:
    medians, results = {}, {}
    for name, binary in systems:
        if name == "tokio" and not on_tokio:
            continue
        times = []
        for _ in range(rounds):
            cpu, result = cpu_of(binary, workload)
            times.append(cpu)
            results.setdefault(name, result)
        medians[name] = statistics.median(times)
    answers = set(results.values())
    assert len(answers) == 1, f"{workload}: the systems disagree: {results}"
    ours = medians["ours"]
    cells = [f"{medians[n] * 1000:.0f} ms" if n in medians else "-" for n, _ in systems]
    ratios = [f"{medians[n] / ours:.2f}" if n in medians else "-" for n, _ in systems[1:]]
    print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
PY
