#!/usr/bin/env python3
"""Run every bench/forms program on the interpreter (against its `;; expect:` line, computed
with numpy by gen.py) and on OpenCL (against the interpreter's result).

Usage: python3 bench/forms/check.py [--lift PATH] [--medium DIR] [files...]
Writes bench/forms/results.tsv (or results_medium.tsv): file, interp status, opencl status,
first lines of any message.
With --medium DIR (data from `gen.py --medium DIR`, at the medium sizes of suite.tsv) there is
no numpy expectation: OpenCL is compared with the interpreter only, with a tolerance scaled by
the largest magnitude of the result (|a-b| <= 1e-4 + 1e-4*max|b|), since the summation order
differs and random data have cancellation.
Results are compared after flattening (a program may return `s` or `[s]`), with
|a-b| <= 1e-4 + 1e-4*|b| (the data are multiples of 1/8, so most results are exact).
"""
import json, os, re, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LIFT = "/work/main/target/release/lift"


def flat(v):
    return np.array(v, dtype=np.float64).ravel()


MEDIUM = None


def close(a, b):
    a, b = flat(a), flat(b)
    if a.shape != b.shape:
        return False
    scale = np.abs(b).max() if MEDIUM and b.size else np.abs(b)
    return bool(np.all(np.abs(a - b) <= 1e-4 + 1e-4 * scale))


def run(path, data, backend):
    cmd = [LIFT, "run", path, "--data", data] + (["--backend", "interp"] if backend == "interp" else [])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=HERE)
    except subprocess.TimeoutExpired:
        return None, "timeout 300 s"
    if p.returncode != 0:
        msg = " ".join(l.strip() for l in (p.stderr or p.stdout).strip().splitlines()[:2])
        return None, "exit %d: %s" % (p.returncode, msg)
    try:
        return json.loads(p.stdout), ""
    except Exception as e:
        return None, "unparsable output: %r" % p.stdout[:200]


def main():
    global LIFT, MEDIUM
    args = sys.argv[1:]
    while args[:1] in (["--lift"], ["--medium"]):
        if args[0] == "--lift":
            LIFT = args[1]
        else:
            MEDIUM = os.path.abspath(args[1])
        args = args[2:]
    files = args or sorted(f for f in os.listdir(HERE) if f.endswith(".lisp"))
    rows = []
    for f in files:
        f = os.path.basename(f)
        src = open(os.path.join(HERE, f)).read()
        data = re.search(r"^;; data: (\S+)", src, re.M).group(1)
        expect = json.loads(re.search(r"^;; expect: (.*)$", src, re.M).group(1))
        if MEDIUM:
            data = os.path.join(MEDIUM, os.path.basename(data))
        ri, mi = run(f, data, "interp")
        si = "ok" if ri is not None and (MEDIUM or close(ri, expect)) else ("WRONG" if ri is not None else "FAIL")
        if si == "WRONG":
            mi = "interp %s vs numpy %s" % (json.dumps(ri)[:200], json.dumps(expect)[:200])
        ro, mo = run(f, data, "opencl")
        ref = ri if ri is not None else expect
        so = "ok" if ro is not None and close(ro, ref) else ("WRONG" if ro is not None else "FAIL")
        if so == "WRONG":
            mo = "opencl %s vs interp %s" % (json.dumps(ro)[:200], json.dumps(ref)[:200])
        rows.append((f, si, so, mi, mo))
        print("%-40s interp %-5s opencl %-5s %s %s" % (f, si, so, mi[:150], mo[:150]), flush=True)
    if not args:
        with open(os.path.join(HERE, "results_medium.tsv" if MEDIUM else "results.tsv"), "w") as out:
            out.write("file\tinterp\topencl\tinterp_message\topencl_message\n")
            for r in rows:
                out.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
