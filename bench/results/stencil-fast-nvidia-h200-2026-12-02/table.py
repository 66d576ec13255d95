#!/usr/bin/env python3
"""The tables of run.sh's outputs (argv[1]: the folder with st/ and var/)."""
import json, os, sys
root = sys.argv[1]
def load(p):
    try:
        lines = open(p).read().strip().splitlines()
        return json.loads(lines[-1]) if lines else None
    except Exception:
        return None
print("| stencil | lift (ms) | copy (ms) | ÷ copy | variant |")
print("|---|---|---|---|---|")
for f in sorted(os.listdir(f"{root}/st")):
    if not f.endswith(".json"): continue
    r = load(f"{root}/st/{f}")
    if not r: print(f"| {f[:-5]} | failed | | | |"); continue
    print(f"| {f[:-5]} | {r['total_ms']:.4f} | {r['copy_ms']:.4f} | {r['total_ms']/r['copy_ms']:.2f} | {r.get('variant','')[:90]} |")
print()
print("| stencil | form | lift (ms) | copy (ms) | ÷ copy |")
print("|---|---|---|---|---|")
for f in sorted(os.listdir(f"{root}/var")):
    if not f.endswith(".json"): continue
    r = load(f"{root}/var/{f}")
    k, _, n = f[:-5].rpartition("-")
    if not r: print(f"| {k} | {n} | failed | | |"); continue
    print(f"| {k} | {n} | {r['total_ms']:.4f} | {r['copy_ms']:.4f} | {r['total_ms']/r['copy_ms']:.2f} |")
