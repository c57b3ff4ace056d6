#!/usr/bin/env bash
# tokio's own tests/, unmodified, against real tokio and against the
# facade, with a table per file.
#
# The tests are those of tokio's package on crates.io (default 1.53.1;
# TOKIO_VERSION=x.y.z for another), set in a crate of their own whose
# features are tokio's (so `#![cfg(feature = "full")]` holds) and whose
# dev-dependencies are tokio's. Real tokio runs them with nextest, each
# test in a process of its own, as tokio's CI does; the simulator with
# `cargo sim test --seeds 2` (a test passes when both seeds do). A test
# counts as applicable when it passes on real tokio here (a test for
# another platform, io-uring or tokio_unstable is not compiled in).
#
#   bash scripts/tokio-suite.sh                 # every file
#   bash scripts/tokio-suite.sh sync_mpsc rt_common   # some files
#   SKIP_PLAIN=1 bash scripts/tokio-suite.sh  # the facade again, real tokio's results kept
#
# It needs crates.io, takes about half an hour on two cores, and is not
# part of the test command. Output: the table on stdout; logs and JUnit
# files in $TOKIO_SUITE_DIR (default target/tokio-suite).
set -euo pipefail

version=${TOKIO_VERSION:-1.53.1}
seeds=${SEEDS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${TOKIO_SUITE_DIR:-$root/target/tokio-suite}
mkdir -p "$work"
export CARGO_TARGET_DIR=$work/target
cargo build --quiet --manifest-path "$root/Cargo.toml" -p cargo-sim
sim=$CARGO_TARGET_DIR/debug/cargo-sim
if ! cargo nextest --version > /dev/null 2>&1; then
  cargo install --quiet --locked cargo-nextest
fi

# tokio's published package, by way of cargo's own download.
probe=$work/fetch
mkdir -p "$probe/src"
: > "$probe/src/lib.rs"
printf '[package]\nname = "fetch-probe"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\ntokio = "=%s"\n\n[workspace]\n' \
  "$version" > "$probe/Cargo.toml"
cargo fetch --quiet --manifest-path "$probe/Cargo.toml"
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"tokio-$version" | head -1)

