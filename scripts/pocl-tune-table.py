#!/usr/bin/env python3
"""The PoCL tuning table of issue 11 (items 4 and 5): every CGO'17 suite program at a medium
size, tuned with `lift tune --budget`, against its default lowering (the program as written)
and the cost model's pick (its top variant at the default work-group size, what `lift run`
uses without a tuning cache). All programs share one tuning cache, which starts empty, so the
device's cost-model calibration grows over the sweep.

Usage: scripts/pocl-tune-table.py [--lift target/release/lift] [--budget 30s] [--out FILE.md]
                                  [--only a,b] [--cache DIR]

`--cache DIR` keeps the tuning cache (and so the calibration) in DIR instead of a fresh
temporary folder: a sweep split over several invocations (e.g. two time-limited calls on a
remote host, DIR carried from the first to the second) grows one calibration as a single
sweep would.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# (program, sizes): medium sizes, small enough that the interpreter checks every variant.
SUITE = [
    ("nn", ["N=1048576"]),
    ("mriq_phimag", ["K=262144"]),
    ("mriq", ["X=4096", "K=256"]),
    ("kmeans_rows", ["P=16384", "F=34", "C=5"]),
    ("kmeans_fmajor", ["P=16384", "F=34", "C=5"]),
    ("md_rows", ["N=8192", "M=128"]),
    ("md_nmajor", ["N=8192", "M=128"]),
    ("convolution_row", ["H=512", "W=512"]),
    ("convolution_col", ["H=512", "W=512"]),
    ("gemv_n", ["M=1024", "N=1024"]),
    ("gemv_t", ["M=1024", "N=1024"]),
    ("atax", ["M=1024", "N=1024"]),
    ("gesummv", ["M=1024", "N=1024"]),
    ("mm", ["M=128", "K=128", "N=128"]),
    ("nbody", ["N=2048"]),
    ("sum", ["N=4194304"]),
    ("transpose", ["M=1024", "N=1024"]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lift", default="target/release/lift")
    ap.add_argument("--budget", default="30s")
    ap.add_argument("--device", default=None, help="P:D of the device (default: all)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="comma-separated program names")
    ap.add_argument("--cache", default=None, help="tuning cache folder, kept between invocations")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if args.cache:
        os.makedirs(args.cache, exist_ok=True)
        cache = args.cache
    else:
        cache = tempfile.mkdtemp(prefix="lift-tune-table-")
    env = dict(os.environ, LIFT_CACHE_DIR=cache)
    lines = []
    raw = []

    def write():
        calib = None
        for chunk in reversed(raw):
            m = re.search(r"^calibration of the cost model.*$", chunk, re.M)
            if m:
                calib = m.group(0)
                break
        head = [
            f"# `lift tune --budget {args.budget}` on PoCL, {datetime.date.today().isoformat()}",
            "",
            "Command (from the repository root, release build):",
            "",
            "```sh",
            f"scripts/pocl-tune-table.py --lift {args.lift} --budget {args.budget}"
            + (f" --device {args.device}" if args.device else "")
            + (f" --only {args.only}" if args.only else ""),
            "```",
            "",
            "Times are kernel times (ms, OpenCL profiling events): the leaders of each search are the median of",
            "5 runs, every other configuration one run. *naive*: the program as written (its default lowering);",
            "*cost-model pick*: the model's top variant at the default work-group size (what `lift run` uses",
            "without a tuning cache); *tuned*: the fastest configuration whose result equals the interpreter.",
            "*wall* and *RSS*: the whole `lift tune` (exploration, interpreter checks, compiles, runs).",
            "",
            "| program | sizes | naive ms | cost-model pick ms | tuned ms | tuned vs naive | tuned vs pick | best (how found) | configs tried | wall s | max RSS MiB |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        text = "\n".join(head + lines) + "\n"
        if calib:
            text += f"\nCalibration after the sweep: {calib}\n"
        text += "\n<details><summary>lift tune outputs</summary>\n\n```\n" + "\n".join(raw) + "```\n</details>\n"
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)

    for name, sizes in SUITE:
        if only and name not in only:
            continue
        table = os.path.join(cache, f"{name}.json")
        cmd = [args.lift, "tune", f"bench/cgo17/{name}.lisp", "--budget", args.budget, "--out", table]
        for s in sizes:
            cmd += ["--size", s]
        if args.device:
            cmd += ["--devices", args.device]
        t0 = time.time()
        p = subprocess.run(["/usr/bin/time", "-v"] + cmd, env=env, capture_output=True, text=True)
        wall = time.time() - t0
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        rss_mib = int(rss.group(1)) / 1024 if rss else float("nan")
        raw.append(f"== {' '.join(cmd[1:])}\n{p.stdout}{p.stderr if p.returncode else ''}")
        print(f"{name}: exit {p.returncode}, {wall:.1f} s, {rss_mib:.0f} MiB", file=sys.stderr)
        if p.returncode != 0:
            err = p.stderr.strip().splitlines()
            msg = next((l for l in err if l.startswith("error") or "×" in l), err[-1] if err else "")
            lines.append(f"| {name} | {' '.join(sizes)} | failed: {msg[:120]} | | | | | | | {wall:.0f} | {rss_mib:.0f} |")
            write()
            continue
        rows = json.load(open(table))
        usable = [r for r in rows if r["median_ms"] is not None and r["check"] in ("ok", "unchecked")]
        naive = next((r for r in rows if r["variant"] == 0 and not r["work_group"]), None)
        pick = next((r for r in rows if r["variant"] == 1 and not r["work_group"]), None)
        best = min(usable, key=lambda r: (r["check"] != "ok", r["median_ms"])) if usable else None
        tried = re.search(r"search: (\d+) configuration", p.stdout)
        how = re.search(r"best: (.*?)(; [\d.]+x the naive.*)?$", p.stdout, re.M)

        def ms(r):
            return f"{r['median_ms']:.4f}" if r and r["median_ms"] is not None else "-"

        def ratio(a, b):
            if a and b and a["median_ms"] and b["median_ms"]:
                return f"{a['median_ms'] / b['median_ms']:.2f}x"
            return "-"

        lines.append(
            f"| {name} | {' '.join(sizes)} | {ms(naive)} | {ms(pick)} | {ms(best)} | {ratio(naive, best)} | "
            f"{ratio(pick, best)} | {how.group(1) if how else '-'} | {tried.group(1) if tried else '-'} | "
            f"{wall:.0f} | {rss_mib:.0f} |"
        )
        # after every program, so that a sweep cut short by a time limit keeps what it measured
        write()
    write()


if __name__ == "__main__":
    main()
