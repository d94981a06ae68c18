#!/usr/bin/env bash
# Runs every check and test: formatting, clippy and rustdoc (warnings are errors), unit tests and
# the integration suite (tests/tests/suite: the real binary on real files, loop devices and a
# loop-mounted ext4 when root, FUSE-emulated drives, fio, Prometheus, the real server with
# WebSocket clients, and the dashboard in headless Chromium).
#
# A test that cannot run here says `SKIP <test> [<capability>]: <reason>`; the summary at the end
# counts them by capability. DISKSCOPE_STRICT=1 (set by .ci/run) turns every skip into a failure
# unless its capability is on DISKSCOPE_SKIP_ALLOW (default: dm-error, which these machines'
# kernels lack).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
started=$(date +%s)
stamp() { echo "test.sh: $1 at $(($(date +%s) - started)) s" >&2; }

# The dashboard's bundle and playwright-core (for the browser tests) build beside the native
# build: the two compilers leave each other's idle core busy.
frontend_log=$(mktemp)
(
  ok=0
  ./scripts/build-frontend.sh || ok=1
  if command -v npm >/dev/null 2>&1; then
    (cd tests/e2e && npm ci --no-audit --no-fund >/dev/null) ||
      echo "test.sh: playwright-core could not be installed" >&2
  fi
  exit $ok
) >"$frontend_log" 2>&1 &
frontend=$!

cargo fmt --all -- --check
# One build serves clippy and the tests: clippy-driver compiles the workspace's crates (lints
# and code), so nothing is compiled twice. RUSTFLAGS' -D warnings reaches the workspace only
# (dependencies' lints are capped).
clippy_driver="$(dirname "$(rustup which cargo 2>/dev/null || command -v cargo)")/clippy-driver"
if [ ! -x "$clippy_driver" ]; then
  echo "test.sh: no clippy-driver beside cargo ($clippy_driver): install clippy (rustup component add clippy)" >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export RUSTFLAGS="${RUSTFLAGS:-} -D warnings"
# The test executables, each with its package's folder (cargo runs a test there): the phases
# below run them directly, so that rustdoc's cargo (which holds the build folder's lock for
# as long as it runs) never makes them wait. No crate has doctests (doctest = false).
executables=$(mktemp)
cargo test --locked --workspace --no-run --message-format=json-render-diagnostics |
  python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])
' >"$executables"
if [ ! -s "$executables" ]; then
  echo "test.sh: Cargo's build listed no test executable: nothing would be tested" >&2
  exit 1
fi
stamp "built (clippy clean)"

# Doc links stay true (tests/tests/suite/docs.rs checks ARCHITECTURE.md's map and docs/api.md).
# rustdoc runs in the background, at low priority, beside the bundle's build and the tests
# (most of its time is checking the dependencies, 130 CPU-s measured alone). RUSTFLAGS stay those of the build: with other
# flags every build script and proc macro (sqlite's C among them) would be compiled a second
# time.
doc_log=$(mktemp)
status=0
RUSTDOCFLAGS="-D warnings" RUSTC_WORKSPACE_WRAPPER= \
  nice -n 10 cargo doc --locked --workspace --no-deps --quiet >"$doc_log" 2>&1 &
doc=$!