crate=$work/tokio-tests
rm -rf "$crate"
mkdir -p "$crate/src" "$crate/.config"
: > "$crate/src/lib.rs"
cp -r "$src/tests" "$crate/tests"
if [ "$#" -gt 0 ]; then
  # Only the files named (and the support modules they share).
  keep=" $* "
  for file in "$crate"/tests/*.rs; do
    name=$(basename "$file" .rs)
    case "$keep" in *" $name "*) ;; *) rm "$file" ;; esac
  done
fi
# The crate's manifest: tokio's features (so its tests' cfg(feature = ...)
# hold as in tokio's own package; io-uring and taskdump stay off, as in
# tokio's default CI), tokio itself ("1": the simulation build's patch puts
# the facade, 1.999, in; the plain build is pinned to $version below), and
# tokio's dependencies and dev-dependencies for Linux without
# tokio_unstable or loom (its tests use bytes, socket2, libc...).
python3 - "$src/Cargo.toml" "$crate/Cargo.toml" <<'PY'
import sys, tomllib, json

def toml_value(v):
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    return json.dumps(v)

manifest = tomllib.load(open(sys.argv[1], "rb"))
# tokio's tests use its own dependencies too (bytes, socket2, libc).
deps = dict(manifest.get("dependencies", {}))
deps.update(manifest.get("dev-dependencies", {}))
# A target table applies on Linux, without tokio_unstable, loom or wasm.
def applies(cfg):
    cfg = cfg.replace(" ", "")
    off = ("tokio_unstable", "loom", "windows", "freebsd", "emscripten")
    if cfg == "cfg(unix)":
        return True
    if cfg.startswith("cfg(not(") and "wasm" in cfg and not any(o in cfg for o in off):
        return True
    return False
for cfg, table in manifest.get("target", {}).items():
    if applies(cfg) or cfg.replace(" ", "").startswith("cfg(any(not(target_family=\"wasm\")"):
        deps.update(table.get("dependencies", {}))
        deps.update(table.get("dev-dependencies", {}))
features = {k: [] for k in manifest.get("features", {})}
features["default"] = ["full", "test-util"]
full = [f for f in manifest["features"].get("full", []) if f in features]
features["full"] = full
lines = ['[package]', 'name = "tokio-tests"', 'version = "0.0.0"', 'edition = "2021"', 'publish = false']
# Tokio's links: a test reads its package's manifest and looks for its
# homepage (rt_handle_block_on's basic_fs).
for key in ("homepage", "repository"):
    if key in manifest.get("package", {}):
        lines.append(f'{key} = {json.dumps(manifest["package"][key])}')
lines += ['', '[features]']
for name, enables in features.items():
    lines.append(f'"{name}" = {json.dumps(enables)}')
lines += ['', '[dependencies]', 'tokio = { version = "1", features = ["full", "test-util"] }', '',
          '[dev-dependencies]']
for name, spec in sorted(deps.items()):
    if isinstance(spec, dict):
        spec = {k: v for k, v in spec.items() if k in ("version", "features", "default-features")}
        # Features of tokio's own (mio's os-poll) stay; what names another
        # optional dependency of tokio's does not.
        spec["features"] = [f for f in spec.get("features", []) if "/" not in f and not f.startswith("dep:")]
    lines.append(f'{name} = {toml_value(spec)}')
lines += ['', '[lints.rust]', 'unexpected_cfgs = "allow"', '', '[workspace]', '']
open(sys.argv[2], "w").write("\n".join(lines))
PY
cat > "$crate/.config/nextest.toml" <<'EOF'
[profile.suite]
fail-fast = false
slow-timeout = { period = "60s", terminate-after = 2 }
[profile.suite.junit]
path = "junit.xml"
EOF
(cd "$crate" && cargo generate-lockfile --quiet && cargo update --quiet -p tokio --precise "$version")

if [ "${SKIP_PLAIN:-}" = 1 ] && [ -s "$work/plain.xml" ]; then
  echo "== real tokio $version: the last run's results (SKIP_PLAIN=1) ==" >&2
else
  echo "== real tokio $version: cargo nextest run ==" >&2
  (cd "$crate" && cargo nextest run --target-dir "$CARGO_TARGET_DIR" --profile suite --no-fail-fast \
    > "$work/plain.log" 2>&1) || true
  # nextest writes its JUnit file under the target dir, or (as the
  # version at hand does) under the crate's own target/.
  cp "$CARGO_TARGET_DIR/nextest/suite/junit.xml" "$work/plain.xml" 2>/dev/null ||
    cp "$crate/target/nextest/suite/junit.xml" "$work/plain.xml" 2>/dev/null ||
    : > "$work/plain.xml"
fi

echo "== the facade: cargo sim test --seeds $seeds ==" >&2
# A run that blocks a real thread for 30 s is a hang (the default, 5
# minutes, is for a service's own long tests).
(cd "$crate" && SIM_HANG_RUN_S=${SIM_HANG_RUN_S:-30} "$sim" sim test --seeds "$seeds" --keep-going \
  --no-save --no-doc --junit "$work/sim.xml" > "$work/sim.log" 2>&1) || true

python3 - "$work/plain.xml" "$work/sim.xml" "$version" "$seeds" <<'PY'
import sys, xml.etree.ElementTree as ET
from collections import defaultdict

def results(path, binary_of):
    """{(file, test): passed} from a JUnit file."""
    out = {}
    try:
        tree = ET.parse(path)
    except Exception:
        return out
    for suite in tree.iter("testsuite"):
        for case in suite.iter("testcase"):
            failed = any(c.tag in ("failure", "error") for c in case)
            out[(binary_of(suite, case), case.get("name"))] = not failed
    return out

def nextest_file(suite, case):
    # nextest: the suite is "tokio-tests::<binary>".
    return suite.get("name").split("::")[-1].split("/")[-1]

def sim_file(suite, case):
    # cargo sim: the test case's classname names its binary.
    name = case.get("classname") or suite.get("name")
    return name.split("::")[-1].split("--test ")[-1].split(" ")[0]

plain = results(sys.argv[1], nextest_file)
sim = results(sys.argv[2], sim_file)
version, seeds = sys.argv[3], sys.argv[4]
files = defaultdict(lambda: [0, 0, 0])
for (file, test), passed in plain.items():
    row = files[file]
    row[0] += 1
    if passed:
        row[1] += 1
        if sim.get((file, test)):
            row[2] += 1
print(f"| tokio {version} tests/ file | tests | real tokio | simulator, {seeds} seeds |")
print("| --- | ---: | ---: | ---: |")
for file in sorted(files):
    tests, real, simulated = files[file]
    print(f"| `{file}.rs` | {tests} | {real} | {simulated} |")
tests = sum(r[0] for r in files.values())
real = sum(r[1] for r in files.values())
simulated = sum(r[2] for r in files.values())
share = 100.0 * simulated / real if real else 0.0
print(f"| all | {tests} | {real} | {simulated} ({share:.1f}% of the applicable) |")
PY
