#!/usr/bin/env python3
"""diskscope against fio, side by side, in one invocation.

Runs fio (the reference meter) and diskscope alternately on the same targets — a file on the
root filesystem with O_DIRECT and a loop device backed by a file in /dev/shm (root only) —
for 4K randread QD1/QD32, 4K randwrite QD32, 1M read/write QD8 and 4K randrw 50/50 QD32, plus
the null backend against fio's null engine. Each case runs --pairs times (fio, diskscope,
fio, diskscope, ...); the table gives medians and the median of the per-pair ratios
diskscope/fio. CPU is measured for the whole process (user + sys from wait4, which includes
io_uring worker threads), not from fio's own per-thread figure.

Usage: bench/vs_fio.py [--pairs 3] [--runtime 5] [--out docs/benchmarks.md]
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "diskscope")

CASES = [
    # name, rw, bs, iodepth
    ("4K randread QD1", "randread", "4k", 1),
    ("4K randread QD32", "randread", "4k", 32),
    ("4K randwrite QD32", "randwrite", "4k", 32),
    ("1M read QD8", "read", "1m", 8),
    ("1M write QD8", "write", "1m", 8),
    ("4K randrw 50/50 QD32", "randrw", "4k", 32),
]
NULL_DEPTHS = [1, 32, 128]
SIZE = "1G"


def timed(cmd):
    """Runs cmd; returns (stdout, cpu seconds of the whole process tree it waited for)."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode()
        if p.returncode != 0:
            sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{err}")
        out.seek(0)
        return out.read().decode(), ru.ru_utime + ru.ru_stime


def run_fio(target, rw, bs, qd, runtime, engine="io_uring"):
    cmd = ["fio", "--name=bench", f"--filename={target}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={qd}", f"--runtime={runtime}", "--time_based", f"--size={SIZE}",
           "--output-format=json", "--randrepeat=0", "--norandommap", "--lat_percentiles=1"]
    if engine == "null":
        cmd += ["--ioengine=null"]
    else:
        cmd += ["--ioengine=io_uring", "--fixedbufs", "--registerfiles", "--direct=1"]
    if rw == "randrw":
        cmd += ["--rwmixread=50"]
    out, cpu = timed(cmd)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    secs = max(job["read"]["runtime"], job["write"]["runtime"]) / 1000.0
    nbytes = job["read"]["io_bytes"] + job["write"]["io_bytes"]
    main = job["read"] if job["read"]["total_ios"] else job["write"]
    # Total latency (submission + completion), as diskscope measures it; fio's clat alone
    # misses I/O that completes inline during submission.
    p50 = main["lat_ns"].get("percentile", {}).get("50.000000", 0)
    return dict(iops=ios / secs, mbs=nbytes / secs / 1e6, p50=p50, cpu=cpu, ios=ios)


def run_ds(target, rw, bs, qd, runtime, backend="uring"):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [BIN, "run", "--target", target, "--rw", rw, "--bs", bs, "--iodepth", str(qd),
               "--runtime", f"{runtime}s", "--size", SIZE, "--json", f.name, "-q",
               "--backend", backend]
        _, cpu = timed(cmd)
        r = json.load(open(f.name))
    s = r["summary"]
    ios = s["read"]["ios"] + s["write"]["ios"]
    secs = s["duration_ns"] / 1e9
    main = s["read"] if s["read"]["ios"] else s["write"]
    return dict(iops=ios / secs, mbs=(s["read"]["bytes"] + s["write"]["bytes"]) / secs / 1e6,
                p50=main["lat"]["p50_ns"], cpu=cpu, ios=ios)


def pairs(n, fio_fn, ds_fn):
    res = []
    for _ in range(n):
        res.append((fio_fn(), ds_fn()))
    return res


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def ratio(res, key, invert=False):
    rs = []
    for f, d in res:
        if f[key] and d[key]:
            rs.append(f[key] / d[key] if invert else d[key] / f[key])
    return med(rs), (min(rs) if rs else float("nan")), (max(rs) if rs else float("nan"))


def cpu_per_mio(r):
    return r["cpu"] / r["ios"] * 1e6 if r["ios"] else float("nan")


