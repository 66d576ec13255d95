#!/usr/bin/env python3
"""The cost model's rank of each suite and independent program's measured best variant.

Runs `lift explore --top N` at the large sizes of bench/cgo17/suite.tsv and bench/indep/suite.tsv
and prints, per program, the position (1-based) of the variant whose mapping description is the
measured best's (the H200 suite tables of 2026-11-24, `bench/results/HISTORY.md`, and the runs
they cite), or `-` where it is not among the first N.

Usage: scripts/model-ranks.py [--lift target/debug/lift] [--top 40] [KEY ...]
"""
import argparse
import subprocess
import sys

# The measured best of each program on the H200 (2026-11-24): the mapping description, the part
# of `lift explore`'s description before " | ".
BEST = {
    "nn": "mapGlb 33554432",
    "mriq": "reduce∘map fused; mapWrg 4096 groups × mapLcl 64, (zip kx ky kz phiMag) read in tiles of 64 staged in local memory",
    "kmeans_rows": "reduce∘map fused; reduce∘join fused; mapWrg 12800 groups × mapLcl 64, rows staged in local memory as float4",
    "kmeans_fmajor": "reduce∘map fused; reduce∘join fused; mapGlb 819200",
    "md_rows": "reduce∘map fused; mapWrg 1152 groups × mapLcl 64",
    "md_nmajor": "reduce∘map fused; mapWrg 1152 groups × mapLcl 64",
    "convolution_row": "reduce∘map fused; mapGlb1 8192 × mapGlb 8192",
    "convolution_col": "reduce∘map fused; mapGlb1 8192 × mapGlb 8192",
    "gemv_n": "reduce∘map fused; mapWrg 8192 groups × work-group reduction by 128",
    "gemv_t": "reduce∘map fused; column blocks: mapWrg1×mapWrg0 4×256 groups of 32 columns × 8 row chunks; separate kernel for an intermediate; mapGlb 8192",
    "atax": "reduce∘map fused; mapWrg 8192 groups × work-group reduction by 256; reduce∘map fused; column blocks: mapWrg1×mapWrg0 4×256 groups of 32 columns × 8 row chunks; separate kernel for an intermediate; mapGlb 8192",
    "gesummv": "reduce∘map fused; mapWrg 8192 groups × work-group reduction by 256",
    "mm": "mapWrg1×mapWrg0 tiles of 64×128, 8×16 work-items each computing a 8×8 block in registers, K in steps of 8 staged in local memory, read as float4",
    "nbody": "reduce∘map fused; mapWrg 1024 groups × mapLcl 64, 2 rows each, pos read in tiles of 256 staged in local memory",
    "sum": "one launch: 528 groups × work-group reduction by 256 reading a grid apart, the last group combining their results, 4-lane vector loads",
    "transpose": "mapWrg1×mapWrg0 transpose tiles of 32×32 staged in local memory, 32×8 work-items",
    "mm_nt": "mapWrg1×mapWrg0 tiles of 128×128, 16×16 work-items each computing a 8×8 block in registers, K in steps of 8 staged in local memory, read as float4",
    "dot": "one launch: 528 groups × work-group reduction by 256 reading a grid apart, the last group combining their results, 4-lane vector loads",
    "mm_tn": "mapWrg1×mapWrg0 tiles of 128×64, 16×8 work-items each computing a 8×8 block in registers, K in steps of 8 staged in local memory, read as float4",
    "rownorm": "mapWrg 100000 groups × work-group reduction by 128",
    "gemv_bias": "reduce∘map fused; mapWrg 10000 groups × work-group reduction by 128",
    "jacobi": "mapGlb1 8192 × mapGlb 2048",
    "zip3sum": "one launch: 1056 groups × work-group reduction by 256 reading a grid apart, the last group combining their results, 4-lane vector loads",
    "bmm": "mapWrg1×mapWrg0 tiles of 32×32, 16×8 work-items each computing a 2×4 block in registers, K in steps of 32 staged in local memory, read as float4; mapWrg2 over a batch of 4096",
    "jacobi2d": "mapGlb1 8192 × mapGlb 2048",
}


def programs():
    for tsv in ["bench/cgo17/suite.tsv", "bench/indep/suite.tsv"]:
        for line in open(tsv):
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            yield cols[0], cols[3], cols[4].split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lift", default="target/debug/lift")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("keys", nargs="*")
    a = ap.parse_args()
    for key, path, sizes in programs():
        if a.keys and key not in a.keys or key not in BEST:
            continue
        cmd = [a.lift, "explore", path, "--top", str(a.top)]
        for s in sizes:
            cmd += ["--size", s]
        out = subprocess.run(cmd, capture_output=True, text=True)
        descs = []
        lines = out.stdout.splitlines()
        for i, l in enumerate(lines):
            if l.startswith(";; variant ") and i + 1 < len(lines):
                descs.append(lines[i + 1][3:].split(" | ")[0])
        rank = next((i + 1 for i, d in enumerate(descs) if d == BEST[key]), None)
        first = descs[0] if descs else out.stderr.strip()[:120]
        print(f"{key}\t{rank if rank else '-'} of {len(descs)}\tfirst: {first}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
