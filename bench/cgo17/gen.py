#!/usr/bin/env python3
"""Writes the small test data of the CGO'17 suite (`*.json`) and the `;; expect:` line of each
program, computed with numpy independently of the compiler.

Inputs are on grids of 1/4 or 1/8 (or small integers), so that the products and sums of the
linear-algebra benchmarks are exact in float32 and any summation order gives the same result;
the benchmarks with sqrt, division, cos and sin are computed in float64 and checked not to be
near zero, where the harness's relative tolerance (1e-4) would not cover float32 rounding.

Run from anywhere: `python3 bench/cgo17/gen.py` (needs numpy). Deterministic (fixed seeds).
"""
import json
import pathlib
import re

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
f32 = np.float32


def grid(rng, shape, lo, hi, step):
    """Values lo, lo+step, ..., < hi."""
    n = int(round((hi - lo) / step))
    return lo + rng.integers(0, n, size=shape) * step


def out(v):
    """A result as JSON-ready nested lists; floats as their float32 value's shortest repr."""
    if isinstance(v, (list, tuple)):
        return [out(x) for x in v]
    if isinstance(v, np.ndarray):
        return [out(x) for x in v]
    if isinstance(v, (int, np.integer)):
        return int(v)
    return float(str(f32(v)))


def write(prog, data, expect, data_name=None):
    data_name = data_name or prog
    (HERE / f"{data_name}.json").write_text(json.dumps(data) + "\n")
    path = HERE / f"{prog}.lisp"
    src = path.read_text()
    line = ";; expect: " + json.dumps(out(expect))
    src, n = re.subn(r"^;; expect: .*$", lambda _m: line, src, count=1, flags=re.M)
    assert n == 1, prog
    path.write_text(src)


def far_from_zero(xs, eps=1e-2):
    assert np.all(np.abs(np.asarray(xs)) > eps), xs


def lists(a):
    return np.asarray(a).tolist()


def nn():
    locs = [[4.0, 5.0], [1.0, 2.0], [1.0, 4.5], [-5.0, -6.0], [1.0, 3.0], [3.0, 5.0], [0.25, 2.0], [4.0, 8.0]]
    lat, lng = 1.0, 2.0
    d = [np.sqrt((lat - a) ** 2 + (lng - b) ** 2) for a, b in locs]
    write("nn", {"locs": locs, "lat": lat, "lng": lng}, d)


def mriq():
    rng = np.random.default_rng(1)
    X, K = 6, 8
    x, y, z = (grid(rng, X, -1.0, 1.0, 0.125) for _ in range(3))
    kx, ky, kz = (grid(rng, K, -0.5, 0.5, 0.0625) for _ in range(3))
    phi = grid(rng, K, 0.25, 2.0, 0.25)
    q = []
    for i in range(X):
        e = 2 * np.pi * (kx * x[i] + ky * y[i] + kz * z[i])
        q.append([np.sum(phi * np.cos(e)), np.sum(phi * np.sin(e))])
    far_from_zero(q)
    data = {"x": lists(x), "y": lists(y), "z": lists(z), "kx": lists(kx), "ky": lists(ky), "kz": lists(kz),
            "phiMag": lists(phi)}
    write("mriq", data, q)
    phi_r = grid(rng, K, -2.0, 2.0, 0.25)
    phi_i = grid(rng, K, -2.0, 2.0, 0.25)
    write("mriq_phimag", {"phiR": lists(phi_r), "phiI": lists(phi_i)}, phi_r ** 2 + phi_i ** 2)


def kmeans():
    rng = np.random.default_rng(2)
    P, F, C = 12, 5, 3
    pts = grid(rng, (P, F), -2.0, 2.0, 0.25)
    cen = grid(rng, (C, F), -2.0, 2.0, 0.25)
    # A tie: point 0 is as far from centre 2 as from centre 1; the lower index, 1, must win.
    cen[2] = cen[1]
    cen[2][0] = 2 * pts[0][0] - cen[1][0]
    d = ((pts[:, None, :] - cen[None, :, :]) ** 2).sum(axis=2)
    member = d.argmin(axis=1)  # the first minimum
    assert d[0][1] == d[0][2], "the tie is there"
    write("kmeans_rows", {"points": lists(pts), "centres": lists(cen)}, member)
    write("kmeans_fmajor", {"features": lists(pts.T), "centres": lists(cen)}, member)


