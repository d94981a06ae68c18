#!/usr/bin/env python3
"""Case 10: the probe (`diskscope probe`) against ioping, and the idle sweep on emulated drives.

ioping 1.3 (`ioping -D -c 30 -i 0.1 -J`) and `diskscope probe --direct --count 30 --interval
100ms --ioping-json` on the same file (on the root filesystem) and the same loop device (root
only; made and removed by this script), alternating, in pairs: the requests each made, and
the median latency of the counted ones. Then, as root with FUSE, `diskscope probe --idle-sweep`
on emulated drives with drawn power states: each state's idle time and wake against what the
sweep found.

Usage: bench/probe.py [--pairs 3] [--models 4] [--out bench/out/probe.json]
"""

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DS = os.path.join(ROOT, "target", "release", "diskscope")


def records(out):
    doc = json.loads(out)
    ios = [r for r in doc if "io" in r]
    counted = sorted(r["io"]["time"] for r in ios if not r["io"]["ignored"])
    return {"requests": len(ios), "median_ns": counted[len(counted) // 2]}


def ioping(target):
    return records(subprocess.run(["ioping", "-D", "-c", "30", "-i", "0.1", "-J", target],
                                  check=True, capture_output=True, text=True).stdout)


def probe(target):
    return records(subprocess.run([DS, "probe", "--direct", "--count", "30", "--interval",
                                   "100ms", "--ioping-json", target],
                                  check=True, capture_output=True, text=True).stdout)


def pairs_on(target, pairs):
    rows = []
    for i in range(pairs):
        order = ["ioping", "ds"] if i % 2 == 0 else ["ds", "ioping"]
        got = {}
        for tool in order:
            got[tool] = ioping(target) if tool == "ioping" else probe(target)
        rows.append(got)
    return rows


def loop_device(base):
    if os.geteuid() != 0:
        return None
    img = os.path.join(base, "loop.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    dev = subprocess.run(["losetup", "--find", "--show", "--sector-size", "4096", img],
                         capture_output=True, text=True)
    return dev.stdout.strip() if dev.returncode == 0 else None


def sweep(models, seed):
    """Drawn power-state models on the emulated drive: what the sweep found."""
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        return []
    rnd = random.Random(seed)
    log = lambda lo, hi: math.exp(rnd.uniform(math.log(lo), math.log(hi)))
    out = []
    for m in range(models):
        t1, w1 = log(3, 80), log(1500, 6000)
        states = [(t1, w1)]
        if m % 2 == 0:
            states.append((log(4 * t1, 400), log(1.6 * w1, 20000)))
        model = {"capacity": 268435456, "read_mbps": 2000,
                 "power_states": [{"after_ms": t, "wake_us": w} for t, w in states]}
        mnt = tempfile.mkdtemp(dir="/var/tmp", prefix="ds-bench-emu-")
        emu = subprocess.Popen([DS, "emulate", "--mount", mnt, "--model", json.dumps(model)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                if os.path.exists(os.path.join(mnt, "disk.img")):
                    break
                time.sleep(0.05)
            with tempfile.NamedTemporaryFile(suffix=".json") as f:
                subprocess.run([DS, "probe", "--idle-sweep", "--idle-max", "1s", "--repeat", "3",
                                "-q", "--json", f.name, os.path.join(mnt, "disk.img")],
                               check=True, capture_output=True)
                curve = json.load(open(f.name))["analysis"]["probe"]["idle_curve"]
            out.append({"states": [{"after_ms": t, "wake_us": w} for t, w in states],
                        "knees": curve["knees"], "awake_ns": curve["awake_ns"]})
        finally:
            emu.terminate()
            emu.wait()
            subprocess.run(["umount", mnt], capture_output=True)
            shutil.rmtree(mnt, ignore_errors=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "probe.json"))
    args = ap.parse_args()
    if not os.path.exists(DS):
        subprocess.run(["cargo", "build", "--release", "-p", "agent", "--quiet"], cwd=ROOT,
                       check=True)
    targets = {}
    base = tempfile.mkdtemp(dir="/var/tmp", prefix="ds-bench-probe-")
    dev = None
    try:
        f = os.path.join(base, "probe.bin")
        with open(f, "wb") as fh:
            fh.write(os.urandom(8 << 20))
        targets["file"] = pairs_on(f, args.pairs)
        dev = loop_device(base)
        if dev:
            targets["loop"] = pairs_on(dev, args.pairs)
    finally:
        if dev:
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
    version = subprocess.run(["ioping", "-v"], capture_output=True, text=True).stdout.strip()
    doc = {"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "ioping": version, "pairs": args.pairs, "targets": targets, "seed": args.seed,
           "sweep": sweep(args.models, args.seed)}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    json.dump(doc, open(args.out, "w"), indent=1)
    for name, rows in targets.items():
        r = [x["ds"]["median_ns"] / x["ioping"]["median_ns"] for x in rows]
        print(f"{name}: median latency diskscope/ioping {statistics.median(r):.2f}")


if __name__ == "__main__":
    main()
