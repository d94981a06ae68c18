#!/usr/bin/env bash
# The cost of --verify: the same write run with and without it, alternately, N pairs.
# Prints write MB/s, IOPS and the process's CPU time per written I/O (user + sys, from
# /proc via GNU time; with --verify it includes the final read-back, whose own speed is
# printed too). Usage: bench/verify_cost.sh [TARGET] [PAIRS]   (default /var/tmp/verify-cost.bin, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-/var/tmp/verify-cost.bin}
pairs=${2:-3}
bin=${DISKSCOPE_BIN:-target/release/diskscope}
[ -x "$bin" ] || cargo build --release -p agent
out=$(mktemp -d)
run() { # name, extra flags...
  local name=$1; shift
  /usr/bin/time -f '%U %S' -o "$out/t" "$bin" run --target "$target" --size 1G -q --json "$out/r.json" "$@" >/dev/null 2>&1 || true
  python3 - "$name" "$out/r.json" "$out/t" <<'PY'
import json, sys
name, rep, t = sys.argv[1:]
r = json.load(open(rep)); w = r["summary"]["write"]
u, s = map(float, open(t).read().split()[-2:])
v = r.get("analysis", {}).get("verify")
extra = f"  read-back {v['bytes_checked']/1e6/max(v['seconds'],1e-9):8.0f} MB/s {v['seconds']:.2f} s" if v else ""
print(f"{name:34s} {w['mb_s']:9.1f} MB/s {w['iops']:10.0f} IOPS {(u+s)/max(w['ios'],1)*1e6:8.2f} µs CPU/I/O{extra}")
PY
}
for p in $(seq "$pairs"); do
  # Random writes cover each block once when verified: the baseline does too (--cover-once).
  for shape in "--rw write --bs 1M --iodepth 8" "--rw randwrite --bs 4k --iodepth 32 --cover-once"; do
    # shellcheck disable=SC2086
    run "$shape" $shape --runtime 5s
    # shellcheck disable=SC2086
    run "$shape --verify" $shape --runtime 5s --verify
  done
done
rm -rf "$out"
