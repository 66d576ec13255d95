#!/usr/bin/env python3
"""Expected results of the scan examples, computed with numpy alone (nothing of the compiler),
checked against (or, with --write, written into) the `;; expect:` line of each example.

    python3 scripts/scan_examples.py          # exit 1 when an expect line differs
    python3 scripts/scan_examples.py --write  # rewrite the expect lines

`scan f z xs` is the inclusive prefix: element i is z ⊕ x0 ⊕ … ⊕ xi (numpy's `cumsum` for `+`
with z = 0). The float inputs are quarters, so the sums are exact in float32 in every order.
"""
import json
import pathlib
import sys

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def floats(a):
    return [float(x) for x in np.asarray(a, dtype=np.float32).ravel()]


def scan_float(d):
    return floats(np.cumsum(np.array(d["xs"], dtype=np.float32)))


def scan_int(d):
    xs = np.array(d["xs"], dtype=np.int64)
    return [int(v) for v in np.cumsum(3 * xs) - 7]


def scan_rows(d):
    m = np.array(d["m"], dtype=np.float32)
    return [floats(r) for r in np.cumsum(m, axis=1)]


def scan_radix_histogram(d):
    keys = np.array(d["keys"], dtype=np.int64)
    digits = (keys >> 2) & 3
    onehot = np.eye(4, dtype=np.int64)[digits]
    counts = np.cumsum(onehot, axis=0)
    return [[[int(c) for c in counts[i]], int(counts[i][digits[i]] - 1)] for i in range(len(keys))]


def scan_compact(d):
    xs = np.array(d["xs"], dtype=np.float32)
    kept = xs[xs > 0]
    return floats(np.concatenate([kept, np.zeros(len(xs) - len(kept), dtype=np.float32)]))


COMPUTE = {
    "scan_float": scan_float,
    "scan_int": scan_int,
    "scan_rows": scan_rows,
    "scan_radix_histogram": scan_radix_histogram,
    "scan_compact": scan_compact,
}


def main():
    write = "--write" in sys.argv[1:]
    bad = 0
    for name, compute in COMPUTE.items():
        lisp = EXAMPLES / f"{name}.lisp"
        data = json.loads((EXAMPLES / f"{name}.json").read_text())
        want = ";; expect: " + json.dumps(compute(data), separators=(", ", ": "))
        lines = lisp.read_text().split("\n")
        at = [i for i, line in enumerate(lines) if line.startswith(";; expect:")]
        if len(at) != 1:
            print(f"{lisp.name}: needs exactly one `;; expect:` line")
            bad += 1
            continue
        if lines[at[0]] == want:
            continue
        if write:
            lines[at[0]] = want
            lisp.write_text("\n".join(lines))
            print(f"{lisp.name}: expect line written")
        else:
            print(f"{lisp.name}: the expect line differs from numpy's\n  have {lines[at[0]]}\n  want {want}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
