#!/usr/bin/env bash
# The whole performance benchmark in one invocation, then docs/benchmarks.md:
#   case 1+2  bench/vs_fio.py              diskscope and fio alternately (null, file, loop)
#   case 3    tests/tests/suite/pipeline_bench.rs the live pipeline (20 WebSocket clients, SQLite)
#             and agent memory at the end of a long run
#   case 4    bench/dashboard.sh           bundle size, first chart, redraw (headless Chromium)
#   case 5    bench/vs_fio.py --presets    every step of cdm, cdm-peak, atto and orion-matrix
#             against fio with the same parameters and buffer memory
#   case 6    tests/tests/suite/long_run_bench.rs long runs at flat memory: a 30-minute
#             served run with 20 clients and the CLI beside it, two synthetic 24-hour histories
#   case 7    bench/fio_corpus.py          fio's example job files, by fio and by diskscope
#   case 8    bench/overhead.py            the overhead table: io_uring's features one by one on a
#             ring of no-ops and on zram, diskscope and fio (`--only overhead` or `--only 8`)
#   case 9    bench/files.py               small files: the files preset against fio's
#             filecreate/filestat/filedelete on tmpfs and ext4 (`--only files` or `--only 9`)
#   case 10   bench/probe.py               the probe against ioping; the idle sweep on emulated
#             drives with drawn power states (`--only probe` or `--only 10`)
# Cases 2 and 5 run on zram (the reference), the file and a loop device (informational).
# Raw measurements go to bench/out/*.json; bench/report.py writes the document.
#
# Usage: bench/run.sh [--quick] [--pairs N] [--runtime SECS] [--rss-secs SECS] [--long-secs SECS]
#                     [--only 1,2,3,4,5,6,7,8,9,10|overhead|files|probe]
#   --quick: 3 pairs of 2 s, a 60 s memory run (a smoke run, not figures to publish)
#   defaults: 5 pairs of 5 s per case, a 600 s (10-minute) memory run; about 40 minutes,
#   and case 5 with 5 pairs of 1 s per step (184 steps × 3 runs × 5 pairs; about 60 minutes),
#   case 6 with a 1800 s run (about 35 minutes).
# Needs root for the loop device cases, fio, and for case 4 chromium + npm.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=5 runtime=5 rss=600 only=1,2,3,4,5,6,7,8,9 preset_pairs=5 long=1800 overhead_pairs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) pairs=3 runtime=2 rss=60 preset_pairs=1 long=60 overhead_pairs=1 ;;
    --long-secs) long=$2; shift ;;
    --pairs) pairs=$2; shift ;;
    --runtime) runtime=$2; shift ;;
    --rss-secs) rss=$2; shift ;;
    --only) only=$2; shift ;;
    *) echo "bench/run.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
has() { [[ ",$only," == *",$1,"* ]]; }
mkdir -p bench/out
cargo build --release --quiet -p agent --bin diskscope
export DISKSCOPE_BIN=$PWD/target/release/diskscope

if has 1 || has 2; then
  cases=""
  if has 1 && ! has 2; then cases=null; fi
  if has 2 && ! has 1; then cases="4K,1M"; fi
  echo "== cases 1 and 2: diskscope vs fio ($pairs pairs of ${runtime} s)" >&2
  python3 bench/vs_fio.py --pairs "$pairs" --runtime "$runtime" --cases "$cases" \
    --out bench/out/engine.json
fi
if has 3; then
  echo "== case 3: live pipeline ($pairs triples of ${runtime} s, ${rss} s memory run)" >&2
  DISKSCOPE_BENCH_PAIRS=$pairs DISKSCOPE_BENCH_RUN_SECS=$runtime DISKSCOPE_BENCH_RSS_SECS=$rss \
    DISKSCOPE_BENCH_OUT=$PWD/bench/out/pipeline.json \
    cargo test --release --quiet -p tests --test suite pipeline_bench -- --ignored --nocapture
fi
if has 4; then
  echo "== case 4: dashboard" >&2
  bash bench/dashboard.sh
fi
if has 5; then
  echo "== case 5: every preset step vs fio ($preset_pairs pairs of 1 s per step)" >&2
  python3 bench/vs_fio.py --presets cdm,cdm-peak,atto,orion-matrix --pairs "$preset_pairs" \
    --runtime 1 --out bench/out/presets.json
fi
if has 6; then
  echo "== case 6: long runs at flat memory (${long} s run, 24-hour histories)" >&2
  ./scripts/build-frontend.sh >/dev/null 2>&1
  cargo build --release --quiet -p agent --bin diskscope
  (cd tests/e2e && [ -d node_modules/playwright-core ] || npm ci --silent)
  command -v /usr/bin/time >/dev/null || apt-get install -y -qq time >/dev/null
  DISKSCOPE_BENCH_LONG_SECS=$long DISKSCOPE_BENCH_OUT=$PWD/bench/out/long.json \
    cargo test --release --quiet -p tests --test suite long_run_bench -- --ignored --nocapture
  python3 - bench/out/long.json <<'PY'
import json, sys, time
p = sys.argv[1]; r = json.load(open(p)); r["generated"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
json.dump(r, open(p, "w"), indent=2)
PY
fi
if has 7; then
  echo "== case 7: fio's example job files ($pairs pairs of 2 s per job)" >&2
  python3 bench/fio_corpus.py --pairs "$pairs" --runtime 2 --out bench/out/corpus.json
fi
if has 9 || has files; then
  echo "== case 9: small files against fio's metadata engines ($pairs pairs)" >&2
  python3 bench/files.py --pairs "$pairs" --out bench/out/files.json
fi
if has 10 || has probe; then
  echo "== case 10: the probe against ioping, the idle sweep on emulated drives ($pairs pairs)" >&2
  python3 bench/probe.py --pairs "$pairs" --out bench/out/probe.json
fi
if has 8 || has overhead; then
  echo "== case 8: the overhead table ($overhead_pairs pairs of 2 s per cell)" >&2
  python3 bench/overhead.py --pairs "$overhead_pairs" --runtime 2 --out bench/out/overhead.json
fi
python3 bench/report.py
