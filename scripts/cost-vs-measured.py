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

The model's time estimate (`rewrite::cost::time`: `lift explore` prints it beside the cost,
with the variant's kernels, the bytes they read and write and the scalars they write) is compared too:
measured / estimated ms, unscaled. `--fit` fits two of that estimate's constants (the bandwidth
and the ms per unit of work beyond the compulsory traffic; the launch is a measured constant) on
the programs whose path's CRC-32 is not 0 mod 3, minimising the sum of ln(1 + (ln r / ln 2)^2)
over their ratios r (a robust loss: a variant whose cost is wrong in kind, several times off,
weighs little more than one 2x off), and reports the within-2x count and the spread on the
held-out rest, on the fitting part and on all.

Usage: scripts/cost-vs-measured.py [--lift target/release/lift] [--top 64] [--device H200] [--fit] [--md OUT.md] RAW...
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
import zlib


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
        found, ordered = {}, []
        lines = out.splitlines()
        for i, line in enumerate(lines):
            m = re.match(
                r";; variant (\d+): estimated cost ([0-9.e+-]+), about ([0-9.e+-]+) ms "
                r"\(([0-9.e+-]+) kernels, ([0-9.e+-]+) bytes read and written, ([0-9.e+-]+) scalars written\)",
                line,
            )
            if m and i + 1 < len(lines) and lines[i + 1].startswith(";; "):
                v = dict(zip(("rank", "cost", "est", "kernels", "bytes", "written"), (float(g) for g in m.groups())))
                ordered.append(v)
                found.setdefault(lines[i + 1][3:], dict(v, below=list(ordered)))
        cache[key] = found
    return cache[key]


# the cost model's constants the time estimate's work leaves out (`rewrite::cost`: LAUNCH, MEM),
# and the launch in ms (`rewrite::cost::time::LAUNCH_MS`, measured, not fitted)
LAUNCH, MEM = 2000.0, 0.05
LAUNCH_MS = 0.004


def work(v):
    return max(0.0, v["cost"] - LAUNCH * v["kernels"] - v["written"] * MEM)


def kernels_ms(p, v):
    """`rewrite::cost::time::Kernels::ms` with constants p = (bytes per ms, ms per unit)."""
    bw, unit = p
    return LAUNCH_MS * max(v["kernels"], 1.0) + max(v["bytes"] / bw, unit * work(v))


def model_ms(p, row):
    """The estimate of `lift explore` (`rewrite::cost::time::ordered`): no less than a cheaper
    variant's of the same program."""
    return max(kernels_ms(p, v) for v in row["below"])


def fit(rows):
    """The constants minimising the robust loss (module docs) of measured / estimate, in logs
    (Nelder-Mead from a bandwidth of 4 TB/s and 1 ns a unit)."""

    def loss(q):
        p = [math.exp(v) for v in q]
        return sum(math.log(1 + (math.log(r["ms"] / model_ms(p, r)) / math.log(2)) ** 2) for r in rows)

    n = 2
    simplex = [[math.log(4e9), math.log(1e-6)]]
    for k in range(n):
        v = list(simplex[0])
        v[k] += 1.0
        simplex.append(v)
    for _ in range(3000):
        simplex.sort(key=loss)
        best, worst = simplex[0], simplex[-1]
        c = [sum(v[k] for v in simplex[:-1]) / n for k in range(n)]
        refl = [c[k] + (c[k] - worst[k]) for k in range(n)]
        if loss(refl) < loss(best):
            exp = [c[k] + 2 * (c[k] - worst[k]) for k in range(n)]
            simplex[-1] = exp if loss(exp) < loss(refl) else refl
        elif loss(refl) < loss(simplex[-2]):
            simplex[-1] = refl
        else:
            con = [c[k] + 0.5 * (worst[k] - c[k]) for k in range(n)]
            if loss(con) < loss(worst):
                simplex[-1] = con
            else:
                simplex = [best] + [[best[k] + 0.5 * (v[k] - best[k]) for k in range(n)] for v in simplex[1:]]
    simplex.sort(key=loss)
    return [math.exp(v) for v in simplex[0]]


def held_out(prog):
    return zlib.crc32(prog.encode()) % 3 == 0


