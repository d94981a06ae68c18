#!/usr/bin/env python3
"""Case 9: small files and metadata (`--preset files`) against fio's own metadata engines.

fio 3.33's `filecreate`, `filestat` and `filedelete` engines and diskscope's files preset
(phases mkdir, create, stat, delete, rmdir) make, stat and delete the same number of empty
files in one directory with one job (diskscope through plain system calls, its default,
and through io_uring, `--backend uring`), on tmpfs and on an ext4 filesystem on a loop device
(root only; made, mounted and removed by this script), in alternating pairs. Per phase it
records the mean latency of one operation (fio's clat, diskscope's step mean) and files
per second (fio's IOPS, diskscope's step IOPS).

fio's throughput is bounded by its own per-file bookkeeping, which grows with nrfiles
(see docs/benchmarks.md), so the files/s columns differ by far more than the operation
itself: the per-operation latency is the comparison that says whether the two time the
same thing.

Usage: bench/files.py [--pairs 3] [--files 2000] [--out bench/out/files.json]
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DS = os.path.join(ROOT, "target", "release", "diskscope")
PHASES = [("create", "filecreate"), ("stat", "filestat"), ("delete", "filedelete")]


def fio(engine, directory, n):
    out = subprocess.run(
        ["fio", "--name=fc", f"--ioengine={engine}", f"--directory={directory}",
         f"--nrfiles={n}", "--filesize=4k", "--openfiles=1", "--numjobs=1",
         "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    r = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return {"lat_ns": r["clat_ns"]["mean"], "files_s": r["iops"], "ops": r["total_ios"]}


def diskscope(directory, n, backend="sync"):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run(
            [DS, "run", "-q", "--target", directory, "--preset", "files", "--count", str(n),
             "--bs", "0", "--phases", "mkdir,create,stat,delete,rmdir", "--backend", backend,
             "--json", f.name],
            check=True, capture_output=True)
        r = json.load(open(f.name))
    out = {}
    for s in r["steps"]:
        name = s["name"].split(" ")[0]
        d = s["summary"]["write"] if s["summary"]["write"]["ios"] else s["summary"]["read"]
        out[name] = {"lat_ns": d["lat"]["mean_ns"], "files_s": d["iops"], "ops": d["ios"]}
    return out


def pairs_on(directory, n, pairs):
    rows = []
    for i in range(pairs):
        fio_dir, ds_dir = os.path.join(directory, "fio"), os.path.join(directory, "ds")
        for d in (fio_dir, ds_dir):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        order = ["fio", "ds", "ds_uring"] if i % 2 == 0 else ["ds_uring", "ds", "fio"]
        got = {}
        for tool in order:
            if tool == "fio":
                got["fio"] = {p: fio(e, fio_dir, n) for p, e in PHASES}
            elif tool == "ds":
                got["ds"] = diskscope(ds_dir, n)
            else:
                got["ds_uring"] = diskscope(ds_dir, n, "uring")
        rows.append(got)
    return rows


def ext4_mount(size_mib=512):
    """An ext4 filesystem on a loop device; (mount point, cleanup) or None."""
    if os.geteuid() != 0:
        return None
    base = tempfile.mkdtemp(dir="/var/tmp", prefix="ds-bench-files-")
    img, mnt = os.path.join(base, "fs.img"), os.path.join(base, "mnt")
    os.makedirs(mnt)
    with open(img, "wb") as f:
        f.truncate(size_mib << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", img], check=True)
    subprocess.run(["mount", "-o", "loop", img, mnt], check=True)

    def cleanup():
        subprocess.run(["umount", mnt], check=False)
        shutil.rmtree(base, ignore_errors=True)
    return mnt, cleanup


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "files.json"))
    args = ap.parse_args()
    if not os.path.exists(DS):
        subprocess.run(["cargo", "build", "--release", "-p", "agent", "--quiet"], cwd=ROOT,
                       check=True)
    targets = {}
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        targets["tmpfs"] = pairs_on(shm, args.files, args.pairs)
    ext4 = ext4_mount()
    if ext4:
        mnt, cleanup = ext4
        try:
            targets["ext4 (loop)"] = pairs_on(mnt, args.files, args.pairs)
        finally:
            cleanup()
    fio_version = subprocess.run(["fio", "--version"], capture_output=True,
                                 text=True).stdout.strip()
    doc = {"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "host": platform.node(), "fio": fio_version, "pairs": args.pairs,
           "files": args.files, "targets": targets}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    json.dump(doc, open(args.out, "w"), indent=1)
    for name, rows in targets.items():
        for phase, _ in PHASES:
            lat = [r["ds"][phase]["lat_ns"] / r["fio"][phase]["lat_ns"] for r in rows]
            print(f"{name} {phase}: latency ratio {statistics.median(lat):.2f}")


if __name__ == "__main__":
    main()
