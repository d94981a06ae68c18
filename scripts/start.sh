#!/usr/bin/env bash
# Sets up, builds and runs diskscope's main job on this machine.
# For now: the quick default benchmark (SEQ1M Q8T1, RND4K Q32T1, RND4K Q1T1; read and write)
# against a 1 GiB scratch file in the data directory (DISKSCOPE_DATA_DIR, $XDG_DATA_HOME/diskscope
# or ~/.local/share/diskscope). Extra arguments go to `diskscope quick` (e.g. --runtime 10s).
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

cargo build --release --locked -p agent --bin diskscope
exec target/release/diskscope quick "$@"
