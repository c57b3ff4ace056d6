#!/usr/bin/env bash
# Ours against real tokio, turmoil and madsim on the same workloads
# (BENCHMARKS.md, "Peers"). Each system's binary runs each workload as a
# whole process; every figure is that process's own CPU time (user + sys,
# read with wait4) and, for ours, its peak resident set. The first table gives each system's
# median over ROUNDS runs (default 5; 3 for the heartbeat; the rounds
# interleave the systems) and its time
# divided by ours (above 1: slower than ours); the others give ours at
# scale and its memory. The peers build here only, never in the README's
# test command.
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

echo "== running ($(date -u +%Y-%m-%d), $(nproc) cores, $(rustc --version)) ==" >&2
python3 - "$rounds" \
  "ours=bench-peers/tokio-api/target/sim/release/bench-peers-tokio-api" \
  "tokio=target/peers-tokio/release/bench-peers-tokio-api" \
  "turmoil=target/peers-turmoil/release/bench-peers-turmoil" \
  "madsim=target/peers-madsim/release/bench-peers-madsim" <<'PY'
import os, signal, statistics, sys, tempfile, time
rounds = int(sys.argv[1])
systems = dict(a.split("=", 1) for a in sys.argv[2:])
names = list(systems)
# A run that takes longer than this is stopped and reported as "> limit".
LIMIT_S = 120

def run(name, args, limit_s=LIMIT_S, links="same"):
    """One whole-process run: (cpu seconds, peak KB, stdout, wall seconds),
    or None when it passed the limit."""
    env = dict(os.environ, RUST_BACKTRACE="0", SIM_SEED="1", BENCH_LINKS=links)
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        actions = [(os.POSIX_SPAWN_DUP2, out_file.fileno(), 1),
                   (os.POSIX_SPAWN_DUP2, err_file.fileno(), 2)]
        pid = os.posix_spawn(systems[name], [systems[name], *args], env,
                             file_actions=actions)
        start = time.monotonic()
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() - start > limit_s:
                os.kill(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                return None
            time.sleep(0.001)
        wall = time.monotonic() - start
        out_file.seek(0)
        out = out_file.read().decode().strip()
        err_file.seek(0)
        err = err_file.read().decode()
    # Ours reports its own peak resident set ("bench: peak N kB", read from
    # /proc/self/status): wait4's figure would start at this Python
    # process's size, which the child shares until it execs.
    peak = [l.split()[2] for l in err.splitlines() if l.startswith("bench: peak ")]
    if peak:
        usage_kb = int(peak[-1])
    else:
        usage_kb = usage.ru_maxrss
    assert os.waitstatus_to_exitcode(status) == 0, f"{name} {args} failed: {out}"
    return usage.ru_utime + usage.ru_stime, usage_kb, out, wall

def ms(seconds):
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"

# (arguments, label, systems that run it, rounds)
workloads = [
    (["spawn"], "spawn + join 100k tasks", names, rounds),
    (["spawn-mt"], "spawn + join 100k tasks, multi_thread, 4 workers (tokio: 4 threads)",
     ["ours", "tokio"], rounds),
    (["sleeps"], "100k sleeps, random 0-999 ms", names, rounds),
    (["echo"], "100k TCP echo round trips, 0-1 ms links (tokio: loopback)", names, rounds),
    (["echo-seg"], "20k TCP echo round trips of 4 KiB (3 segments each way), 0-1 ms links",
     names, rounds),
    (["cluster", "10"], "5 hosts, 400 req/s over TCP, 10 simulated min", ["ours", "turmoil", "madsim"], rounds),
    (["heartbeat", "1000", "60"], "1,000 hosts, UDP heartbeats to 3 peers every 100 ms, 1 simulated min",
     ["ours", "turmoil", "madsim"], min(rounds, 3)),
]
print("| workload | " + " | ".join(names) + " | " +
      " | ".join(f"{n} / ours" for n in names[1:]) + " | ours, wall |")
print("| --- |" + " ---: |" * (2 * len(names)))
for args, label, who, n in workloads:
    # Rounds interleave the systems, so a change in the machine's load
    # falls on all of them alike.
    times = {name: [] for name in who}
    walls = []
    answers = {}
    for _ in range(n):
        for name in who:
            if times[name] is None:
                continue
            result = run(name, args)
            if result is None:
                times[name] = None
                continue
            times[name].append(result[0])
            answers.setdefault(name, result[2])
            if name == "ours":
                walls.append(result[3])
    medians = {name: statistics.median(t) if t else None for name, t in times.items()}
    assert len(set(answers.values())) == 1, f"{args}: the systems disagree: {answers}"
    ours = medians["ours"]
    cells, ratios = [], []
    for name in names:
        if name not in medians:
            cells.append("-")
        elif medians[name] is None:
            cells.append(f"> {LIMIT_S} s")
        else:
            cells.append(ms(medians[name]))
    for name in names[1:]:
        if name not in medians:
            ratios.append("-")
        elif medians[name] is None:
            ratios.append(f"> {LIMIT_S / ours:.0f}")
        else:
            ratios.append(f"{medians[name] / ours:.2f}")
    print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) +
          f" | {ms(statistics.median(walls))} |", flush=True)

