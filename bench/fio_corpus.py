#!/usr/bin/env python3
"""fio's own example job files against fio (case 7 of bench/run.sh).

Every file in tests/fio-examples/ (fio's examples, GPL-2.0, see the folder's README) is
rewritten to a run on one local file (filename, size --size, runtime --runtime) and run by
fio and by `diskscope run JOB.fio --output-format fio-json`, --pairs times, alternating which
tool goes first (diskscope in the first). Per job (fio's clones summed by job name) read + write KiB/s are compared;
the figure is the median of the pairs' ratios (diskscope / fio). Files diskscope refuses are
listed with the refusal. The target is laid out whole before the first pair and dropped from
the page cache before every run (both tools also invalidate it themselves when buffered).

Usage: bench/fio_corpus.py [--pairs 3] [--size 256M] [--runtime 2] [--dir /var/tmp/...]
                           [--out bench/out/corpus.json] [--only NAME ...] [--fio-twice]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("DISKSCOPE_BIN", os.path.join(ROOT, "target", "release", "diskscope"))
EXAMPLES = os.path.join(ROOT, "tests", "fio-examples")


def rewrite(text, target, size, runtime):
    """The job file as a run on `target`: its sizes `size`, its run times `runtime` s."""
    out = [f"[global]\nfilename={target}\nsize={size}"]
    for line in text.splitlines():
        key = line.split("=")[0].strip()
        if key in ("filename", "directory"):
            continue
        if key == "size":
            line = f"size={size}"
        elif key in ("runtime", "timeout"):
            line = f"{key}={runtime}"
        out.append(line)
    return "\n".join(out) + "\n"


def bandwidths(doc):
    """KiB/s per job name (read + write, clones summed)."""
    bw = {}
    for j in doc.get("jobs", []):
        name = j.get("jobname", "")
        bw[name] = bw.get(name, 0) + j["read"]["bw"] + j["write"]["bw"]
    return bw


def drop_cache(target):
    fd = os.open(target, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


class Refused(Exception):
    """diskscope refused the job file (exit 2), with its message."""


def run(tool, job, out, cwd):
    if tool == "fio":
        cmd = ["fio", job, "--output-format=json", f"--output={out}"]
    else:
        cmd = [BIN, "run", "--quiet", "--output-format", "fio-json", "--output", out, job]
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if tool == "diskscope" and p.returncode == 2:
        raise Refused(p.stderr.strip())
    if p.returncode != 0:
        raise RuntimeError(f"{tool} {job}: exit {p.returncode}: {p.stderr.strip()}")
    with open(out) as f:
        return bandwidths(json.load(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--size", default="256M")
    ap.add_argument("--runtime", type=int, default=2)
    ap.add_argument("--dir", default="/var/tmp/diskscope-bench-corpus")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "corpus.json"))
    ap.add_argument("--fio-twice", action="store_true",
                    help="also run fio a second time in each pair: fio's own spread "
                         "(fio2 / fio) beside diskscope's ratio")
    ap.add_argument("--only", nargs="*", default=[],
                    help="run only these example files (names without .fio)")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    target = os.path.join(args.dir, "corpus.bin")
    subprocess.run([BIN, "run", "-q", "--target", target, "--size", args.size, "--rw", "write",
                    "--bs", "1M"], check=True, capture_output=True)
    result = {"pairs": args.pairs, "size": args.size, "runtime_s": args.runtime,
              "files": {}, "refused": {}}
    for name in sorted(os.listdir(EXAMPLES)):
        if not name.endswith(".fio") or (args.only and name[:-4] not in args.only):
            continue
        with open(os.path.join(EXAMPLES, name)) as f:
            text = f.read()
        if "ioengine=file" in text.replace(" ", ""):
            # fio's metadata engines run in a directory, not on this file: their operation
            # counts are checked against fio's in the suite (files::fios_metadata_examples…)
            # and their latencies in bench/files.py (case 9).
            result["elsewhere"] = result.get("elsewhere", []) + [name]
            print(f"{name}: a metadata engine (a directory's files): case 9 and the suite", file=sys.stderr)
            continue
        job = os.path.join(args.dir, name)
        with open(job, "w") as w:
            w.write(rewrite(text, target, args.size, args.runtime))
        jobs = {}
        for i in range(args.pairs):
            # diskscope first in the first pair: a file it refuses costs no fio run.
            order = ["diskscope", "fio"] if i % 2 == 0 else ["fio", "diskscope"]
            if args.fio_twice:
                order.append("fio2")
            got = {}
            try:
                for tool in order:
                    drop_cache(target)
                    got[tool] = run(tool.rstrip("2"), job,
                                    os.path.join(args.dir, f"{name}.{tool}.json"), args.dir)
            except Refused as why:
                result["refused"][name] = str(why)
                print(f"{name}: refused: {why}", file=sys.stderr)
                break
            for jn, fio_bw in got["fio"].items():
                ds_bw = got["diskscope"].get(jn, 0)
                j = jobs.setdefault(jn, {"fio": [], "diskscope": [], "ratio": []})
                j["fio"].append(fio_bw)
                j["diskscope"].append(ds_bw)
                j["ratio"].append(ds_bw / fio_bw if fio_bw else None)
                if "fio2" in got:
                    again = got["fio2"].get(jn, 0)
                    j.setdefault("fio_self", []).append(again / fio_bw if fio_bw else None)
        for jn, j in jobs.items():
            rs = [r for r in j["ratio"] if r is not None]
            j["ratio_median"] = statistics.median(rs) if rs else None
            own = [r for r in j.get("fio_self", []) if r is not None]
            spread = ""
            if own:
                j["fio_self_range"] = [min(own), max(own)]
                spread = f", fio's own again/first {min(own):.2f}..{max(own):.2f}"
            print(f"{name} [{jn}]: fio {statistics.median(j['fio'])} KiB/s, diskscope "
                  f"{statistics.median(j['diskscope'])} KiB/s, ratio "
                  f"{j['ratio_median'] and round(j['ratio_median'], 2)}{spread}", file=sys.stderr)
        if name not in result["refused"]:
            result["files"][name] = jobs
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
