#!/usr/bin/env bash
# Builds the dashboard (the `frontend` crate) into static/pkg, which the agent embeds:
# wasm32 build -> wasm-bindgen (--target web, CLI version = the crate's) -> wasm-opt -Oz ->
# gzip -9 beside it (served precompressed).
# Toolchain: rustup's wasm32 target when it is installed or can be added; otherwise Debian's
# rustc-web + rust-web-src with -Zbuild-std (installed with apt when missing). wasm-opt comes
# from npm's binaryen 132 (Debian's binaryen 108 breaks wasm-bindgen's output).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=static/pkg
WASM=target-wasm/wasm32-unknown-unknown/wasm-release/frontend.wasm
# Leptos's erase_components: every component's view type-erased (AnyView) instead of one
# monomorphised render tree per component: about a tenth less wasm, same behaviour.
export RUSTFLAGS="${RUSTFLAGS:-} --cfg erase_components"
# The standard library rebuilt for size with the bundle (build-std: std at opt-level z and
# inside the LTO, no panic messages or source locations: a panic in the browser aborts the
# module either way, and static/boot.js shows the abort as the "hit a bug" banner). These flags are unstable-gated,
# hence RUSTC_BOOTSTRAP for this one build; -7 % gzipped. No `Debug` formatting either
# (-Zfmt-debug=none: `{:?}` prints nothing; nothing a person reads uses it, and the dashboard
# turns JavaScript errors into text with `js_error`): -5.4 KB gzipped.
SIZE_FLAGS="-Zfmt-debug=none -Zlocation-detail=none -Zunstable-options -Cpanic=immediate-abort"
BUILD_STD=(-Zbuild-std=std,panic_abort -Zbuild-std-features=optimize_for_size)
# DISKSCOPE_FRONTEND_FEATURES=bench adds the chart benchmark's export (bench/dashboard.sh);
# the bundle the agent serves has none.
FEATURES=(--features "${DISKSCOPE_FRONTEND_FEATURES:-}")
WB_VERSION=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)

if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown ||
   timeout 180 rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  if timeout 180 rustup component add rust-src >/dev/null 2>&1; then
    RUSTFLAGS="$RUSTFLAGS $SIZE_FLAGS" RUSTC_BOOTSTRAP=1 \
      cargo build --locked -p frontend --lib --target wasm32-unknown-unknown \
        --profile wasm-release --target-dir target-wasm "${FEATURES[@]}" "${BUILD_STD[@]}"
  else
    echo "build-frontend: no rust-src component here; the standard library is not rebuilt for size (a larger bundle)" >&2
    cargo build --locked -p frontend --lib --target wasm32-unknown-unknown \
      --profile wasm-release --target-dir target-wasm "${FEATURES[@]}"
  fi
else
  echo "build-frontend: rustup has no wasm32 target here; using Debian's rustc-web with build-std" >&2
  if [ ! -x /usr/bin/wasm-ld-19 ] || ! dpkg -s rust-web-src >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rustc-web cargo-web rust-web-src lld-19
  fi
  RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=/usr/bin/wasm-ld-19 \
  RUSTFLAGS="$RUSTFLAGS $SIZE_FLAGS" \
    /usr/bin/cargo build --locked -p frontend --lib --target wasm32-unknown-unknown \
      --profile wasm-release --target-dir target-wasm "${FEATURES[@]}" "${BUILD_STD[@]}"
fi

if ! command -v wasm-bindgen >/dev/null 2>&1 ||
   [ "$(wasm-bindgen --version | awk '{print $2}')" != "$WB_VERSION" ]; then
  echo "build-frontend: installing wasm-bindgen-cli $WB_VERSION (a minute or two, once)" >&2
  # A quick optimised build: the tool runs for a second per bundle, its build for minutes.
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false \
  CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo install --force wasm-bindgen-cli --version "$WB_VERSION"
fi
rm -rf "$OUT"
mkdir -p "$OUT"
# --keep-debug keeps the function names for wasm-opt's ordering below; they are stripped after.
wasm-bindgen --target web --no-typescript --keep-debug --out-dir "$OUT" --out-name frontend "$WASM"

if [ ! -x .tools/node_modules/.bin/wasm-opt ]; then
  npm install --prefix .tools --no-audit --no-fund binaryen@132 >/dev/null
fi
# After -Oz the functions are sorted by name: the instances of one generic function (a
# signal's, a memo's, a decoder's for each type) then sit side by side, within gzip's 32 KiB
# window of each other (measured: 515,765 -> 502,962 bytes gzipped by zopfli; no change in
# size or behaviour, only order). Then the names and the producers section go.
# --low-memory-unused: the lowest 1 KiB of memory holds nothing (Rust's wasm layout puts the
# 1 MiB stack first, growing down towards 0: only a stack a kilobyte short of overflowing
# would reach it), so wasm-opt may fold constant offsets into loads and stores: -0.8 %.
# leptos always builds server_fn with its `browser` feature, which links wasm-streams; its
# `#[wasm_bindgen]` classes (IntoUnderlyingSink, …Source, …ByteSource: Rust streams handed
# to JavaScript, for server functions, which the dashboard has none of) are exports, so
# nothing could drop them as dead code. They go here: −5.4 KB raw, −1.3 KB gzipped. The JS
# glue's classes for them stay (they call into the module only when constructed, which
# only those server-function streams would do).
# --converge repeats -Oz until it gains nothing (two rounds here): -0.7 KB gzipped for
# half a minute more of build.
.tools/node_modules/.bin/wasm-opt --remove-exports --pass-arg=remove-exports@*intounderlying* \
  -Oz --converge --low-memory-unused --reorder-functions-by-name -g "$OUT/frontend_bg.wasm" -o "$OUT/frontend_bg.wasm"
.tools/node_modules/.bin/wasm-opt --strip-debug --strip-producers "$OUT/frontend_bg.wasm" -o "$OUT/frontend_bg.wasm"
# Precompressed beside each file (gzip by zopfli, the densest gzip encoder, when installed,
# else gzip -9; and brotli at its best from Node's own zlib): the agent sends the .br or .gz
# to browsers that accept it. Chromium asks for br only over HTTPS and from localhost
# (checked: "gzip, deflate" to http://192.0.2.2), so a dashboard on the LAN over plain HTTP,
# a kiosk's, gets the .gz.
for f in "$OUT/frontend_bg.wasm" "$OUT/frontend.js"; do
  if command -v zopfli >/dev/null 2>&1; then
    zopfli -c "$f" > "$f.gz"
  else
    gzip -9 -n -c "$f" > "$f.gz"
  fi
  node -e 'const z = require("zlib"), fs = require("fs"); const [i, o] = process.argv.slice(1);
    fs.writeFileSync(o, z.brotliCompressSync(fs.readFileSync(i), { params: {
      [z.constants.BROTLI_PARAM_QUALITY]: 11, [z.constants.BROTLI_PARAM_LGWIN]: 24 } }));' "$f" "$f.br"
done
echo "build-frontend: $(du -b "$OUT/frontend_bg.wasm" | cut -f1) bytes of wasm, $(du -b "$OUT/frontend_bg.wasm.gz" | cut -f1) gzipped, $(du -b "$OUT/frontend_bg.wasm.br" | cut -f1) brotli" >&2
