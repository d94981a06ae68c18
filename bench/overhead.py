#!/usr/bin/env python3
"""The overhead table (bench/run.sh --only overhead): what each io_uring feature is worth.

4K random reads at QD 1, 32 and 128 with io_uring's features switched on in turn, each level
adding one to the last, as Jens Axboe's t/io_uring reports them:

  plain             no registration (fio: --ioengine=io_uring alone)
  + registered file the target registered (fio: --registerfiles)
  + fixed buffers   the buffers registered (fio: --fixedbufs)
  + registered ring the ring's descriptor registered (fio has no such option: as the last)
  + batch 8, 32     that many I/Os per submit call (fio: --iodepth_batch_submit), at most QD
  + force async     every I/O marked IOSQE_ASYNC: straight to io_uring's workers, without the
                    inline try a device that cannot take I/O without blocking fails first
                    (fio: --force_async=1)
  + SQPOLL          a kernel thread polls the submission queue, on CPU 0 (fio: --sqthread_poll
                    --sqthread_poll_cpu=0)

on two targets: (a) an io_uring ring of no-op requests (diskscope's `nop` backend: the
engine's own cost through the kernel's ring, no device; fio has no ring of no-ops, so its
row is fio's null engine, which skips the ring as diskscope's `null` does), and (b) zram
(`/sys/block/zram0`, set up, filled with incompressible data and reset by the script;
root only). Both tools' job threads run on CPU 1 (`cpus_allowed`), the SQPOLL thread on
CPU 0. CPU is user + sys of the whole process from wait4 (the SQPOLL thread and io_uring's
workers are threads of the process), so ns per I/O is everything each tool cost.

Pairs alternate which tool goes first. Written to --out (bench/out/overhead.json);
bench/report.py draws the table.

Usage: bench/overhead.py [--pairs 2] [--runtime 2] [--out bench/out/overhead.json]
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vs_fio  # noqa: E402  (the same timing, zram set-up and fill as cases 2 and 5)

DEPTHS = [1, 32, 128]
# (name, diskscope's flags, fio's options), each level adding to the one before.
LEVELS = [
    ("plain", ["--fixed-buffers", "false", "--registered-file", "false",
               "--registered-ring", "false"], []),
    ("+ registered file", ["--fixed-buffers", "false", "--registered-ring", "false"],
     ["--registerfiles"]),
    ("+ fixed buffers", ["--registered-ring", "false"], ["--registerfiles", "--fixedbufs"]),
    ("+ registered ring", [], ["--registerfiles", "--fixedbufs"]),
    ("+ batch 8", ["--iodepth-batch", "{b8}"],
     ["--registerfiles", "--fixedbufs", "--iodepth_batch_submit={b8}"]),
    ("+ batch 32", ["--iodepth-batch", "{b32}"],
     ["--registerfiles", "--fixedbufs", "--iodepth_batch_submit={b32}"]),
    ("+ force async", ["--iodepth-batch", "{b32}", "--force-async", "1"],
     ["--registerfiles", "--fixedbufs", "--iodepth_batch_submit={b32}", "--force_async=1"]),
    ("+ SQPOLL", ["--iodepth-batch", "{b32}", "--force-async", "1", "--sqpoll", "--sqpoll-cpu",
                  "0"],
     ["--registerfiles", "--fixedbufs", "--iodepth_batch_submit={b32}", "--force_async=1",
      "--sqthread_poll=1", "--sqthread_poll_cpu=0"]),
]


def filled(args, qd):
    return [a.format(b8=min(8, qd), b32=min(32, qd)) for a in args]


def ds(target, backend, qd, flags, runtime):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [vs_fio.BIN, "run", "--target", target, "--backend", backend, "--rw", "randread",
               "--bs", "4k", "--iodepth", str(qd), "--runtime", f"{runtime}s", "--size", "1G",
               "--cpus-allowed", "1", "--json", f.name, "-q"] + flags
        _, cpu = vs_fio.timed(cmd)
        r = json.load(open(f.name))
    s = r["summary"]
    ios = s["read"]["ios"]
    return dict(iops=ios / (s["duration_ns"] / 1e9), cpu=cpu, ios=ios,
                features=r["environment"].get("ring_features", []))


def fio(target, engine, qd, opts, runtime):
    cmd = ["fio", "--name=overhead", f"--filename={target}", "--rw=randread", "--bs=4k",
           f"--iodepth={qd}", f"--runtime={runtime}", "--time_based", "--size=1G",
           "--output-format=json", "--randrepeat=0", "--norandommap", "--thread",
           "--cpus_allowed=1", f"--ioengine={engine}"]
    if engine == "io_uring":
        cmd += ["--direct=1"] + opts
    out, cpu = vs_fio.timed(cmd)
    job = json.loads(out[out.index("{"):])["jobs"][0]
    ios = job["read"]["total_ios"]
    return dict(iops=ios / (job["read"]["runtime"] / 1000.0), cpu=cpu, ios=ios)


def alternate(i, a, b):
    """(a(), b()) run in the order that alternates with i: a drift favours neither."""
    if i % 2:
        y = b()
        return a(), y
    x = a()
    return x, b()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--runtime", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(vs_fio.ROOT, "bench", "out", "overhead.json"))
    args = ap.parse_args()
    if args.pairs < 1 or args.runtime < 1:
        sys.exit(f"--pairs {args.pairs} / --runtime {args.runtime}: both must be at least 1")
    res = dict(pairs=args.pairs, runtime_s=args.runtime,
               generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               host=platform.node(), kernel=platform.release(), cpus=os.cpu_count(),
               fio=subprocess.check_output(["fio", "--version"]).decode().strip(),
               nop=[], zram=[])
    for qd in DEPTHS:
        # fio's null engine: fio's own cost without a ring, the reference for the no-op rows.
        res.setdefault("fio_null", []).append(dict(qd=qd, runs=[
            fio("null", "null", qd, [], args.runtime) for _ in range(args.pairs)]))
        for name, flags, _ in LEVELS:
            print(f"nop QD{qd} {name}", file=sys.stderr)
            res["nop"].append(dict(qd=qd, level=name, runs=[
                ds("null", "nop", qd, filled(flags, qd), args.runtime)
                for _ in range(args.pairs)]))
    zram = vs_fio.setup_zram(vs_fio.ZRAM_SIZE)
    if not zram:
        res["skipped_zram"] = "not root or no /sys/block/zram0"
    else:
        try:
            subprocess.check_call([vs_fio.BIN, "run", "--target", zram, "--rw", "write", "--bs",
                                   "1M", "--iodepth", "8", "-q"], stdout=subprocess.DEVNULL)
            for qd in DEPTHS:
                for name, flags, opts in LEVELS:
                    print(f"zram QD{qd} {name}", file=sys.stderr)
                    pairs = []
                    for i in range(args.pairs):
                        f, d = alternate(
                            i, lambda: fio(zram, "io_uring", qd, filled(opts, qd), args.runtime),
                            lambda: ds(zram, "uring", qd, filled(flags, qd), args.runtime))
                        pairs.append(dict(fio=f, ds=d))
                    res["zram"].append(dict(qd=qd, level=name, pairs=pairs))
        finally:
            vs_fio.teardown_zram()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
