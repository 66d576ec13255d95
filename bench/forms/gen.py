#!/usr/bin/env python3
"""Write the small data files of bench/forms and the `;; expect:` line of every program.

Deterministic: fixed seeds, values that are multiples of 1/8 (exact in float32).
Expected values are computed with numpy (float64, from the formulas only) and written
into each program's `;; expect:` line (the programs name their data with `;; data:`).
Usage: python3 bench/forms/gen.py             # writes data/*.json, the expect lines and suite.tsv
       python3 bench/forms/gen.py --medium DIR # random data at the medium sizes of suite.tsv
"""
import json, math, os, re, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def eighths(rng, shape, lo, hi):
    """Random multiples of 1/8 in [lo, hi]."""
    return rng.integers(int(lo * 8), int(hi * 8) + 1, size=shape).astype(np.float64) / 8.0


def tolist(a):
    if isinstance(a, np.ndarray):
        return a.tolist()
    return a


# ---------------------------------------------------------------- data sets
def d_sum():
    rng = np.random.default_rng(1)
    xs = eighths(rng, 1024, -4, 4)
    return {"xs": xs}, np.array([xs.sum()])


def d_dot():
    rng = np.random.default_rng(2)
    xs = eighths(rng, 512, -2, 2)
    ys = eighths(rng, 512, -2, 2)
    return {"xs": xs, "ys": ys}, np.array([np.dot(xs, ys)])


def d_transpose():
    rng = np.random.default_rng(3)
    m = eighths(rng, (16, 24), -8, 8)        # M=16 N=24
    return {"m": m}, m.T.copy()


def d_nn():
    rng = np.random.default_rng(4)
    pts = eighths(rng, (20, 2), -8, 8)       # N=20 (x, y) tuples
    lat, lng = 1.5, -2.25
    d = np.sqrt((lat - pts[:, 0]) ** 2 + (lng - pts[:, 1]) ** 2)
    return {"pts": pts, "lat": lat, "lng": lng}, d


def d_mriq():
    rng = np.random.default_rng(5)
    K, X = 12, 8
    kx, ky, kz = (eighths(rng, K, -1, 1) for _ in range(3))
    phiMag = eighths(rng, K, 0, 2)
    x, y, z = (eighths(rng, X, -1, 1) for _ in range(3))
    e = 2 * math.pi * (np.outer(x, kx) + np.outer(y, ky) + np.outer(z, kz))   # [X][K]
    qr = (phiMag[None, :] * np.cos(e)).sum(axis=1)
    qi = (phiMag[None, :] * np.sin(e)).sum(axis=1)
    data = {"kx": kx, "ky": ky, "kz": kz, "phiMag": phiMag, "x": x, "y": y, "z": z}
    return data, np.stack([qr, qi], axis=1)


def d_kmeans():
    rng = np.random.default_rng(6)
    P, F, C = 12, 5, 5
    clusters = eighths(rng, (C, F), -2, 2)
    clusters[3] = clusters[1]                 # a duplicated cluster: ties, the first must win
    pts = eighths(rng, (P, F), -2, 2)
    pts[0] = clusters[3]                      # exactly on the duplicated centre (distance 0 twice)
    pts[1] = (clusters[0] + clusters[2]) / 2  # equidistant from clusters 0 and 2
    pts[2] = clusters[4]
    d = ((pts[:, None, :] - clusters[None, :, :]) ** 2).sum(axis=2)
    member = d.argmin(axis=1)                 # numpy: first minimum wins
    return {"points": pts, "clusters": clusters}, member.astype(np.int64)


