#!/usr/bin/env bash
# Dashboard benchmark: builds the release agent with the dashboard, starts it on a scratch
# folder, starts a run, and measures in headless Chromium (bench/dashboard.mjs); writes
# bench/out/dashboard.json for bench/report.py.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$(mktemp -d /var/tmp/diskscope-bench.XXXXXX)
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
# The bundle's size is the served bundle's; the measurements need the benchmark's export.
./scripts/build-frontend.sh >/dev/null 2>&1
cp -r static/pkg "$data/served-pkg"
DISKSCOPE_FRONTEND_FEATURES=bench ./scripts/build-frontend.sh >/dev/null 2>&1
cargo build --release -p agent --quiet
(cd tests/e2e && [ -d node_modules/playwright-core ] || npm ci --silent)
DISKSCOPE_OPERATOR_TOKEN=bench-operator-token DISKSCOPE_VIEWER_TOKEN=bench-viewer-token \
  target/release/diskscope serve --listen 127.0.0.1:7988 --data-dir "$data" >"$data/serve.log" 2>&1 &
pid=$!
for _ in $(seq 50); do curl -fs http://127.0.0.1:7988/api/v1/health >/dev/null && break; sleep 0.2; done
scratch=$(curl -fs -H 'Authorization: Bearer bench-operator-token' http://127.0.0.1:7988/api/v1/targets |
  python3 -c 'import json,sys; print(next(t["path"] for t in json.load(sys.stdin) if t["scratch"]))')
curl -fs -H 'Authorization: Bearer bench-operator-token' -H 'Content-Type: application/json' \
  -d "{\"target\": \"$scratch\", \"spec\": {\"rw\": \"randread\", \"bs\": 4096, \"iodepth\": 4, \"runtime_ms\": 120000, \"interval_ms\": 200}}" \
  http://127.0.0.1:7988/api/v1/runs >/dev/null
sleep 1
mkdir -p bench/out
node bench/dashboard.mjs http://127.0.0.1:7988 bench-viewer-token >"$data/result.json"
# Add the bundle's sizes (raw and gzipped at level 9) for bench/report.py.
python3 - "$data/result.json" bench/out/dashboard.json "$data/served-pkg" <<'PY'
import gzip, json, platform, os, sys, time
r = json.load(open(sys.argv[1]))
for name in ("frontend_bg.wasm", "frontend.js"):
    b = open(os.path.join(sys.argv[3], name), "rb").read()
    r.setdefault("bundle", {})[name] = dict(bytes=len(b), gzip=len(gzip.compress(b, 9)))
r.update(generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), host=platform.node(),
         cpus=os.cpu_count())
json.dump(r, open(sys.argv[2], "w"), indent=1)
print(json.dumps(r, indent=1))
PY
# Leave the served bundle in place (and the agent built with it).
./scripts/build-frontend.sh >/dev/null 2>&1
cargo build --release -p agent --quiet
