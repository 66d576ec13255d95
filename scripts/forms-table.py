#!/usr/bin/env python3
"""The table of scripts/bench-forms.sh: per computation of bench/forms/, every form's time (lift
bench's total of kernels), its ratio to the fastest form of the same computation (target 1.10),
the suite file's time and the PyTorch anchor measured in the same run, and each form's check at
the medium size. Usage: forms-table.py RAW_DIR."""
import json
import os
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return json.loads(f.read().strip().splitlines()[-1])


def main():
    raw = sys.argv[1]
    forms = defaultdict(list)
    suite, errors = {}, {}
    for name in sorted(os.listdir(raw)):
        stem, ext = os.path.splitext(name)
        parts = stem.split(".")
        if ext == ".err":
            with open(os.path.join(raw, name)) as f:
                errors[stem] = " ".join(f.read().split())[:160]
            if parts[0] == "form":
                forms[parts[1]].append((parts[2], None))
            continue
        if ext != ".json" or parts[0] not in ("form", "suite"):
            continue
        r = load(os.path.join(raw, name))
        if parts[0] == "form":
            forms[parts[1]].append((parts[2], r))
        else:
            suite[parts[1]] = r
    anchors = {}
    ref = {}
    here = os.path.join(os.path.dirname(__file__), "..", "bench", "forms", "reference.tsv")
    for line in open(here):
        if line.startswith("#") or not line.strip():
            continue
        comp, _file, anchor, *_ = line.rstrip("\n").split("\t")
        ref[comp] = anchor
    apath = os.path.join(raw, "anchors.jsonl")
    if os.path.exists(apath):
        for line in open(apath):
            a = json.loads(line)
            anchors[a["benchmark"]] = a
    print("| computation | form | lift (ms) | ÷ fastest form | check | copy (ms) | suite file (ms) | anchor (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    within, total = 0, 0
    for comp in sorted(forms):
        rows = forms[comp]
        times = [r["total_ms"] for _, r in rows if r]
        best = min(times) if times else None
        s = suite.get(comp)
        a = anchors.get(ref.get(comp, "-"))
        for key, r in sorted(rows, key=lambda kr: (kr[1] is None, kr[1]["total_ms"] if kr[1] else 0)):
            total += 1
            if r is None:
                print(f"| {comp} | {key} | failed: {errors.get(f'form.{comp}.{key}', '?')} | | | | | |")
                continue
            ratio = r["total_ms"] / best
            within += ratio <= 1.10
            check = (r.get("check") or "-").split(";")[0][:40]
            suite_ms = f"{s['total_ms']:.4f}" if s else "-"
            print(
                f"| {comp} | {key} | {r['total_ms']:.4f} | {ratio:.2f} | {check} | {r['copy_ms']:.4f} | {suite_ms} | ",
                end="",
            )
            print(f"{a['anchor']} {a['ms']:.4f} |" if a else "- |")
    print(f"\n{within} of {total} forms within 1.10x of the fastest form of their computation.")
    for comp, r in sorted(suite.items()):
        best = min((x["total_ms"] for _, x in forms.get(comp, []) if x), default=None)
        if best:
            print(f"- {comp}: fastest form {best:.4f} ms, suite file {r['total_ms']:.4f} ms ({best / r['total_ms']:.2f}x)")


if __name__ == "__main__":
    main()