def d_md():
    rng = np.random.default_rng(7)
    N, M = 10, 4
    grid = np.array([[i % 3, (i // 3) % 3, i // 9] for i in range(N)], dtype=np.float64) * 1.25
    pos3 = grid + eighths(rng, (N, 3), -0.25, 0.25)
    pos = np.concatenate([pos3, np.zeros((N, 1))], axis=1)      # float4, w = 0
    neigh = np.array([rng.choice([j for j in range(N) if j != i], M, replace=False) for i in range(N)])
    cutsq, lj1, lj2 = 4.0, 1.5, 2.0
    f = np.zeros((N, 4))
    for i in range(N):
        for j in neigh[i]:
            d = pos[i] - pos[j]
            r2 = (d[:3] ** 2).sum()
            if r2 < cutsq:
                r2i = 1.0 / r2
                r6i = r2i ** 3
                f[i] += d * (r2i * r6i * (lj1 * r6i - lj2))
    data = {"pos": pos, "neigh": neigh.astype(np.int64), "cutsq": cutsq, "lj1": lj1, "lj2": lj2}
    return data, f


def conv_data():
    rng = np.random.default_rng(8)
    img = eighths(rng, (12, 20), -4, 4)       # H=12 W=20
    w = eighths(rng, 17, -1, 1)
    return img, w


def row_pass(img, w):
    H, W = img.shape
    out = np.zeros_like(img)
    for j in range(W):
        for k in range(17):
            out[:, j] += img[:, min(max(j + k - 8, 0), W - 1)] * w[k]
    return out


def d_conv_row():
    img, w = conv_data()
    return {"img": img, "weights": w}, row_pass(img, w)


def d_conv_col():
    img, w = conv_data()
    return {"img": img, "weights": w}, row_pass(img.T, w).T


def d_conv_sep():
    img, w = conv_data()
    return {"img": img, "weights": w}, row_pass(row_pass(img, w).T, w).T


def mat_data(seed, M=6, N=8):
    rng = np.random.default_rng(seed)
    A = eighths(rng, (M, N), -2, 2)
    return rng, A


def d_gemv_n():
    rng, A = mat_data(9)
    x = eighths(rng, 8, -2, 2)
    y = eighths(rng, 6, -2, 2)
    alpha, beta = 1.5, -0.5
    return {"A": A, "x": x, "y": y, "alpha": alpha, "beta": beta}, alpha * A @ x + beta * y


def d_gemv_t():
    rng, A = mat_data(10)
    x = eighths(rng, 6, -2, 2)                # length M
    y = eighths(rng, 8, -2, 2)                # length N
    alpha, beta = 1.5, -0.5
    return {"A": A, "x": x, "y": y, "alpha": alpha, "beta": beta}, alpha * A.T @ x + beta * y


def d_atax():
    rng, A = mat_data(11)
    x = eighths(rng, 8, -2, 2)
    return {"A": A, "x": x}, A.T @ (A @ x)


def d_gesummv():
    rng, A = mat_data(12)
    B = eighths(rng, (6, 8), -2, 2)
    x = eighths(rng, 8, -2, 2)
    alpha, beta = 1.5, -0.5
    return {"A": A, "B": B, "x": x, "alpha": alpha, "beta": beta}, alpha * A @ x + beta * B @ x


def d_mm():
    rng = np.random.default_rng(13)
    A = eighths(rng, (4, 8), -2, 2)           # M=4 K=8
    B = eighths(rng, (8, 6), -2, 2)           # K=8 N=6
    return {"A": A, "B": B}, A @ B


def d_nbody():
    rng = np.random.default_rng(14)
    N = 10
    pos = np.concatenate([eighths(rng, (N, 3), -2, 2), eighths(rng, (N, 1), 0.5, 2)], axis=1)
    vel = np.concatenate([eighths(rng, (N, 3), -1, 1), np.zeros((N, 1))], axis=1)
    eps, dt = 0.0625, 0.125
    acc = np.zeros((N, 4))
    for i in range(N):
        for j in range(N):
            r = np.zeros(4)
            r[:3] = pos[j, :3] - pos[i, :3]
            acc[i] += r * pos[j, 3] / (r @ r + eps) ** 1.5
    p2 = pos + vel * dt + acc * dt * dt / 2
    v2 = vel + acc * dt
    return {"pos": pos, "vel": vel, "eps": eps, "dt": dt}, np.stack([p2, v2], axis=1)


DATASETS = {
    "sum": d_sum, "dot": d_dot, "transpose": d_transpose, "nn": d_nn, "mriq": d_mriq,
    "kmeans": d_kmeans, "md": d_md, "conv_row": d_conv_row, "conv_col": d_conv_col,
    "conv_sep": d_conv_sep, "gemv_n": d_gemv_n, "gemv_t": d_gemv_t, "atax": d_atax,
    "gesummv": d_gesummv, "mm": d_mm, "nbody": d_nbody,
}


def fmt(v):
    if isinstance(v, list):
        return "[" + ",".join(fmt(e) for e in v) + "]"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    f = float(v)
    if f == int(f) and abs(f) < 1e15:
        return "%.1f" % f
    return "%.9g" % f


def main():
    os.makedirs(DATA, exist_ok=True)
    expects = {}
    for name, fn in DATASETS.items():
        data, exp = fn()
        with open(os.path.join(DATA, name + ".json"), "w") as f:
            json.dump({k: tolist(v) for k, v in data.items()}, f)
            f.write("\n")
        expects["data/" + name + ".json"] = fmt(tolist(exp))
    for fn in sorted(os.listdir(HERE)):
        if not fn.endswith(".lisp"):
            continue
        path = os.path.join(HERE, fn)
        src = open(path).read()
        m = re.search(r"^;; data: (\S+)\s*$", src, re.M)
        if not m or m.group(1) not in expects:
            print("no data line / unknown data:", fn, file=sys.stderr)
            continue
        line = ";; expect: " + expects[m.group(1)]
        if re.search(r"^;; expect:.*$", src, re.M):
            new = re.sub(r"^;; expect:.*$", lambda _: line, src, count=1, flags=re.M)
        else:
            new = src.replace(m.group(0), m.group(0) + "\n" + line, 1)
        if new != src:
            open(path, "w").write(new)
            print("updated", fn)


# ---------------------------------------------------------------- suite.tsv
# computation -> (data set, medium sizes); the large sizes are each program's `;; size:` line.
COMPUTATIONS = [
    ("sum", "sum", "N=800000"),
    ("dot", "dot", "N=262144"),
    ("transpose", "transpose", "M=512 N=512"),
    ("nn", "nn", "N=262144"),
    ("mriq", "mriq", "X=1024 K=256"),
    ("kmeans", "kmeans", "P=4096 F=34 C=5"),
    ("md", "md", "N=1024 M=128"),
    ("conv_row", "conv_row", "H=256 W=256"),
    ("conv_col", "conv_col", "H=256 W=256"),
    ("conv_sep", "conv_sep", "H=256 W=256"),
    ("gemv_n", "gemv_n", "M=512 N=512"),
    ("gemv_t", "gemv_t", "M=512 N=512"),
    ("atax", "atax", "M=512 N=512"),
    ("gesummv", "gesummv", "M=512 N=512"),
    ("mm", "mm", "M=128 K=128 N=128"),
    ("nbody", "nbody", "N=1024"),
]


def computation_of(stem):
    best = None
    for c, _, _ in COMPUTATIONS:
        if stem.startswith(c + "_") and (best is None or len(c) > len(best)):
            best = c
    return best


def write_suite():
    rows = []
    medium = {c: m for c, _, m in COMPUTATIONS}
    order = {c: i for i, (c, _, _) in enumerate(COMPUTATIONS)}
    for fn in os.listdir(HERE):
        if not fn.endswith(".lisp"):
            continue
        stem = fn[:-5]
        c = computation_of(stem)
        src = open(os.path.join(HERE, fn)).read()
        large = re.search(r"^;; size: (.*)$", src, re.M).group(1).strip()
        rows.append((order[c], stem, c, stem[len(c) + 1:], fn, large, medium[c]))
    rows.sort()
    with open(os.path.join(HERE, "suite.tsv"), "w") as f:
        f.write("key\tcomputation\tform\tfile\tlarge\tmedium\n")
        for r in rows:
            f.write("\t".join(r[1:]) + "\n")


def medium_data(outdir):
    """Random data (multiples of 1/8) at the medium sizes, one file per data set, for checking
    OpenCL against the interpreter at a larger size (check.py --medium DIR). Not committed."""
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(100)
    sz = {c: dict(kv.split("=") for kv in m.split()) for c, _, m in COMPUTATIONS}
    I = lambda c, k: int(sz[c][k])
    e = lambda *s: eighths(rng, s, -2, 2)

    def f4(n, mass):
        a = eighths(rng, (n, 4), -2, 2)
        a[:, 3] = eighths(rng, n, 0.5, 2) if mass else 0.0
        return a
    D = {}
    D["sum"] = {"xs": e(I("sum", "N"))}
    n = I("dot", "N"); D["dot"] = {"xs": e(n), "ys": e(n)}
    D["transpose"] = {"m": e(I("transpose", "M"), I("transpose", "N"))}
    D["nn"] = {"pts": e(I("nn", "N"), 2), "lat": 1.5, "lng": -2.25}
    K, X = I("mriq", "K"), I("mriq", "X")
    D["mriq"] = dict(kx=e(K), ky=e(K), kz=e(K), phiMag=e(K), x=e(X), y=e(X), z=e(X))
    D["kmeans"] = {"points": e(I("kmeans", "P"), I("kmeans", "F")), "clusters": e(I("kmeans", "C"), I("kmeans", "F"))}
    N, M = I("md", "N"), I("md", "M")
    side = int(round(N ** (1 / 3))) + 1
    grid = np.array([[i % side, (i // side) % side, i // (side * side)] for i in range(N)], float) * 1.25
    pos = np.concatenate([grid + eighths(rng, (N, 3), -0.25, 0.25), np.zeros((N, 1))], axis=1)
    neigh = np.array([rng.choice(np.delete(np.arange(N), i), M, replace=False) for i in range(N)])
    D["md"] = {"pos": pos, "neigh": neigh, "cutsq": 16.0, "lj1": 1.5, "lj2": 2.0}
    for c in ("conv_row", "conv_col", "conv_sep"):
        D[c] = {"img": e(I(c, "H"), I(c, "W")), "weights": eighths(rng, 17, -1, 1)}
    for c in ("gemv_n", "gemv_t"):
        m, n = I(c, "M"), I(c, "N")
        xn, yn = (n, m) if c == "gemv_n" else (m, n)
        D[c] = {"A": e(m, n), "x": e(xn), "y": e(yn), "alpha": 1.5, "beta": -0.5}
    D["atax"] = {"A": e(I("atax", "M"), I("atax", "N")), "x": e(I("atax", "N"))}
    m, n = I("gesummv", "M"), I("gesummv", "N")
    D["gesummv"] = {"A": e(m, n), "B": e(m, n), "x": e(n), "alpha": 1.5, "beta": -0.5}
    D["mm"] = {"A": e(I("mm", "M"), I("mm", "K")), "B": e(I("mm", "K"), I("mm", "N"))}
    n = I("nbody", "N"); D["nbody"] = {"pos": f4(n, True), "vel": f4(n, False), "eps": 0.0625, "dt": 0.125}
    for c, d in D.items():
        with open(os.path.join(outdir, c + ".json"), "w") as f:
            json.dump({k: tolist(v) for k, v in d.items()}, f)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--medium"]:
        medium_data(sys.argv[2])
    else:
        main()
        write_suite()