def spread(qs):
    """(within 2x, count, lowest, highest, worst factor) of measured / estimate ratios."""
    if not qs:
        return (0, 0, float("nan"), float("nan"), float("nan"))
    return (
        sum(1 for q in qs if 0.5 <= q <= 2.0),
        len(qs),
        min(qs),
        max(qs),
        max(max(qs), 1 / min(qs)),
    )


def spread_text(name, qs):
    w, n, lo, hi, worst = spread(qs)
    return f"| {name} | {w} of {n} | {lo:.3f} | {hi:.3f} | {worst:.1f} |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lift", default="target/release/lift")
    ap.add_argument("--top", type=int, default=64)
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--device", default="H200", help="only results whose device's name contains this")
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
        if a.device not in (r.get("device") or ""):
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
        if r["variant"] in costs and r["total_ms"] > 0:
            v = costs[r["variant"]]
            rows.append(dict(v, origin=origin, prog=prog, sizes=r["sizes"], ms=r["total_ms"], chosen=v["rank"] == 0))
        else:
            missing.append((origin, prog, "variant no longer explored"))
    if not rows:
        print("no timed variant found among the explored ones", file=sys.stderr)
        return 1
    # the cost units with one scale for all (geometric mean), and the free log-log fit
    logs = [math.log(r["ms"] / r["cost"]) for r in rows]
    scale = math.exp(sum(logs) / len(logs))
    xs = [math.log(r["cost"]) for r in rows]
    ys = [math.log(r["ms"]) for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / max(1e-12, sum((x - mx) ** 2 for x in xs))
    train = [r for r in rows if not held_out(r["prog"])]
    test = [r for r in rows if held_out(r["prog"])]
    summary = [
        f"{len(rows)} timed variants found among the explored ones ({len(missing)} not: "
        + ", ".join(f"{sum(1 for *_, w in missing if w == why)} {why}" for why in sorted({w for *_, w in missing}))
        + f"); fitting part: {len(train)} variants of {len(set(r['prog'] for r in train))} programs, "
        f"held out: {len(test)} variants of {len(set(r['prog'] for r in test))} programs",
        f"free fit of the cost units: ln t = {slope:.3f}·ln(cost) + {my - slope * mx:.3f}",
        "",
        "| estimate | within 2x | lowest measured ÷ estimate | highest | worst factor |",
        "|---|---|---|---|---|",
        spread_text("cost units × one scale (geometric mean), all", [r["ms"] / (scale * r["cost"]) for r in rows]),
        spread_text("the model's ms (`cost::time`), held out", [r["ms"] / r["est"] for r in test]),
        spread_text("the model's ms (`cost::time`), fitting part", [r["ms"] / r["est"] for r in train]),
        spread_text("the model's ms (`cost::time`), all", [r["ms"] / r["est"] for r in rows]),
        spread_text(
            "the model's ms (`cost::time`), the variants it chooses (variant 0)",
            [r["ms"] / r["est"] for r in rows if r["chosen"]],
        ),
    ]
    if a.fit:
        p = fit(train)
        summary += [
            spread_text("refitted on the fitting part, held out", [r["ms"] / model_ms(p, r) for r in test]),
            spread_text("refitted on the fitting part, fitting part", [r["ms"] / model_ms(p, r) for r in train]),
            spread_text("refitted on the fitting part, all", [r["ms"] / model_ms(p, r) for r in rows]),
            "",
            f"fitted on the fitting part (LAUNCH_MS = {LAUNCH_MS} given): BYTES_PER_MS = {p[0]:.4g} "
            f"({p[0] / 1e9:.2f} TB/s), MS_PER_UNIT = {p[1]:.4g}",
        ]
    out = [
        "| origin | program | sizes | cost | estimated ms | measured ms | measured ÷ estimate | held out | chosen |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r["ms"] / r["est"]):
        sz = " ".join(f"{k}={v}" for k, v in sorted(r["sizes"].items()))
        out.append(
            f"| {r['origin']} | {r['prog']} | {sz} | {r['cost']:.1f} | {r['est']:.4f} | {r['ms']:.4f} | "
            f"{r['ms'] / r['est']:.2f} | {'yes' if held_out(r['prog']) else ''} | {'yes' if r['chosen'] else ''} |"
        )
    text = "\n".join(summary) + "\n\n" + "\n".join(out) + "\n"
    print(text)
    if a.md:
        open(a.md, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
