#!/usr/bin/env python3
"""The cost model's estimate of each timed variant against its measured time.

For every `lift bench --json` result under the given folders (or `.tgz` archives of them, as
`bench/results/raw/` keeps them), runs `lift explore` on the program at the timed sizes and finds
the timed variant among the explored ones by its description (the mapping notes and the term);
its estimated cost is the model's figure for it. A variant the current compiler no longer
explores is counted apart. The cost unit is not a time: the ratio measured / estimate is scaled
by one factor for all variants (the geometric mean of the ratios), and the spread is how far each
scaled ratio is from 1 (the issue asks for every one within 2x). A free log-log fit
(ln t = a ln cost + c, as `lift tune` calibrates the model) is printed too.

Usage: scripts/cost-vs-measured.py [--lift target/release/lift] [--top 64] [--md OUT.md] RAW...
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tarfile
import tempfile


def results(paths):
    """(origin, path of a json) for every bench result under the paths."""
    for p in paths:
        if p.endswith(".tgz"):
            d = tempfile.mkdtemp()
            with tarfile.open(p) as t:
                t.extractall(d, filter="data")
            base = os.path.basename(p)[: -len(".tgz")]
        else:
            d, base = p, os.path.basename(p.rstrip("/"))
        for root, _, files in os.walk(d):
            for f in sorted(files):
                if f.endswith(".json"):
                    yield base, os.path.join(root, f)


def explore(lift, program, sizes, top, cache):
    key = (program, tuple(sorted(sizes.items())))
    if key not in cache:
        args = [lift, "explore", program, "--top", str(top)]
        for k, v in sorted(sizes.items()):
            args += ["--size", f"{k}={v}"]
        out = subprocess.run(args, capture_output=True, text=True, timeout=120).stdout
        found = {}
        lines = out.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r";; variant \d+: estimated cost ([0-9.e+-]+)", line)
            if m and i + 1 < len(lines) and lines[i + 1].startswith(";; "):
                found.setdefault(lines[i + 1][3:], float(m.group(1)))
        cache[key] = found
    return cache[key]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lift", default="target/release/lift")
    ap.add_argument("--top", type=int, default=64)
    ap.add_argument("--md")
    ap.add_argument("raw", nargs="+")
    a = ap.parse_args()
    cache, rows, missing = {}, [], []
    seen = set()
    for origin, path in results(a.raw):
        try:
            r = json.load(open(path))
        except (OSError, ValueError):
            continue
        if not isinstance(r, dict) or "variant" not in r or "total_ms" not in r:
            continue
        prog = r["program"]
        if not os.path.exists(prog):
            missing.append((origin, prog, "program not in this tree"))
            continue
        key = (prog, json.dumps(r["sizes"], sort_keys=True), r["variant"])
        if key in seen:
            continue
        seen.add(key)
        costs = explore(a.lift, prog, r["sizes"], a.top, cache)
        if r["variant"] in costs:
            rows.append((origin, prog, r["sizes"], costs[r["variant"]], r["total_ms"]))
        else:
            missing.append((origin, prog, "variant no longer explored"))
    if not rows:
        print("no timed variant found among the explored ones", file=sys.stderr)
        return 1
    logs = [math.log(ms / c) for *_, c, ms in rows if c > 0 and ms > 0]
    scale = math.exp(sum(logs) / len(logs))
    xs = [math.log(c) for *_, c, ms in rows if c > 0 and ms > 0]
    ys = [math.log(ms) for *_, c, ms in rows if c > 0 and ms > 0]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-12, sum((x - mx) ** 2 for x in xs))
    out = []
    out.append("| origin | program | sizes | estimate | measured (ms) | measured ÷ (scale × estimate) |")
    out.append("|---|---|---|---|---|---|")
    ratios = []
    for origin, prog, sizes, c, ms in sorted(rows, key=lambda r: r[4] / (scale * r[3])):
        q = ms / (scale * c)
        ratios.append(q)
        sz = " ".join(f"{k}={v}" for k, v in sorted(sizes.items()))
        out.append(f"| {origin} | {prog} | {sz} | {c:.1f} | {ms:.4f} | {q:.2f} |")
    within = sum(1 for q in ratios if 0.5 <= q <= 2.0)
    spread = max(max(ratios), 1 / min(ratios))
    summary = [
        f"{len(rows)} timed variants found among the explored ones ({len(missing)} not: "
        + ", ".join(sorted({why for *_, why in missing}))
        + ")",
        f"scale: {scale:.3e} ms per cost unit (geometric mean); measured ÷ scaled estimate from "
        f"{min(ratios):.3f} to {max(ratios):.3f}; within 2x: {within} of {len(rows)}; worst factor {spread:.1f}",
        f"free fit: ln t = {slope:.3f}·ln(cost) + {my - slope * mx:.3f}",
    ]
    text = "\n".join(summary) + "\n\n" + "\n".join(out) + "\n"
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