def setup_loop(size_bytes):
    if os.geteuid() != 0 or not os.path.isdir("/dev/shm") or not shutil.which("losetup"):
        return None, None
    backing = tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="diskscope-bench-", delete=False)
    backing.truncate(size_bytes)
    backing.close()
    dev = subprocess.check_output(["losetup", "--find", "--show", backing.name]).decode().strip()
    return dev, backing.name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp/diskscope-bench")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    ap.add_argument("--cases", default="", help="comma-separated substrings of case names to run")
    args = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    subprocess.check_call(["cargo", "build", "--release", "-q", "-p", "agent", "--bin", "diskscope"], cwd=ROOT)
    os.makedirs(args.dir, exist_ok=True)
    file_target = os.path.join(args.dir, "bench.bin")
    # Lay the file out with real data once, for both tools.
    subprocess.check_call([BIN, "run", "--target", file_target, "--size", SIZE, "--rw", "write",
                           "--bs", "1M", "--iodepth", "8", "-q"], stdout=subprocess.DEVNULL)
    targets = [("file (ext4/xfs, O_DIRECT)", file_target)]
    dev, backing = setup_loop(1 << 30)
    if dev:
        subprocess.check_call([BIN, "run", "--target", dev, "--rw", "write", "--bs", "1M",
                               "--iodepth", "8", "-q"], stdout=subprocess.DEVNULL)
        targets.append((f"loop device ({dev}, backed by /dev/shm)", dev))
    else:
        print("note: not root or no losetup: loop device cases skipped", file=sys.stderr)
    wanted = [c for c in args.cases.split(",") if c]
    rows = []
    try:
        for tname, target in targets:
            for name, rw, bs, qd in CASES:
                if wanted and not any(w in name for w in wanted):
                    continue
                print(f"{tname}: {name}", file=sys.stderr)
                res = pairs(args.pairs,
                            lambda: run_fio(target, rw, bs, qd, args.runtime),
                            lambda: run_ds(target, rw, bs, qd, args.runtime))
                rows.append((tname, name, res))
        null_rows = []
        for qd in NULL_DEPTHS:
            if wanted and not any(w in "null" for w in wanted):
                continue
            print(f"null QD{qd}", file=sys.stderr)
            res = pairs(args.pairs,
                        lambda: run_fio("null", "randread", "4k", qd, args.runtime, engine="null"),
                        lambda: run_ds("null", "randread", "4k", qd, args.runtime, backend="null"))
            null_rows.append((qd, res))
    finally:
        if dev:
            subprocess.call(["losetup", "-d", dev])
            os.unlink(backing)
    write_report(args, rows, null_rows)


def fmt_ratio(r):
    m, lo, hi = r
    return f"**{m:.2f}** ({lo:.2f}–{hi:.2f})"


def write_report(args, rows, null_rows):
    fio_ver = subprocess.check_output(["fio", "--version"]).decode().strip()
    lines = [
        "# Benchmarks: diskscope against fio",
        "",
        f"Generated by `bench/vs_fio.py --pairs {args.pairs} --runtime {args.runtime}` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, host `{platform.node()}`, kernel "
        f"{platform.release()}, {os.cpu_count()} CPUs, {fio_ver}.",
        "",
        "fio runs with `--ioengine=io_uring --fixedbufs --registerfiles --direct=1 --norandommap`;",
        "diskscope with its defaults (io_uring, fixed buffers, registered file, O_DIRECT, uniform",
        "random offsets). Each case runs as alternating pairs; figures are medians, ratios are",
        "the median (and range) of the per-pair ratios diskscope/fio. CPU is user + sys of the",
        "whole process from wait4 (io_uring worker threads included). p50 is the completion",
        "latency median (submit → complete; fio's `lat`, not `clat`) of the first direction",
        "(reads in mixed runs).",
        "",
        "| target | case | fio IOPS | ds IOPS | IOPS ratio | MB/s ratio | fio p50 µs | ds p50 µs | p50 ratio | fio CPU s/MIO | ds CPU s/MIO | CPU/IO ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tname, name, res in rows:
        f = [r[0] for r in res]
        d = [r[1] for r in res]
        cpu_ratio = med([cpu_per_mio(b) / cpu_per_mio(a) for a, b in res if a["ios"] and b["ios"]])
        lines.append(
            f"| {tname} | {name} | {med([x['iops'] for x in f]):,.0f} | {med([x['iops'] for x in d]):,.0f} | "
            f"{fmt_ratio(ratio(res, 'iops'))} | {fmt_ratio(ratio(res, 'mbs'))} | "
            f"{med([x['p50'] for x in f]) / 1e3:.1f} | {med([x['p50'] for x in d]) / 1e3:.1f} | "
            f"{fmt_ratio(ratio(res, 'p50'))} | {med([cpu_per_mio(x) for x in f]):.2f} | "
            f"{med([cpu_per_mio(x) for x in d]):.2f} | {cpu_ratio:.2f} |")
    if null_rows:
        lines += [
            "",
            "## Engine overhead: null backends (4K randread, nothing touches a device)",
            "",
            "| QD | fio null IOPS | ds null IOPS | IOPS ratio | fio IOPS per CPU-s | ds IOPS per CPU-s | per-CPU ratio |",
            "|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for qd, res in null_rows:
            f = [r[0] for r in res]
            d = [r[1] for r in res]
            per_cpu = lambda x: x["ios"] / x["cpu"] if x["cpu"] else float("nan")
            pr = med([per_cpu(b) / per_cpu(a) for a, b in res])
            lines.append(
                f"| {qd} | {med([x['iops'] for x in f]):,.0f} | {med([x['iops'] for x in d]):,.0f} | "
                f"{fmt_ratio(ratio(res, 'iops'))} | {med([per_cpu(x) for x in f]):,.0f} | "
                f"{med([per_cpu(x) for x in d]):,.0f} | {pr:.2f} |")
    text = "\n".join(lines) + "\n"
    # The dashboard's section is written by bench/dashboard.sh: keep it.
    if os.path.exists(args.out):
        old = open(args.out).read()
        at = old.find("\n## Dashboard")
        if at >= 0:
            text += old[at:]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
