#!/usr/bin/env python3
"""Expected results of the examples of loops inside a work-item, computed with numpy, plain
Python and hashlib alone (nothing of the compiler), checked against (or, with --write,
written into) the `;; expect:` line of each example.

    python3 scripts/loop_examples.py          # exit 1 when an expect line differs
    python3 scripts/loop_examples.py --write  # rewrite the expect lines

Float arithmetic is float32, rounded after every operation in the program's order, as the
reference interpreter and OpenCL compute it. An escape-time count can change with one rounding
(an OpenCL compiler may fuse `a*b + c` into one fma): the Mandelbrot points are checked to
give the same count with fused multiply-adds and in float64, so the expected counts hold for
every legal evaluation.
"""
import hashlib

import numpy as np

import expect_lines

F = np.float32


def fma32(a, b, c):
    """a*b + c with one rounding to float32 (exact in float64 for float32 operands)."""
    return F(np.float64(a) * np.float64(b) + np.float64(c))


def escape(x, y, kind, steps=1000):
    """Steps of z <- z^2 + c from 0 until |z|^2 >= 4 (at most `steps`), in `kind` arithmetic:
    "f32" (each operation rounded), "fma" (products fused into the adds that use them), "f64"."""
    if kind == "f64":
        x, y = float(F(x)), float(F(y))
        zr = zi = 0.0
        for n in range(1, steps + 1):
            zr, zi = zr * zr - zi * zi + x, 2.0 * (zr * zi) + y
            if zr * zr + zi * zi >= 4.0:
                return n
        return steps
    x, y = F(x), F(y)
    zr = zi = F(0.0)
    for n in range(1, steps + 1):
        if kind == "fma":
            nr = F(fma32(zr, zr, -(zi * zi)) + x)
            ni = fma32(F(2.0), F(zr * zi), y)
            r2 = fma32(nr, nr, F(ni * ni))
        else:
            nr = F(F(F(zr * zr) - F(zi * zi)) + x)
            ni = F(F(F(2.0) * F(zr * zi)) + y)
            r2 = F(F(nr * nr) + F(ni * ni))
        zr, zi = nr, ni
        if r2 >= F(4.0):
            return n
    return steps


def mandelbrot(d):
    out = []
    for y in d["ys"]:
        row = []
        for x in d["xs"]:
            counts = {k: escape(x, y, k) for k in ("f32", "fma", "f64")}
            if len(set(counts.values())) != 1:
                raise SystemExit(f"mandelbrot: the point ({x}, {y}) is not robust: {counts}")
            row.append(counts["f32"])
        out.append(row)
    return out


def out(v):
    """A float32 as the shortest decimal that reads back as it."""
    return float(str(F(v)))


def newton(a, k):
    a = F(a)
    x = a
    for _ in range(k):
        x = F(F(0.5) * F(x + F(a / x)))
    return out(x)


def newton_sqrt(d, k):
    return [newton(a, k) for a in d["xs"]]


def newton_sqrt_map(d, k):
    return [[newton(a, k), k] for a in d["xs"]]


def loop_private_array(d, most=50):
    res = []
    xs = [F(x) for x in d["xs"]]
    for c in range(0, len(xs), 4):
        s = xs[c : c + 4]
        for _ in range(most):
            s = [F(v * F(0.5)) for v in s]
            if all(v < F(1.0) for v in s):
                break
        res += [out(v) for v in s]
    return res


def loop_vector(d, k):
    res = []
    for x in d["xs"]:
        v = F(x)
        for _ in range(k):
            v = F(F(v * F(0.5)) + F(1.0))
        res.append(out(v))
    return res


def loop_group(d, k):
    res = []
    xs = [F(x) for x in d["xs"]]
    for c in range(0, len(xs), 64):
        s = xs[c : c + 64]
        for _ in range(k):
            s = [F(v * F(0.5)) for v in reversed(s)]
        res += [out(v) for v in s]
    return res


def md5_search(d, n):
    """The keys below n whose MD5 digest (of the key's 4 little-endian bytes) starts with 0x00."""
    return [k for k in range(n) if hashlib.md5(k.to_bytes(4, "little")).digest()[0] == 0]


COMPUTE = {
    "mandelbrot": mandelbrot,
    "mandelbrot_glb": mandelbrot,
    "newton_sqrt": newton_sqrt,
    "newton_sqrt_map": newton_sqrt_map,
    "loop_private_array": loop_private_array,
    "loop_vector": loop_vector,
    "loop_group": loop_group,
    "md5_search": md5_search,
}


if __name__ == "__main__":
    expect_lines.main(COMPUTE, sizes=True)
