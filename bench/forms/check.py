#!/usr/bin/env python3
"""Run every bench/forms program on the interpreter (against its `;; expect:` line, computed
with numpy by gen.py) and on OpenCL (against the interpreter's result).

Usage: python3 bench/forms/check.py [--lift PATH] [files...]
Writes bench/forms/results.tsv: file, interp status, opencl status, first line of any message.
Results are compared after flattening (a program may return `s` or `[s]`), with
|a-b| <= 1e-4 + 1e-4*|b| (the data are multiples of 1/8, so most results are exact).
"""
import json, os, re, subprocess, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LIFT = "/work/main/target/release/lift"


def flat(v):
    return np.array(v, dtype=np.float64).ravel()


def close(a, b):
    a, b = flat(a), flat(b)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-4 + 1e-4 * np.abs(b)))


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
    global LIFT
    args = sys.argv[1:]
    if args[:1] == ["--lift"]:
        LIFT, args = args[1], args[2:]
    files = args or sorted(f for f in os.listdir(HERE) if f.endswith(".lisp"))
    rows = []
    for f in files:
        f = os.path.basename(f)
        src = open(os.path.join(HERE, f)).read()
        data = re.search(r"^;; data: (\S+)", src, re.M).group(1)
        expect = json.loads(re.search(r"^;; expect: (.*)$", src, re.M).group(1))
        ri, mi = run(f, data, "interp")
        si = "ok" if ri is not None and close(ri, expect) else ("WRONG" if ri is not None else "FAIL")
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
        with open(os.path.join(HERE, "results.tsv"), "w") as out:
            out.write("file\tinterp\topencl\tinterp_message\topencl_message\n")
            for r in rows:
                out.write("\t".join(r) + "\n")


if __name__ == "__main__":
    main()
