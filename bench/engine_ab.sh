#!/usr/bin/env bash
# Engine overhead A/B: two diskscope binaries (e.g. built from two commits) on the null
# backend, randread 4k QD32 for 3 s, in N alternated pairs (default 6). Prints each pair's
# IOPS per job-thread CPU-second and the median ratio B/A: the job loop's cost per I/O
# without a device. Usage: bench/engine_ab.sh BIN_A BIN_B [PAIRS]
set -euo pipefail
a=$1 b=$2 n=${3:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
  "$1" run --backend null --target none --rw randread --bs 4k --iodepth 32 --runtime 3s \
    -q --json "$2" >/dev/null
}
for i in $(seq 1 "$n"); do
  if (( i % 2 )); then run "$a" "$tmp/a.json"; run "$b" "$tmp/b.json"
  else run "$b" "$tmp/b.json"; run "$a" "$tmp/a.json"; fi
  python3 - "$tmp/a.json" "$tmp/b.json" <<'PY' | tee -a "$tmp/pairs"
import json, sys
def per_cpu_second(path):
    r = json.load(open(path))
    cpu = [s["job_cpu_pct"] for s in r["samples"] if s.get("job_cpu_pct")]
    return r["summary"]["read"]["iops"] / (sum(cpu) / len(cpu) / 100)
a, b = per_cpu_second(sys.argv[1]), per_cpu_second(sys.argv[2])
print(f"{a:.0f} {b:.0f} {b / a:.3f}")
PY
done
python3 - "$tmp/pairs" <<'PY'
import statistics, sys
r = [float(l.split()[2]) for l in open(sys.argv[1])]
print(f"B/A median {statistics.median(r):.3f} (range {min(r):.3f}-{max(r):.3f}) over {len(r)} pairs")
PY