def md():
    rng = np.random.default_rng(3)
    N, M = 10, 4
    # Distinct integer points, so r2 >= 1 and the forces stay moderate; some pairs are beyond
    # the cutoff (r2 >= 16) and add nothing.
    cells = rng.choice(6 * 6 * 6, size=N, replace=False)
    pos = np.stack([cells % 6, cells // 6 % 6, cells // 36, np.zeros(N)], axis=1).astype(float)
    nb = np.array([rng.choice([j for j in range(N) if j != i], size=M, replace=False) for i in range(N)])
    cutsq, lj1, lj2 = 16.0, 1.5, 2.0
    f = np.zeros((N, 4))
    mag = np.zeros((N, 4))  # the sum of the terms' magnitudes: a bound on the cancellation
    cut = 0
    for i in range(N):
        for j in nb[i]:
            d = pos[i, :3] - pos[j, :3]
            r2 = d @ d
            if r2 < cutsq:
                r2i = 1.0 / r2
                r6i = r2i ** 3
                f[i, :3] += d * (r2i * r6i * (lj1 * r6i - lj2))
                mag[i, :3] += np.abs(d * (r2i * r6i * (lj1 * r6i - lj2)))
            else:
                cut += 1
    assert cut > 0, "the cutoff is exercised"
    # Components that cancel to (near) zero would need a tolerance beyond the harness's: float32
    # rounding is about 6e-8 of `mag`, which must stay far below 1e-4 of the result.
    assert np.all((mag <= 100 * np.abs(f)) | (mag == 0)), (f, mag)
    write("md_rows", {"particles": lists(pos), "neighbours": lists(nb), "cutsq": cutsq, "lj1": lj1, "lj2": lj2}, f)
    write("md_nmajor", {"particles": lists(pos), "neighbours": lists(nb.T), "cutsq": cutsq, "lj1": lj1,
                        "lj2": lj2}, f)


def convolution():
    rng = np.random.default_rng(4)
    H, W = 6, 7
    img = grid(rng, (H, W), -2.0, 2.0, 0.25)
    w = grid(rng, 17, -1.0, 1.0, 0.25)
    rows = np.array([[sum(img[i][min(max(j + k - 8, 0), W - 1)] * w[k] for k in range(17)) for j in range(W)]
                     for i in range(H)])
    cols = np.array([[sum(img[min(max(i + k - 8, 0), H - 1)][j] * w[k] for k in range(17)) for j in range(W)]
                     for i in range(H)])
    data = {"img": lists(img), "weights": lists(w)}
    write("convolution_row", data, rows, "convolution")
    write("convolution_col", data, cols, "convolution")


def blas():
    rng = np.random.default_rng(5)
    M, N = 5, 7
    a = grid(rng, (M, N), -2.0, 2.0, 0.25)
    b = grid(rng, (M, N), -2.0, 2.0, 0.25)
    xn = grid(rng, N, -2.0, 2.0, 0.25)
    xm = grid(rng, M, -2.0, 2.0, 0.25)
    ym = grid(rng, M, -2.0, 2.0, 0.25)
    yn = grid(rng, N, -2.0, 2.0, 0.25)
    alpha, beta = 1.5, -0.5
    write("gemv_n", {"a": lists(a), "x": lists(xn), "y": lists(ym), "alpha": alpha, "beta": beta},
          alpha * (a @ xn) + beta * ym)
    write("gemv_t", {"a": lists(a), "x": lists(xm), "y": lists(yn), "alpha": alpha, "beta": beta},
          alpha * (a.T @ xm) + beta * yn)
    write("atax", {"a": lists(a), "x": lists(xn)}, a.T @ (a @ xn))
    write("gesummv", {"a": lists(a), "b": lists(b), "x": lists(xn), "alpha": alpha, "beta": beta},
          alpha * (a @ xn) + beta * (b @ xn))
    K = 6
    ma = grid(rng, (4, K), -2.0, 2.0, 0.25)
    mb = grid(rng, (K, 5), -2.0, 2.0, 0.25)
    write("mm", {"a": lists(ma), "b": lists(mb)}, ma @ mb)
    xs = grid(rng, 32, -4.0, 4.0, 0.25)
    write("sum", {"xs": lists(xs)}, [xs.sum()])
    m = grid(rng, (5, 7), -4.0, 4.0, 0.25)
    write("transpose", {"m": lists(m)}, m.T)


def nbody():
    rng = np.random.default_rng(6)
    N = 8
    pos = np.concatenate([grid(rng, (N, 3), 0.0, 1.0, 0.125), grid(rng, (N, 1), 0.5, 2.0, 0.25)], axis=1)
    vel = np.concatenate([grid(rng, (N, 3), -0.5, 0.5, 0.125), np.zeros((N, 1))], axis=1)
    # Larger than CGO'17's dt 0.005 and softening 500, so that the step visibly moves the bodies.
    esp, dt = 0.5, 0.25
    res = []
    for i in range(N):
        acc = np.zeros(3)
        for j in range(N):
            r = pos[j, :3] - pos[i, :3]
            inv = 1.0 / np.sqrt(r @ r + esp)
            acc += r * (inv ** 3 * pos[j, 3])
        p = pos[i].copy()
        v = vel[i].copy()
        p[:3] += vel[i, :3] * dt + acc * (0.5 * dt * dt)
        v[:3] += acc * dt
        res.append([p, v])
    write("nbody", {"pos": lists(pos), "vel": lists(vel), "espSqr": esp, "deltaT": dt}, res)


if __name__ == "__main__":
    nn()
    mriq()
    kmeans()
    md()
    convolution()
    blas()
    nbody()