print()
print("Each simulator with its own default link latency (ours 0-1 ms, turmoil 0-100 ms,")
print("madsim 1-10 ms), median CPU of 3 runs:")
print()
print("| workload | ours | turmoil | madsim | turmoil / ours | madsim / ours |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for args, label, _, _ in [w for w in workloads if w[0][0] in ("echo", "cluster", "heartbeat")]:
    cpu = {}
    answers = {}
    for name in ["ours", "turmoil", "madsim"]:
        times = []
        for _ in range(min(rounds, 3)):
            result = run(name, args, limit_s=60, links="default")
            if result is None:
                times = None
                break
            times.append(result[0])
            answers.setdefault(name, result[2])
        cpu[name] = statistics.median(times) if times else None
    assert len(set(answers.values())) == 1, f"{args}: the systems disagree: {answers}"
    cells = [ms(cpu[n]) if cpu[n] is not None else "> 60 s" for n in ["ours", "turmoil", "madsim"]]
    ratios = [f"{cpu[n] / cpu['ours']:.2f}" if cpu[n] is not None else f"> {60 / cpu['ours']:.0f}"
              for n in ["turmoil", "madsim"]]
    label = label.replace(", 0-1 ms links (tokio: loopback)", "")
    print(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |", flush=True)

print()
print("Heartbeats, 1 simulated minute, one run each (CPU per delivered datagram):")
print()
print("| hosts | datagrams | ours | ours, wall | ours per datagram | madsim | madsim per datagram |")
print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
first = None
for hosts in ["10", "100", "1000", "10000"]:
    cpu, _, out, wall = run("ours", ["heartbeat", hosts, "60"], limit_s=600)
    datagrams = int(out.split()[-1])
    per = cpu / datagrams * 1e9
    first = first or per
    cells = [hosts, f"{datagrams:,}", ms(cpu), ms(wall), f"{per:.0f} ns ({per / first:.2f}x)"]
    if int(hosts) <= 1000:
        m_cpu, _, _, _ = run("madsim", ["heartbeat", hosts, "60"])
        cells += [ms(m_cpu), f"{m_cpu / datagrams * 1e9:.0f} ns"]
    else:
        cells += ["-", "-"]
    print("| " + " | ".join(cells) + " |", flush=True)

print()
cpu, _, _, wall = run("ours", ["heartbeat", "1000", "600"], limit_s=600)
print(f"1,000 hosts, 10 simulated minutes (ours, one run): {ms(cpu)} CPU, {ms(wall)} wall")
print()
print("Memory (ours, peak resident set of the whole process, one run each):")
print()
print("| run | peak | per unit |")
print("| --- | ---: | ---: |")
_, base, _, _ = run("ours", ["hosts", "1"])
_, hosts_kb, _, _ = run("ours", ["hosts", "10000"])
print(f"| 1 host | {base / 1024:.1f} MB | |")
print(f"| 10,000 hosts, a UDP socket and a task each | {hosts_kb / 1024:.1f} MB | "
      f"{(hosts_kb - base) / 10000 * 1024:.0f} bytes per host |")
_, one_kb, _, _ = run("ours", ["conns", "1"])
_, conns_kb, _, _ = run("ours", ["conns", "10000"])
print(f"| 10,000 open TCP connections, a task on each side | {conns_kb / 1024:.1f} MB | "
      f"{(conns_kb - one_kb) / 10000 * 1024:.0f} bytes per connection |")
for minutes, events in [("10", "4M"), ("250", "99M")]:
    _, kb, _, _ = run("ours", ["cluster", minutes], limit_s=600)
    print(f"| the 5-host cluster, {minutes} simulated min ({events} events) | {kb / 1024:.1f} MB | |")
PY
