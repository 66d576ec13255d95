#!/usr/bin/env python3
"""Anchors for the CGO'17 suite: the same computations in PyTorch (cuBLAS, cuDNN, its own
kernels) and a device-to-device copy of each benchmark's input bytes, timed on the GPU with CUDA
events (median of repeats after warm-up), at the sizes of the CGO'17 evaluation.

Prints one JSON object per line:
  {"benchmark": "gemv N", "anchor": "PyTorch (cuBLAS)", "ms": 0.117, "copy_ms": 0.09,
   "input_bytes": 268500992, "flops": 134217728}

Run on the GPU machine (the one that runs `lift bench`), in the same command, so that both are
measured on the same GPU in the same state. Usage: anchors.py [--only NAME[,NAME...]] [--repeats R]
"""
import argparse
import json
import math
import statistics
import sys

import torch

DEV = "cuda"


def timed(fn, repeats):
    """Median device time of fn() in ms (CUDA events), after warm-up."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def copy_ms(nbytes, repeats):
    """A device-to-device copy of nbytes: the bandwidth unit `lift bench` also reports."""
    n = max(1, nbytes // 4)
    src = torch.rand(n, device=DEV)
    dst = torch.empty_like(src)
    return timed(lambda: dst.copy_(src), repeats)


def rand(*shape, dtype=torch.float32):
    # Never time on zeros: random data in a small range keeps every path honest.
    return torch.rand(*shape, device=DEV, dtype=dtype) * 2.0 - 1.0


def nn(r):
    n = 33_554_432
    pts = rand(n, 2)
    lat, lng = 0.25, -0.5
    f = lambda: torch.sqrt((lat - pts[:, 0]) ** 2 + (lng - pts[:, 1]) ** 2)
    return "PyTorch", timed(f, r), pts.numel() * 4, 5 * n


def mriq(r):
    x_n, k_n = 262_144, 2_048
    x, y, z = rand(x_n), rand(x_n), rand(x_n)
    kx, ky, kz, phi = rand(k_n), rand(k_n), rand(k_n), rand(k_n)

    def f():
        # Chunked over X so the X*K intermediate stays a few hundred MB.
        out_r = torch.empty(x_n, device=DEV)
        out_i = torch.empty(x_n, device=DEV)
        step = 32_768
        for s in range(0, x_n, step):
            e = 2 * math.pi * (
                torch.outer(x[s : s + step], kx) + torch.outer(y[s : s + step], ky) + torch.outer(z[s : s + step], kz)
            )
            out_r[s : s + step] = torch.cos(e) @ phi
            out_i[s : s + step] = torch.sin(e) @ phi
        return out_r, out_i

    return "PyTorch", timed(f, r), (3 * x_n + 4 * k_n) * 4, x_n * k_n * 12


def kmeans(r):
    p, feat, c = 819_200, 34, 5
    pts = rand(p, feat)
    ctr = rand(c, feat)
    f = lambda: torch.argmin(torch.cdist(pts, ctr, compute_mode="donot_use_mm_for_euclid_dist"), dim=1)
    return "PyTorch", timed(f, r), (p * feat + c * feat) * 4, p * c * feat * 3


def md(r):
    n, nb = 73_728, 128
    pos = rand(n, 4)
    neigh = torch.randint(0, n, (n, nb), device=DEV)
    cutsq, lj1, lj2 = 16.0, 1.5, 2.0

    def f():
        d = pos[:, None, :3] - pos[neigh][:, :, :3]
        r2 = (d * d).sum(-1)
        inv = 1.0 / r2
        r6 = inv * inv * inv
        force = inv * r6 * (lj1 * r6 - lj2)
        force = torch.where(r2 < cutsq, force, torch.zeros_like(force))
        return (d * force[..., None]).sum(1)

    return "PyTorch", timed(f, r), (n * 4 + n * nb) * 4, n * nb * 20


def convolution(r):
    n, taps = 8192, 17
    img = rand(1, 1, n, n)
    wr = rand(1, 1, 1, taps)
    wc = rand(1, 1, taps, 1)
    f = lambda: torch.nn.functional.conv2d(
        torch.nn.functional.conv2d(img, wr, padding=(0, taps // 2)), wc, padding=(taps // 2, 0)
    )
    return "PyTorch (cuDNN)", timed(f, r), n * n * 4, n * n * taps * 4


def gemv_n(r):
    n = 8192
    a, x, y = rand(n, n), rand(n), rand(n)
    f = lambda: torch.addmv(y, a, x, beta=0.5, alpha=1.5)
    return "PyTorch (cuBLAS)", timed(f, r), (n * n + 2 * n) * 4, 2 * n * n


def gemv_t(r):
    n = 8192
    a, x, y = rand(n, n), rand(n), rand(n)
    at = a.t()
    f = lambda: torch.addmv(y, at, x, beta=0.5, alpha=1.5)
    return "PyTorch (cuBLAS)", timed(f, r), (n * n + 2 * n) * 4, 2 * n * n


def atax(r):
    n = 8192
    a, x = rand(n, n), rand(n)
    f = lambda: torch.mv(a.t(), torch.mv(a, x))
    return "PyTorch (cuBLAS)", timed(f, r), (n * n + n) * 4, 4 * n * n


def gesummv(r):
    n = 8192
    a, b, x = rand(n, n), rand(n, n), rand(n)
    f = lambda: torch.mv(a, x).mul_(1.5).add_(torch.mv(b, x), alpha=0.5)
    return "PyTorch (cuBLAS)", timed(f, r), (2 * n * n + n) * 4, 4 * n * n


def mm(r):
    n = 4096
    torch.backends.cuda.matmul.allow_tf32 = False  # plain float32, as the OpenCL kernels compute
    a, b = rand(n, n), rand(n, n)
    f = lambda: a @ b
    return "PyTorch (cuBLAS)", timed(f, r), 2 * n * n * 4, 2 * n**3


def nbody(r):
    n = 131_072
    pos = rand(n, 4)
    vel = rand(n, 4)
    dt, eps2 = 0.005, 500.0

    def f():
        acc = torch.zeros(n, 3, device=DEV)
        step = 4096  # chunks of bodies: the n*n interactions never live in memory at once
        for s in range(0, n, step):
            d = pos[None, :, :3] - pos[s : s + step, None, :3]
            inv = torch.rsqrt((d * d).sum(-1) + eps2)
            acc[s : s + step] = (d * (pos[None, :, 3] * inv * inv * inv)[..., None]).sum(1)
        npos = pos.clone()
        npos[:, :3] += vel[:, :3] * dt + 0.5 * acc * dt * dt
        nvel = vel.clone()
        nvel[:, :3] += acc * dt
        return npos, nvel

    return "PyTorch", timed(f, max(3, r // 4)), 2 * n * 4 * 4, n * n * 20


def sum_(r):
    n = 100_000_000
    xs = rand(n)
    f = lambda: xs.sum()
    return "PyTorch (CUB)", timed(f, r), n * 4, n


def transpose(r):
    n = 8192
    a = rand(n, n)
    f = lambda: a.t().contiguous()
    return "PyTorch", timed(f, r), n * n * 4, 0


# Programs written independently of the suite's files (bench/indep/): the same rules must
# give them the same speed-ups.
def colsum(r):
    n = 8192
    a = rand(n, n)
    f = lambda: a.sum(0)
    return "PyTorch", timed(f, r), n * n * 4, n * n


def rowmax(r):
    n = 8192
    a = rand(n, n)
    f = lambda: a.amax(1)
    return "PyTorch", timed(f, r), n * n * 4, n * n


def sumsq(r):
    n = 100_000_000
    xs = rand(n)
    f = lambda: torch.dot(xs, xs)
    return "PyTorch (cuBLAS)", timed(f, r), n * 4, 2 * n


def mm_nt(r):
    n = 4096
    torch.backends.cuda.matmul.allow_tf32 = False
    a, bt = rand(n, n), rand(n, n)
    f = lambda: a @ bt.t()
    return "PyTorch (cuBLAS)", timed(f, r), 2 * n * n * 4, 2 * n**3


def dot(r):
    n = 100_000_000
    xs, ys = rand(n), rand(n)
    f = lambda: torch.dot(xs, ys)
    return "PyTorch (cuBLAS)", timed(f, r), 2 * n * 4, 2 * n


def mm_tn(r):
    n = 4096
    torch.backends.cuda.matmul.allow_tf32 = False
    at, b = rand(n, n), rand(n, n)
    f = lambda: at.t() @ b
    return "PyTorch (cuBLAS)", timed(f, r), 2 * n * n * 4, 2 * n**3


def rownorm(r):
    rows, cols = 100_000, 1000
    a = rand(rows, cols)
    f = lambda: torch.linalg.vector_norm(a, dim=1)
    return "PyTorch", timed(f, r), rows * cols * 4, 2 * rows * cols


def gemv_bias(r):
    m, n = 10_000, 3000
    torch.backends.cuda.matmul.allow_tf32 = False
    a, x, b = rand(m, n), rand(n), rand(m)
    f = lambda: torch.addmv(b, a, x)
    return "PyTorch (cuBLAS)", timed(f, r), (m * n + n + m) * 4, 2 * m * n


def jacobi(r):
    # the anchor of both rows of "jacobi 5-point": bench/indep/jacobi.lisp (slides of the rows and
    # of their transpose) and bench/indep/jacobi2d.lisp (LANGUAGE.md's slide2d)
    h = w = 8192
    g = rand(h + 2, w + 2)
    f = lambda: 0.2 * (g[:-2, 1:-1] + g[1:-1, :-2] + g[1:-1, 1:-1] + g[1:-1, 2:] + g[2:, 1:-1])
    return "PyTorch", timed(f, r), (h + 2) * (w + 2) * 4, 5 * h * w


def zip3sum(r):
    n = 100_000_000
    a, b, c = rand(n), rand(n), rand(n)
    f = lambda: torch.dot(a, b) + torch.sum(c)
    return "PyTorch (cuBLAS, CUB)", timed(f, r), 3 * n * 4, 3 * n


def bmm(r):
    batch, n = 4096, 32
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b = rand(batch, n, n), rand(batch, n, n)
    f = lambda: torch.bmm(a, b)
    return "PyTorch (cuBLAS)", timed(f, r), 2 * batch * n * n * 4, 2 * batch * n**3


SUITE = {
    "nn": nn,
    "mri-q": mriq,
    "k-means": kmeans,
    "md": md,
    "convolution": convolution,
    "gemv N": gemv_n,
    "gemv T": gemv_t,
    "atax": atax,
    "gesummv": gesummv,
    "mm": mm,
    "n-body": nbody,
    "sum": sum_,
    "transpose": transpose,
    "column sums": colsum,
    "row max": rowmax,
    "sum of squares": sumsq,
    "mm (B transposed)": mm_nt,
    "dot product": dot,
    "mm (A transposed)": mm_tn,
    "row norms": rownorm,
    "gemv with bias": gemv_bias,
    "jacobi 5-point": jacobi,
    "sum of a*b+c": zip3sum,
    "batched mm": bmm,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SUITE)
    if not torch.cuda.is_available():
        sys.exit("anchors.py: no CUDA device for PyTorch")
    for name in names:
        anchor, ms, nbytes, flops = SUITE[name](args.repeats)
        print(
            json.dumps(
                {
                    "benchmark": name,
                    "anchor": anchor,
                    "ms": round(ms, 5),
                    "copy_ms": round(copy_ms(nbytes, args.repeats), 5),
                    "input_bytes": nbytes,
                    "flops": flops,
                    "device": torch.cuda.get_device_name(),
                }
            ),
            flush=True,
        )
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
