#!/usr/bin/env bash
# Dashboard benchmark: builds the release agent with the dashboard, starts it on a scratch
# folder, starts a run, and measures in headless Chromium (bench/dashboard.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build-frontend.sh >/dev/null 2>&1
cargo build --release -p agent --quiet
(cd tests/e2e && [ -d node_modules/playwright-core ] || npm ci --silent)
data=$(mktemp -d /var/tmp/diskscope-bench.XXXXXX)
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
DISKSCOPE_OPERATOR_TOKEN=bench-op DISKSCOPE_VIEWER_TOKEN=bench-view \
  target/release/diskscope serve --listen 127.0.0.1:7988 --data-dir "$data" >"$data/serve.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -fs http://127.0.0.1:7988/api/v1/health >/dev/null && break; sleep 0.2; done
scratch=$(curl -fs -H 'Authorization: Bearer bench-op' http://127.0.0.1:7988/api/v1/targets |
  python3 -c 'import json,sys; print(next(t["path"] for t in json.load(sys.stdin) if t["scratch"]))')
curl -fs -H 'Authorization: Bearer bench-op' -H 'Content-Type: application/json' \
  -d "{\"target\": \"$scratch\", \"spec\": {\"rw\": \"randread\", \"bs\": 4096, \"iodepth\": 4, \"runtime_ms\": 120000, \"interval_ms\": 200}}" \
  http://127.0.0.1:7988/api/v1/runs >/dev/null
sleep 1
node bench/dashboard.mjs http://127.0.0.1:7988 bench-view | tee "$data/result.json"
python3 bench/dashboard_doc.py "$data/result.json" docs/benchmarks.md
