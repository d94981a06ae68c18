#!/usr/bin/env bash
# Runs every check and test: formatting, clippy and rustdoc (warnings are errors), unit tests and the
# integration tests (real files, loop devices and a loop-mounted ext4 when root, Ctrl-C,
# ENOSPC, agreement of the histogram layout with fio's json+ bins when fio is installed, the
# real server with WebSocket clients, and the dashboard in headless Chromium).
# Tests that need root, io_uring or fio say SKIP and why when the machine lacks them.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi

# The dashboard's browser test needs the wasm bundle and playwright-core; when either cannot be
# had here, that test says SKIP and why, and everything else still runs.
if ! ./scripts/build-frontend.sh; then
  echo "test.sh: the dashboard could not be built; the browser test will SKIP" >&2
fi
if command -v npm >/dev/null 2>&1; then
  (cd tests/e2e && npm ci --no-audit --no-fund >/dev/null) ||
    echo "test.sh: playwright-core could not be installed; the browser test will SKIP" >&2
fi

cargo fmt --all -- --check
cargo clippy --locked --workspace --all-targets -- -D warnings
# Doc links stay true (tests/tests/docs.rs checks ARCHITECTURE.md's map and docs/api.md).
RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps --quiet
# --nocapture so that every SKIP line (with its reason) shows in the log.
cargo test --locked --workspace -- --nocapture
