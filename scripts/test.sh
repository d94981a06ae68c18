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
cargo test --locked --workspace --no-run
stamp "built (clippy clean)"

if ! wait "$frontend"; then
  cat "$frontend_log" >&2
  echo "test.sh: the dashboard could not be built; the browser tests will SKIP" >&2
else
  grep '^build-frontend:' "$frontend_log" >&2 || true
fi
stamp "dashboard built"

skips=$(mktemp)
export DISKSCOPE_SKIP_LOG="$skips"
test_log=$(mktemp)
# Doc links stay true (tests/tests/suite/docs.rs checks ARCHITECTURE.md's map and docs/api.md).
# RUSTFLAGS stay those of the build: with other flags every build script and proc macro
# (sqlite's C among them) would be compiled again (measured: 67 s and 129 CPU-s alone instead
# of 138 s and 246). With cargo-nextest, rustdoc runs at the lowest priority beside the tests'
# first minutes (browsers and runs that mostly wait), started once nextest's own cargo call has
# let go of the build directory; the timing models run last, alone (.config/nextest.toml).
doc() {
  RUSTDOCFLAGS="-D warnings" RUSTC_WORKSPACE_WRAPPER= nice -n 19 \
    cargo doc --locked --workspace --no-deps --quiet
}
status=0
if cargo nextest --version >/dev/null 2>&1; then
  (cargo nextest run --locked --workspace 2>&1 | tee "$test_log") &
  tests=$!
  # nextest's cargo call takes the build directory's lock for a second; rustdoc waits on it
  # anyway, so this only keeps rustdoc from holding nextest up.
  sleep 5
  doc || { echo "test.sh: rustdoc found problems (above)" >&2; status=1; }
  stamp "rustdoc clean"
  wait "$tests" || status=$?
  summary=$(grep -E '^ +Summary \[' "$test_log" | tail -1)
  passed=$(echo "$summary" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+' || echo 0)
  failed=$(echo "$summary" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+' || echo 0)
else
  echo "test.sh: no cargo-nextest here: cargo test runs the tests one binary after another, slower (cargo install cargo-nextest)" >&2
  doc
  stamp "rustdoc clean"
  # --nocapture so that every SKIP line (with its reason) shows in the log.
  cargo test --locked --workspace -- --nocapture 2>&1 | tee "$test_log" || status=$?
  passed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed' "$test_log" | awk '{s += $4} END {print s + 0}')
  failed=$(grep -Eo 'test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$test_log" | awk '{s += $6} END {print s + 0}')
fi
skipped=$(grep '^SKIP ' "$skips" | cut -d' ' -f2 | sort -u | wc -l)
echo "test.sh: $passed tests passed, $failed failed; $skipped of the passed skipped all or part:" >&2
grep '^SKIP ' "$skips" | grep -Eo '\[[a-z_-]+\]' | sort | uniq -c | sed 's/^/test.sh:   /' >&2 || true
stamp "done"
exit "$status"
