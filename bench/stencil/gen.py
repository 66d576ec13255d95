#!/usr/bin/env python3
"""Writes the small test data of the stencil suite (`<program>.json`) and the `;; expect:` line of
each program, computed with numpy independently of the compiler: every neighbourhood is a shifted
slice of the input padded with `np.pad(mode="edge")` (clamped borders; SHOC Stencil2D is not
padded), and each formula is evaluated in float64 on the float32 inputs.

Inputs are multiples of 1/8 (hotspot's and the Gaussian's coefficients multiples of 1/128), so
most results are exact in float32. Where a formula has coefficients that are not (0.083, 1.67,
2.666, ...) and subtracts, the inputs lie in [0, 1) and the seed is the first that keeps every
result at least 1e-3 away from zero, so that the harness's relative tolerance (1e-4, plus 1e-6
absolute) covers float32 rounding in any summation order.

Run from anywhere: `python3 bench/stencil/gen.py` (needs numpy). Deterministic (fixed seeds).
"""
import json
import pathlib
import re

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
f32 = np.float32


def grid(rng, shape, lo, hi, step=0.125):
    """Values lo, lo+step, ..., < hi, as float32 (exact)."""
    n = int(round((hi - lo) / step))
    return (lo + rng.integers(0, n, size=shape) * step).astype(f32)


