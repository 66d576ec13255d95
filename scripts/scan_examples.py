#!/usr/bin/env python3
"""Expected results of the scan examples, computed with numpy alone (nothing of the compiler),
checked against (or, with --write, written into) the `;; expect:` line of each example.

    python3 scripts/scan_examples.py          # exit 1 when an expect line differs
    python3 scripts/scan_examples.py --write  # rewrite the expect lines

`scan f z xs` is the inclusive prefix: element i is z ⊕ x0 ⊕ … ⊕ xi (numpy's `cumsum` for `+`
with z = 0). The float inputs are quarters, so the sums are exact in float32 in every order.
"""

import numpy as np

import expect_lines



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


if __name__ == "__main__":
    expect_lines.main(COMPUTE)
