#!/usr/bin/env python3
"""diskscope against fio, side by side, in one invocation (cases 1 and 2 of bench/run.sh).

Case 1, engine overhead: diskscope's null backend against `fio --ioengine=null`, 4K, QD 1,
32 and 128, with 1 and 2 jobs.
Case 2, real targets: a file on the root filesystem with O_DIRECT and a loop device backed by
a file in /dev/shm (root only): 4K randread QD1 and QD32, 4K randwrite QD32, 1M read QD8 (and,
beyond the issue, 1M write QD8 and 4K randrw 50/50 QD32), fio with io_uring, fixed buffers and
registered files.

Each case runs --pairs times, alternating (fio, diskscope, fio, diskscope, ...). CPU is user +
sys of the whole process tree from wait4 (io_uring worker threads and fio's job threads
included), not fio's own per-thread figure. Every measurement is written to --out as JSON;
bench/report.py turns it into docs/benchmarks.md.

Presets (`--presets cdm,cdm-peak,atto,orion-matrix`; pairs alternate which tool
goes first): every step of each preset
against fio run with the same parameters (rw, bs, iodepth, jobs, span, time) and the same
buffer memory: where diskscope's step ran from 2 MiB huge pages (its `io_path`), fio gets
`--iomem=shmhuge` (huge pages reserved for it with vm.nr_hugepages), else fio's default
`malloc`. A third run per step is fio with its default buffers (4 KiB pages, what KDiskMark
users see). Pairs alternate (diskscope's whole preset, then fio step by step); the step's
ratio is the median over pairs. Written to --out (default bench/out/presets.json).

Usage: bench/vs_fio.py [--pairs 3] [--runtime 5] [--out bench/out/engine.json] [--cases 1M,null]
       bench/vs_fio.py --presets cdm,cdm-peak,atto,orion-matrix [--pairs 3] [--runtime 1]
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("DISKSCOPE_BIN", os.path.join(ROOT, "target", "release", "diskscope"))

REAL_CASES = [
    # name, rw, bs, iodepth, named by the issue
    ("4K randread QD1", "randread", "4k", 1, True),
    ("4K randread QD32", "randread", "4k", 32, True),
    ("4K randwrite QD32", "randwrite", "4k", 32, True),
    ("1M read QD8", "read", "1m", 8, True),
    ("1M write QD8", "write", "1m", 8, False),
    ("4K randrw 50/50 QD32", "randrw", "4k", 32, False),
]
NULL_DEPTHS = [1, 32, 128]
NULL_JOBS = [1, 2]
SIZE = "1G"
# zram's size: the largest span a case or preset step uses (1 GiB), with room.
ZRAM_SIZE = 2 << 30


def timed(cmd):
    """Runs cmd; returns (stdout, CPU seconds of the whole process tree it waited for)."""
    with tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err = p.stderr.read().decode()
        if p.returncode != 0:
            sys.exit(f"command failed ({p.returncode}): {' '.join(cmd)}\n{err}")
        out.seek(0)
        return out.read().decode(), ru.ru_utime + ru.ru_stime


def fio_lat(d):
    """Total latency (submission + completion, fio's `lat`, as diskscope measures it)."""
    lat = d["lat_ns"]
    pct = lat.get("percentile", {})
    return dict(mean=lat.get("mean", 0.0), p50=pct.get("50.000000", 0),
                p99=pct.get("99.000000", 0), p999=pct.get("99.900000", 0))


def content(target):
    """fio's options that make its write data as compressible as diskscope's (not at all).

    On zram the content is the workload: the device compresses every page it stores. fio's
    default `scramble_buffers` stamps the I/O's offset and time into each 512-byte sector, the
    same 16 bytes eight times per 4 KiB page, and lzo finds those repeats: fio's random writes
    on zram ran at half the IOPS of diskscope's (146k vs 277k, both stored incompressible).
    diskscope's own refresh xors one random word per sector, which leaves the data random;
    fio's matching content is its random buffer unscrambled."""
    return ["--scramble_buffers=0"] if target.startswith("/dev/zram") else []


def run_fio(target, rw, bs, qd, runtime, jobs=1, engine="io_uring", pin=(), iomem="malloc"):
    cmd = list(pin) + ["fio", "--name=bench", f"--filename={target}", f"--rw={rw}", f"--bs={bs}",
           f"--iodepth={qd}", f"--runtime={runtime}", "--time_based", f"--size={SIZE}",
           "--output-format=json", "--randrepeat=0", "--norandommap", "--lat_percentiles=1",
           f"--numjobs={jobs}", "--thread", "--group_reporting"]
    if engine == "null":
        cmd += ["--ioengine=null"]
    else:
        cmd += ["--ioengine=io_uring", "--fixedbufs", "--registerfiles", "--direct=1",
                f"--iomem={iomem}"]
    if rw == "randrw":
        cmd += ["--rwmixread=50"]
    out, cpu = timed(cmd + content(target))
    job = json.loads(out[out.index("{"):])["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    secs = max(job["read"]["runtime"], job["write"]["runtime"]) / 1000.0
    nbytes = job["read"]["io_bytes"] + job["write"]["io_bytes"]
    main = job["read"] if job["read"]["total_ios"] else job["write"]
    return dict(iops=ios / secs, mbs=nbytes / secs / 1e6, cpu=cpu, ios=ios, **fio_lat(main))


def run_ds(target, rw, bs, qd, runtime, jobs=1, backend="uring", pin=()):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = list(pin) + [BIN, "run", "--target", target, "--rw", rw, "--bs", bs, "--iodepth", str(qd),
               "--runtime", f"{runtime}s", "--size", SIZE, "--json", f.name, "-q",
               "--backend", backend, "--jobs", str(jobs)]
        _, cpu = timed(cmd)
        r = json.load(open(f.name))
    s = r["summary"]
    ios = s["read"]["ios"] + s["write"]["ios"]
    secs = s["duration_ns"] / 1e9
    main = s["read"] if s["read"]["ios"] else s["write"]
    lat = main["lat"]
    return dict(iops=ios / secs, mbs=(s["read"]["bytes"] + s["write"]["bytes"]) / secs / 1e6,
                cpu=cpu, ios=ios, mean=lat["mean_ns"], p50=lat["p50_ns"], p99=lat["p99_ns"],
                p999=lat["p99_9_ns"], features=r["environment"].get("ring_features", []),
                huge=huge_buffers(r["environment"].get("io_path") or {}),
                io_workers=r["environment"].get("io_workers_seen", 0))


def huge_buffers(io_path):
    """Whether a run's buffers were all in 2 MiB huge pages (its measured `io_path`)."""
    return io_path.get("buffer_bytes", 0) > 0 and \
        io_path.get("huge_page_bytes", 0) >= io_path.get("buffer_bytes", 0)


def fio_step(target, spec, runtime, iomem, pin=()):
    """fio with a preset step's parameters; MB/s and IOPS of its direction."""
    rw = spec["rw"]
    cmd = list(pin) + ["fio", "--name=step", f"--filename={target}", f"--rw={rw}",
           f"--bs={spec['bs']}", f"--iodepth={spec['iodepth']}", f"--numjobs={spec['jobs']}",
           f"--size={spec['size']}", f"--runtime={runtime}", "--time_based",
           "--output-format=json", "--randrepeat=0", "--norandommap", "--thread",
           "--group_reporting", "--ioengine=io_uring", "--fixedbufs", "--registerfiles",
           "--direct=1", f"--iomem={iomem}"]
    out, cpu = timed(cmd + content(target))
    job = json.loads(out[out.index("{"):])["jobs"][0]
    d = job["write"] if "write" in rw else job["read"]
    secs = d["runtime"] / 1000.0
    return dict(mbs=d["io_bytes"] / secs / 1e6 if secs else 0.0,
                iops=d["total_ios"] / secs if secs else 0.0, cpu=cpu)


def ds_preset(target, preset, runtime, pin=()):
    """diskscope's whole preset; per step its spec, MB/s, IOPS and buffer backing."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = list(pin) + [BIN, "run", "--target", target, "--preset", preset,
                           "--runtime", f"{runtime}s", "--json", f.name, "-q"]
        if preset.startswith("cdm"):
            cmd += ["--count", "1"]
        timed(cmd)
        r = json.load(open(f.name))
    steps = []
    for st in r["steps"]:
        spec, summ = st["spec"], st["summary"]
        d = summ["write"] if "write" in spec["rw"] else summ["read"]
        io_path = st.get("io_path") or {}
        huge = huge_buffers(io_path)
        steps.append(dict(name=st["name"], spec=dict(rw=spec["rw"], bs=spec["bs"],
                     iodepth=spec["iodepth"], jobs=spec["jobs"], size=spec["size"]),
                     mbs=d["mb_s"], iops=d["iops"], huge=huge,
                     split=[io_path.get("read_requests_per_io"),
                            io_path.get("write_requests_per_io")],
                     workers=io_path.get("worker_threads", 0)))
    return steps


def reserve_huge_pages(n):
    """Reserves n 2 MiB pages for fio's shmhuge; returns the old setting to restore."""
    path = "/proc/sys/vm/nr_hugepages"
    old = open(path).read().strip()
    with open(path, "w") as fh:
        fh.write(str(n))
    got = int(open(path).read().strip())
    if got < n:
        print(f"note: only {got} of {n} huge pages could be reserved", file=sys.stderr)
    return old


def presets_case(args, targets, pin):
    """Every step of the named presets against fio, matched and default buffers."""
    res = dict(pairs=args.pairs, runtime_s=args.runtime,
               generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               host=platform.node(), kernel=platform.release(), cpus=os.cpu_count(),
               fio=subprocess.check_output(["fio", "--version"]).decode().strip(),
               thp=open("/sys/kernel/mm/transparent_hugepage/enabled").read().strip(),
               presets=[])
    old = reserve_huge_pages(args.huge_pages)
    try:
        for kind, desc, target in targets:
            for preset in [p for p in args.presets.split(",") if p]:
                runs = []
                for i in range(args.pairs):
                    print(f"{kind}: {preset}, pair {i + 1}/{args.pairs}", file=sys.stderr)

                    def fio_all(steps):
                        return [(fio_step(target, st["spec"], args.runtime,
                                          "shmhuge" if st["huge"] else "malloc", pin),
                                 fio_step(target, st["spec"], args.runtime, "malloc", pin))
                                for st in steps]
                    # Alternated: odd pairs run fio first (with the steps of the first pair),
                    # so that a drift of the machine does not favour either tool.
                    if i % 2 == 1:
                        fio = fio_all(runs[0])
                        steps = ds_preset(target, preset, args.runtime, pin)
                    else:
                        steps = ds_preset(target, preset, args.runtime, pin)
                        fio = fio_all(steps)
                    for st, (matched, default) in zip(steps, fio):
                        st["fio"], st["fio_default"] = matched, default
                    runs.append(steps)
                res["presets"].append(dict(target=kind, target_desc=desc, preset=preset,
                                           runs=runs))
    finally:
        with open("/proc/sys/vm/nr_hugepages", "w") as fh:
            fh.write(old)
    return res


def pairs(n, fio_fn, ds_fn):
    return [dict(fio=fio_fn(), ds=ds_fn()) for _ in range(n)]


def setup_loop(size_bytes):
    if os.geteuid() != 0 or not os.path.isdir("/dev/shm") or not shutil.which("losetup"):
        return None, None
    backing = tempfile.NamedTemporaryFile(dir="/dev/shm", prefix="diskscope-bench-", delete=False)
    backing.truncate(size_bytes)
    backing.close()
    dev = subprocess.check_output(["losetup", "--find", "--show", backing.name]).decode().strip()
    return dev, backing.name


def setup_zram(size_bytes):
    """The zram block device at size_bytes (root, /sys/block/zram0 present); None otherwise.

    A real block device with the block layer's whole path and completions inline: no kworker
    and no virtio between the tools and the kernel. It compresses, so it is filled with the
    same incompressible data for both tools (diskscope's default random pattern, as fio's
    default buffers are random) before anything reads it."""
    sysfs = "/sys/block/zram0"
    if os.geteuid() != 0 or not os.path.isdir(sysfs):
        return None
    teardown_zram()
    with open(f"{sysfs}/disksize", "w") as fh:
        fh.write(str(size_bytes))
    return "/dev/zram0"


def teardown_zram():
    """Resets zram (its memory back to the system). udev opens the device for a moment after
    each writer closes it, and a reset then fails with EBUSY: retried for up to 10 s."""
    for _ in range(100):
        try:
            with open("/sys/block/zram0/reset", "w") as fh:
                fh.write("1")
            return
        except OSError as e:
            if e.errno != 16:
                raise
            time.sleep(0.1)
    sys.exit("zram0 stayed busy for 10 s: reset it with `echo 1 > /sys/block/zram0/reset`")


def keep_other_targets(results, out, ran):
    """Carries over from the previous `out` the rows of targets this invocation did not run
    (`--targets zram` refreshes the zram rows and keeps the file's and the loop's) and of the
    presets it did not run there (`--presets cdm-peak` keeps the others), each entry keeping
    its own `generated` time."""
    if not os.path.exists(out):
        return
    try:
        old = json.load(open(out))
    except ValueError:
        return
    # A preset is re-measured on a target only when this run ran that preset there.
    redone = {(e["target"], e["preset"]) for e in results.get("presets", [])}
    for key in ("real", "presets"):
        if key in results:
            kept = [dict(e, generated=e.get("generated", old.get("generated")))
                    for e in old.get(key, [])
                    if e.get("target") not in ran
                    or (key == "presets" and (e["target"], e["preset"]) not in redone)]
            results[key] = kept + results[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp/diskscope-bench")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "engine.json"))
    ap.add_argument("--cpu", default=str(os.cpu_count() - 1),
                    help="CPU list both tools are pinned to for case 2 (taskset -c; 'none' for no "
                         "pinning). Unpinned, the loop device's QD1 latency depends on whether its "
                         "worker lands on the tool's CPU and swings 2x between runs")
    ap.add_argument("--presets", default="",
                    help="compare every step of these presets with fio (e.g. "
                         "cdm,cdm-peak,atto,orion-matrix) instead of cases 1 and 2")
    ap.add_argument("--huge-pages", type=int, default=320,
                    help="2 MiB pages reserved for fio's --iomem=shmhuge during --presets")
    ap.add_argument("--cases", default="",
                    help="comma-separated substrings of case names to run ('null' for case 1)")
    ap.add_argument("--targets", default="zram,file,loop",
                    help="comma-separated targets for case 2 and the presets: zram, file, loop")
    args = ap.parse_args()
    if args.pairs < 1 or args.runtime < 1:
        sys.exit(f"--pairs {args.pairs} / --runtime {args.runtime}: both must be at least 1")
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio)")
    if not os.path.exists(BIN):
        subprocess.check_call(["cargo", "build", "--release", "-q", "-p", "agent", "--bin",
                               "diskscope"], cwd=ROOT)
    if args.presets and args.out.endswith("engine.json"):
        args.out = os.path.join(ROOT, "bench", "out", "presets.json")
    wanted = [c for c in args.cases.split(",") if c]
    want = lambda name: not wanted or any(w in name for w in wanted)
    results = dict(pairs=args.pairs, runtime_s=args.runtime,
                   generated=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   host=platform.node(), kernel=platform.release(), cpus=os.cpu_count(),
                   fio=subprocess.check_output(["fio", "--version"]).decode().strip(),
                   null=[], real=[])

    for jobs in NULL_JOBS if not args.presets else []:
        for qd in NULL_DEPTHS:
            if not want(f"null QD{qd} jobs{jobs}"):
                continue
            print(f"null QD{qd} jobs {jobs}", file=sys.stderr)
            res = pairs(args.pairs,
                        lambda: run_fio("null", "randread", "4k", qd, args.runtime, jobs, "null"),
                        lambda: run_ds("null", "randread", "4k", qd, args.runtime, jobs, "null"))
            results["null"].append(dict(qd=qd, jobs=jobs, pairs=res))

    os.makedirs(args.dir, exist_ok=True)
    file_target = os.path.join(args.dir, "bench.bin")
    real = [c for c in REAL_CASES if want(c[0])] if not args.presets else []
    targets = []
    dev = backing = zram = None
    on = set(args.targets.split(",")) if real or args.presets else set()

    def fill(target, *size):
        # Real, incompressible data once, for both tools: a sparse file reads 10x fast, and
        # zram reads an unwritten page as zeros without a copy.
        subprocess.check_call([BIN, "run", "--target", target, *size, "--rw", "write", "--bs",
                               "1M", "--iodepth", "8", "-q"], stdout=subprocess.DEVNULL)
    if "zram" in on:
        zram = setup_zram(ZRAM_SIZE)
        if zram:
            fill(zram)
            targets.append(("zram", "zram block device in memory, O_DIRECT", zram))
        else:
            print("note: not root or no /sys/block/zram0: zram cases skipped", file=sys.stderr)
            results["skipped_zram"] = "zram cases: not root or no /sys/block/zram0"
    if "file" in on:
        fill(file_target, "--size", SIZE)
        targets.append(("file", "file on the root filesystem, O_DIRECT", file_target))
    if "loop" in on:
        dev, backing = setup_loop(1 << 30)
        if dev:
            fill(dev)
            targets.append(("loop", "loop device backed by a file in /dev/shm", dev))
        else:
            print("note: not root or no losetup: loop device cases skipped", file=sys.stderr)
            results["skipped"] = "loop device cases: not root or no losetup"
    # Case 2 only: the null engine's two-job case needs both CPUs.
    pin = ()
    if args.cpu != "none" and shutil.which("taskset"):
        pin = ("taskset", "-c", args.cpu)
        results["pinned_cpus"] = args.cpu
    old_huge = None
    try:
        if args.presets:
            results = presets_case(args, targets, pin)
        # The same buffer memory for both (huge pages, diskscope's default: fio's shmhuge
        # takes them from the reserve); each run's own backing is recorded.
        old_huge = reserve_huge_pages(args.huge_pages) if real else None
        if real:
            results["fio_iomem"] = "shmhuge"
        for kind, desc, target in targets:
            for name, rw, bs, qd, named in real:
                print(f"{kind}: {name}", file=sys.stderr)
                res = pairs(args.pairs,
                            lambda: run_fio(target, rw, bs, qd, args.runtime, pin=pin,
                                            iomem="shmhuge"),
                            lambda: run_ds(target, rw, bs, qd, args.runtime, pin=pin))
                results["real"].append(dict(target=kind, target_desc=desc, device=target,
                                            name=name, named=named, pairs=res))
    finally:
        if real and old_huge is not None:
            with open("/proc/sys/vm/nr_hugepages", "w") as fh:
                fh.write(old_huge)
        if dev:
            subprocess.call(["losetup", "-d", dev])
            os.unlink(backing)
        if zram:
            teardown_zram()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    keep_other_targets(results, args.out, [t[0] for t in targets])
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