def out(v):
    """A result as JSON-ready nested lists; floats as their float32 value's shortest repr."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [out(x) for x in v]
    return float(str(f32(v)))


def write(prog, data, expect):
    (HERE / f"{prog}.json").write_text(json.dumps(data) + "\n")
    path = HERE / f"{prog}.lisp"
    src = path.read_text()
    line = ";; expect: " + json.dumps(out(expect))
    src, n = re.subn(r"^;; expect: .*$", lambda _m: line, src, count=1, flags=re.M)
    assert n == 1, prog
    path.write_text(src)


def lists(a):
    return np.asarray(a).tolist()


def far_from_zero(x, eps=1e-3):
    return bool(np.all(np.abs(np.asarray(x)) > eps))


def shifts(a, r, mode="edge"):
    """`at(d...)`: the input shifted by the offsets d (each in -r..r), clamped (or constant 0)."""
    p = np.pad(a.astype(np.float64), r, mode=mode)
    shape = a.shape

    def at(*d):
        idx = tuple(slice(r + di, r + di + n) for di, n in zip(d, shape))
        return p[idx]

    return at


def first_seed(make, check, start):
    """The first seed from `start` whose data `make(seed)` gives results that pass `check`."""
    for seed in range(start, start + 1000):
        data, res = make(seed)
        if check(res):
            return data, res
    raise SystemExit("no seed keeps the results away from zero")


# ---- 2-D ------------------------------------------------------------------------------------


def jacobi2d_5pt():
    g = grid(np.random.default_rng(1), (7, 9), 0, 4)
    a = shifts(g, 1)
    res = (5 * a(-1, 0) + 12 * a(0, -1) + 15 * a(0, 0) + 12 * a(0, 1) + 5 * a(1, 0)) / 118
    write("jacobi2d_5pt", {"grid": lists(g)}, res)


def jacobi2d_9pt():
    g = grid(np.random.default_rng(2), (7, 9), 0, 4)
    a = shifts(g, 1)
    w = {(-1, -1): 7, (-1, 0): 5, (-1, 1): 9, (0, -1): 12, (0, 0): 15, (0, 1): 12, (1, -1): 9, (1, 0): 5, (1, 1): 7}
    res = sum(c * a(*d) for d, c in w.items()) / 118
    write("jacobi2d_9pt", {"grid": lists(g)}, res)


def gaussian():
    img = grid(np.random.default_rng(3), (8, 11), -2, 2)
    k = np.array([[2, 4, 5, 4, 2], [4, 9, 12, 9, 4], [5, 12, 15, 12, 5], [4, 9, 12, 9, 4], [2, 4, 5, 4, 2]])
    weights = (k / 128).astype(f32)
    a = shifts(img, 2)
    res = sum(weights[i, j] * a(i - 2, j - 2) for i in range(5) for j in range(5))
    write("gaussian", {"img": lists(img), "weights": lists(weights)}, res)


def grad2d():
    img = grid(np.random.default_rng(4), (7, 9), 0, 2)
    a = shifts(img, 1)
    c = a(0, 0)
    s = 0.0001 + sum((c - a(*d)) ** 2 for d in [(-1, 0), (1, 0), (0, 1), (0, -1)])
    res = c + 1 / np.sqrt(s)
    write("grad2d", {"img": lists(img)}, res)


def stencil2d_shoc():
    data = grid(np.random.default_rng(5), (8, 10), 0, 4)
    wc, wn, wd = 0.25, 0.15, 0.05
    d = data.astype(np.float64)
    c = d[1:-1, 1:-1]
    card = d[:-2, 1:-1] + d[2:, 1:-1] + d[1:-1, :-2] + d[1:-1, 2:]
    diag = d[:-2, :-2] + d[:-2, 2:] + d[2:, :-2] + d[2:, 2:]
    res = float(f32(wc)) * c + float(f32(wn)) * card + float(f32(wd)) * diag
    write("stencil2d_shoc", {"data": lists(data), "wc": wc, "wn": wn, "wd": wd}, res)


def convolution_separable():
    rng = np.random.default_rng(6)
    img = grid(rng, (12, 20), -2, 2)
    weights = grid(rng, 17, -1, 1)
    p = np.pad(img.astype(np.float64), ((0, 0), (8, 8)), mode="edge")
    tmp = sum(weights[k] * p[:, k : k + img.shape[1]] for k in range(17))
    q = np.pad(tmp, ((8, 8), (0, 0)), mode="edge")
    res = sum(weights[k] * q[k : k + img.shape[0], :] for k in range(17))
    write("convolution_separable", {"img": lists(img), "weights": lists(weights)}, res)


def hotspot():
    rng = np.random.default_rng(7)
    temp = grid(rng, (7, 9), 320, 340)
    power = grid(rng, (7, 9), 0, 1)
    sdc, rx1, ry1, rz1, amb = 0.5, 0.25, 0.125, 0.0625, 80.0
    a = shifts(temp, 1)
    t = a(0, 0)
    delta = power + (a(1, 0) + a(-1, 0) - 2 * t) * ry1 + (a(0, 1) + a(0, -1) - 2 * t) * rx1 + (amb - t) * rz1
    res = t + sdc * delta
    write(
        "hotspot",
        {"temp": lists(temp), "power": lists(power), "sdc": sdc, "rx1": rx1, "ry1": ry1, "rz1": rz1, "amb": amb},
        res,
    )


def srad():
    j = grid(np.random.default_rng(8), (7, 9), 1, 3)
    jd = j.astype(np.float64)
    q0sqr = float(f32(jd.var() / jd.mean() ** 2))
    a = shifts(j, 1)
    jc = a(0, 0)
    dn, ds, dw, de = a(-1, 0) - jc, a(1, 0) - jc, a(0, -1) - jc, a(0, 1) - jc
    g2 = (dn**2 + ds**2 + dw**2 + de**2) / (jc * jc)
    lap = (dn + ds + dw + de) / jc
    num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
    den = 1 + 0.25 * lap
    qsqr = num / (den * den)
    den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr))
    assert np.all(np.abs(1 + den) > 1e-2), "c = 1 / (1 + den) near a pole"
    c = np.clip(1.0 / (1.0 + den), 0, 1)
    res1 = np.stack([dn, ds, dw, de, c], axis=-1)
    write("srad1", {"j": lists(j), "q0sqr": q0sqr}, res1)

    # the second kernel on the first one's outputs (as float32, as the first kernel stores them)
    c32 = c.astype(f32)
    lam = 0.5
    cp = np.pad(c32.astype(np.float64), ((0, 1), (0, 1)), mode="edge")
    cs, ce = cp[1:, :-1], cp[:-1, 1:]
    d = c32 * dn + cs * ds + c32 * dw + ce * de
    res2 = jd + 0.25 * lam * d
    data2 = {"j": lists(j), "dn": lists(dn), "ds": lists(ds), "dw": lists(dw), "de": lists(de), "c": lists(c32)}
    data2["lam"] = lam
    write("srad2", data2, res2)


# ---- 3-D (grid[z][y][x]) ----------------------------------------------------------------------
# offsets (dz, dy, dx): F/B = z-1/z+1, N/S = y-1/y+1, W/E = x-1/x+1


def heat3d():
    g = grid(np.random.default_rng(9), (4, 5, 6), 0, 4)
    a = shifts(g, 1)
    c = a(0, 0, 0)
    res = (
        0.125 * (a(1, 0, 0) - 2 * c + a(-1, 0, 0))
        + 0.125 * (a(0, 1, 0) - 2 * c + a(0, -1, 0))
        + 0.125 * (a(0, 0, 1) - 2 * c + a(0, 0, -1))
        + c
    )
    write("heat3d", {"grid": lists(g)}, res)


def k(x):
    """A float literal of the program as the float32 it is."""
    return float(f32(x))


def jacobi3d_7pt():
    def make(seed):
        g = grid(np.random.default_rng(seed), (4, 5, 6), 0, 1)
        a = shifts(g, 1)
        res = (
            k(0.161) * a(0, 0, 1)
            + k(0.162) * a(0, 0, -1)
            + k(0.163) * a(0, 1, 0)
            + k(0.164) * a(0, -1, 0)
            + k(0.165) * a(1, 0, 0)
            + k(0.166) * a(-1, 0, 0)
            - k(1.67) * a(0, 0, 0)
        )
        return g, res

    g, res = first_seed(make, far_from_zero, 10)
    write("jacobi3d_7pt", {"grid": lists(g)}, res)


def jacobi3d_13pt():
    def make(seed):
        g = grid(np.random.default_rng(seed), (5, 6, 7), 0, 1)
        a = shifts(g, 2)
        arms = [(0, 0, 2), (0, 0, 1), (0, 0, -1), (0, 0, -2), (0, 2, 0), (0, 1, 0)]
        arms += [(0, -1, 0), (0, -2, 0), (2, 0, 0), (1, 0, 0), (-1, 0, 0), (-2, 0, 0)]
        res = sum(k(0.083) * a(*d) for d in arms) - k(0.996) * a(0, 0, 0)
        return g, res

    g, res = first_seed(make, far_from_zero, 20)
    write("jacobi3d_13pt", {"grid": lists(g)}, res)


def poisson3d():
    def make(seed):
        g = grid(np.random.default_rng(seed), (4, 5, 6), 0, 1)
        a = shifts(g, 1)
        faces = [(-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, 1), (0, 0, -1)]
        edges = [(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        edges = [d for d in edges if sum(map(abs, d)) == 2]
        assert len(edges) == 12
        res = k(2.666) * a(0, 0, 0) - k(0.166) * sum(a(*d) for d in faces) - k(0.0833) * sum(a(*d) for d in edges)
        return g, res

    g, res = first_seed(make, far_from_zero, 30)
    write("poisson3d", {"grid": lists(g)}, res)


# j3d27pt's weights by plane dz (-1, 0, +1), row dy, column dx
W27 = {
    -1: [[0.5, 0.7, 0.9], [1.2, 1.5, 1.2], [0.9, 0.7, 0.5]],
    0: [[0.51, 0.71, 0.91], [1.21, 1.51, 1.21], [0.91, 0.71, 0.51]],
    1: [[0.52, 0.72, 0.92], [1.22, 1.52, 1.22], [0.92, 0.72, 0.52]],
}


def jacobi3d_points(name, points, seed):
    g = grid(np.random.default_rng(seed), (4, 5, 6), 0, 4)
    a = shifts(g, 1)
    res = sum(k(W27[dz][dy + 1][dx + 1]) * a(dz, dy, dx) for dz, dy, dx in points) / 159
    write(name, {"grid": lists(g)}, res)


def jacobi3d_27pt():
    pts = [(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    jacobi3d_points("jacobi3d_27pt", pts, 40)


def jacobi3d_19pt():
    pts = [(dz, dy, dx) for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
    pts = [d for d in pts if sum(map(abs, d)) <= 2]
    assert len(pts) == 19
    jacobi3d_points("jacobi3d_19pt", pts, 41)


def hotspot3d():
    rng = np.random.default_rng(50)
    tin = grid(rng, (3, 5, 6), 300, 340)
    pin = grid(rng, (3, 5, 6), 0, 1)
    co = {"cc": 0.5, "cn": 0.0625, "cs": 0.0625, "ce": 0.0625, "cw": 0.0625, "ct": 0.03125, "cb": 0.03125}
    sdc, amb = 0.25, 80.0
    a = shifts(tin, 1)
    res = (
        co["cc"] * a(0, 0, 0)
        + co["cn"] * a(0, -1, 0)
        + co["cs"] * a(0, 1, 0)
        + co["ce"] * a(0, 0, 1)
        + co["cw"] * a(0, 0, -1)
        + co["ct"] * a(1, 0, 0)
        + co["cb"] * a(-1, 0, 0)
        + sdc * pin
        + co["ct"] * amb
    )
    write("hotspot3d", {"tin": lists(tin), "pin": lists(pin), **co, "sdc": sdc, "amb": amb}, res)


if __name__ == "__main__":
    jacobi2d_5pt()
    jacobi2d_9pt()
    gaussian()
    grad2d()
    stencil2d_shoc()
    convolution_separable()
    hotspot()
    srad()
    heat3d()
    jacobi3d_7pt()
    jacobi3d_13pt()
    poisson3d()
    jacobi3d_19pt()
    jacobi3d_27pt()
    hotspot3d()
