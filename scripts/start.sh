#!/usr/bin/env bash
# Sets up, builds and starts diskscope's main job: `diskscope serve` with the dashboard, on the
# default scratch target and database in the data directory (DISKSCOPE_DATA_DIR,
# $XDG_DATA_HOME/diskscope or ~/.local/share/diskscope). Prints the URL with the token.
# Extra arguments go to `diskscope serve` (e.g. --listen 0.0.0.0:7878 --allow /data).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "diskscope needs a Rust toolchain (cargo): install it with rustup (https://rustup.rs)" >&2
    exit 1
  fi
fi
need=()
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v zopfli >/dev/null 2>&1 || need+=(zopfli)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
fi

./scripts/build-frontend.sh
cargo build --release --locked -p agent --bin diskscope
exec target/release/diskscope serve "$@"
