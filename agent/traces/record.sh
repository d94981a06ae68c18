#!/usr/bin/env bash
# Records the built-in application traces (app-build, app-database, app-files) on a fresh
# ext4 filesystem over a loop device, with `diskscope record` (root; the kernel's block
# tracer). Each workload starts with cold caches, so its reads reach the device, and ends
# with a sync, so its writes do. Usage: agent/traces/record.sh [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$here}
ds=${DS:-$repo/target/release/diskscope}
work=$(mktemp -d /tmp/ds-traces.XXXXXX)
dev=""
cleanup() {
    umount "$work/mnt" 2>/dev/null || true
    [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
truncate -s 4G "$work/fs.img"
mkfs.ext4 -q -E nodiscard "$work/fs.img"
dev=$(losetup -f --show "$work/fs.img")
mkdir "$work/mnt"
mount -o discard "$dev" "$work/mnt"
mnt=$work/mnt
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }

# app-build: a debug build of the agent and its dependencies (SQLite's C sources included),
# the sources and the crate registry on the device.
mkdir -p "$mnt/build/home"
tar -C "$repo" --exclude=./target --exclude=./.git --exclude=./static/pkg -cf - . | tar -C "$mnt/build" -xf - --one-top-level=src
cp -r "$HOME/.cargo/registry" "$mnt/build/home/registry"
cold
"$ds" record --device "$dev" --out "$out/app-build.iolog.gz" -- sh -c "
    cd '$mnt/build/src' && CARGO_HOME='$mnt/build/home' CARGO_TARGET_DIR='$mnt/build/target' \
    cargo build --offline -q -p agent && sync"

# app-database: SQLite in WAL mode, 200,000 rows inserted in transactions of 1,000, then
# from a cold cache indexed range queries and updates in transactions.
cat > "$work/db.py" <<'PY'
import os, random, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("pragma journal_mode=wal")
db.execute("create table t (id integer primary key, k integer, v text)")
db.execute("create index tk on t(k)")
rnd = random.Random(7)
for b in range(200):
    with db:
        db.executemany("insert into t (k, v) values (?, ?)",
                       [(rnd.randrange(10**6), "x" * rnd.randrange(20, 400)) for _ in range(1000)])
db.close()
# Queries from a cold cache, as after a restart.
os.system("sync; echo 3 > /proc/sys/vm/drop_caches")
db = sqlite3.connect(sys.argv[1])
for _ in range(3000):
    db.execute("select v from t where k between ? and ?", (k := rnd.randrange(10**6), k + 50)).fetchall()
for b in range(100):
    with db:
        for _ in range(100):
            db.execute("update t set v = ? where id = ?", ("y" * rnd.randrange(20, 400), rnd.randrange(1, 200001)))
db.execute("pragma wal_checkpoint(truncate)")
db.close()
PY
mkdir "$mnt/db"
cold
"$ds" record --device "$dev" --out "$out/app-database.iolog.gz" -- sh -c "python3 '$work/db.py' '$mnt/db/app.db' && sync"

# app-files: untar a source tree (the crate registry's sources), read every file back
# cold, delete the tree and trim the freed space.
tar -C "$HOME/.cargo/registry/src" -cf "$work/tree.tar" .
cold
"$ds" record --device "$dev" --out "$out/app-files.iolog.gz" -- sh -c "
    mkdir '$mnt/files' && tar -C '$mnt/files' -xf '$work/tree.tar' && sync &&
    echo 3 > /proc/sys/vm/drop_caches &&
    find '$mnt/files' -type f -exec cat {} + > /dev/null &&
    rm -rf '$mnt/files' && sync && fstrim '$mnt'"
ls -la "$out"/app-*.iolog.gz