skips=$(mktemp)
export DISKSCOPE_SKIP_LOG="$skips"
logs=$(mktemp -d)
# Runs every test executable with the arguments given (libtest's filters and options), in
# its package's folder, into the group's log (shown when the group ends); a failure leaves a
# mark beside the log and the rest go on. `$RUNNER` (if set) prefixes each executable.
run_group() {
  local name=$1 dir exe
  shift
  echo "test.sh: $name: every test executable with: $*" >&2
  while IFS=$'\t' read -r dir exe; do
    (cd "$dir" && ${RUNNER:-} "$exe" --nocapture "$@") >>"$logs/$name.log" 2>&1 ||
      touch "$logs/$name.failed"
  done <"$executables"
  stamp "$name ran"
}
# Three groups, each test in exactly one (--nocapture, so that every SKIP line shows with its
# reason), started as soon as what they need is built:
# - plain: everything but the browser tests and the emulated-drive timing ones, three at a
#   time (they wait on I/O, timers and child processes more than they compute);
# - timing: the tests that judge a FUSE-emulated drive against its own timing model (the
#   error scan's slow region among them: under a cold build, writes elsewhere took 200 ms). The
#   emulator keeps time in user space: beside a build or a browser, a late wake-up moved it
#   off its model (20-40 ms of p99, 10 % of cache size, a 300 MB/s link's drive read at
#   276 MB/s in fresh-clone runs). Under round-robin real-time priority (chrt; root) the
#   test, its agents and its emulators wake on time whatever else runs, so they run beside
#   the rest; where chrt -r is refused they run last, alone, one at a time;
# - browser: once the bundle is built, three at a time (five tests: the two dashboard parts,
#   figures, views, the fleet; each waits on runs more than it draws).
browser=(dashboard:: figures:: views:: fleet:: flushcheck::the_dashboards)
timing=(emulated_ssd:: latency_target:: family:: plausibility:: repeat::compare_says error_scan:: files::create_stat_and_delete probe::probe_meets_ioping probe::the_idle_sweep)
skip_timing=()
for m in "${timing[@]}"; do skip_timing+=(--skip "$m"); done
skip_browser=()
for m in "${browser[@]}"; do skip_browser+=(--skip "$m"); done
run_group plain "${skip_browser[@]}" "${skip_timing[@]}" --test-threads=3 &
plain=$!
timing_now=0
if chrt -r 10 true 2>/dev/null; then
  timing_now=1
  RUNNER="chrt -r 10" run_group timing --test-threads=1 "${timing[@]}" &
  timing_pid=$!
else
  echo "test.sh: chrt -r is refused here: the emulated-drive timing tests run last, alone" >&2
fi

if ! wait "$frontend"; then
  cat "$frontend_log" >&2
  echo "test.sh: the dashboard could not be built; the browser tests will SKIP" >&2
else
  grep '^build-frontend:' "$frontend_log" >&2 || true
fi
stamp "dashboard built"
run_group browser "${skip_timing[@]}" "${browser[@]}" --test-threads=3
wait "$plain" || true
if [ "$timing_now" = 1 ]; then wait "$timing_pid" || true; fi

if ! wait "$doc"; then
  cat "$doc_log" >&2
  echo "test.sh: rustdoc found problems (above)" >&2
  status=1
fi
stamp "rustdoc clean"
if [ "$timing_now" = 0 ]; then run_group timing --test-threads=1 "${timing[@]}"; fi

for name in plain timing browser; do
  echo "===== test.sh: the $name tests' output =====" >&2
  cat "$logs/$name.log" 2>/dev/null || true
  if [ -e "$logs/$name.failed" ]; then status=1; fi
done
test_log="$logs/all.log"
cat "$logs"/plain.log "$logs"/timing.log "$logs"/browser.log >"$test_log" 2>/dev/null || true
passed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$test_log" | awk '{s += $4} END {print s + 0}')
failed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$test_log" | awk '{s += $6} END {print s + 0}')
skipped=$(grep '^SKIP ' "$skips" | cut -d' ' -f2 | sort -u | wc -l)
echo "test.sh: $passed tests passed, $failed failed; $skipped of the passed skipped all or part:" >&2
if [ "$passed" -eq 0 ]; then
  echo "test.sh: no test ran" >&2
  status=1
fi
grep '^SKIP ' "$skips" | grep -Eo '\[[a-z_-]+\]' | sort | uniq -c | sed 's/^/test.sh:   /' >&2 || true
# The failures last, so that the tail of a long CI log says what failed and why: each
# panic with the lines its test printed just before it (a browser test's steps).
if grep -q 'panicked at' "$test_log"; then
  echo "===== test.sh: the failures =====" >&2
  grep -B15 -A6 'panicked at' "$test_log" | grep -v '^ *[0-9]*: \|^ *at ' | tail -n 150 >&2
fi
stamp "done"
exit "$status"
