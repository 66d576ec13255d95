#!/usr/bin/env python3
"""The scaling model of `lift run --mpi` (issue 32), on paper: for mm 8192³, n-body 10^6 bodies
× 100 steps and a 3-D 7-point stencil 2048³ × 100 steps on R ranks (one H200 each), the bytes a
rank receives, the compute per rank and the predicted speed-up over one process, at links of
25 GB/s and 200 GB/s. Prints the Markdown tables of bench/results/mpi-scaling-2026-12-02.md.

The transport is the one `crates/lift-devices/src/ranks` implements: rank 0 holds the data;
sliced inputs are scattered from it (it sends (R-1)/R of them over its one link), whole inputs
broadcast (a large-message broadcast, scatter then ring all-gather: 2(R-1)/R of them per link),
the result gathered to it ((R-1)/R); a host loop exchanges per step an all-gather of the state
(ring: (R-1)/R of it per link) or halo planes with each neighbour (full-duplex links: a rank
sends and receives its two planes at once). Each rank copies its share to and from its device
over PCIe (P); a broadcast input is copied whole by every rank. Compute per step is one H200's
time measured by lift, divided by R (the split's slices are equal). Nothing overlaps.
"""

P = 50e9  # host <-> device (PCIe 5 x16, achieved)
F4 = 4  # bytes of a float

# Per-device compute, from lift's own H200 measurements:
#  mm 4096³: 2.97 ms (bench/results/nvidia-h200-2026-11-24.md, mm B transposed) -> 8192³ = 8×.
MM_S = 8 * 2.965e-3
#  n-body: 131072 bodies in 11.64 ms (same file) -> 10^6 bodies: (10^6/131072)² × that.
NB_S = (1e6 / 131072) ** 2 * 11.64e-3
#  jacobi3d_7pt 512³: 4.52 ms by today's default lowering, 0.283 ms for a copy of its input
#  (bench/results/stencil-nvidia-h200-2026-12-01.md) -> 2048³ = 64×; the copy is the bound a
#  stencil lowering could reach.
ST_S = 64 * 4.5225e-3
ST_BOUND_S = 64 * 0.2834e-3


def mm(R, B):
    n = 8192
    s = n * n * F4  # one matrix
    comm = (R - 1) / R * s / B + 2 * (R - 1) / R * s / B + (R - 1) / R * s / B
    copies = (s / R + s + s / R) / P  # A's slice and B whole up, C's slice down
    t1 = MM_S + 3 * s / P
    tr = MM_S / R + copies + comm
    recv = s / R + s  # A's slice + B whole
    return t1, tr, recv, 0.0, MM_S / R


def nbody(R, B, steps=100):
    n = 10**6
    state = n * 16  # x, y, vx, vy
    masses = n * F4
    first = (R - 1) / R * state / B + 2 * (R - 1) / R * masses / B
    last = (R - 1) / R * state / B
    per_step = (R - 1) / R * state / B
    copies = (state / R + masses + state / R) / P + steps * (state / P)  # whole state up each step
    t1 = steps * NB_S + (state + masses + state) / P
    tr = steps * (NB_S / R + per_step) + first + last + copies
    return t1, tr, state / R + masses, (R - 1) / R * state, NB_S / R


def stencil(R, B, steps=100, per_step_s=ST_S):
    n = 2048
    grid = n**3 * F4
    plane = n * n * F4
    first = (R - 1) / R * grid / B
    last = (R - 1) / R * grid / B
    halo = (2 * plane / B) if R > 1 else 0.0
    copies = 2 * grid / R / P + steps * 2 * plane / P
    t1 = steps * per_step_s + 2 * grid / P
    tr = steps * (per_step_s / R + halo) + first + last + copies
    return t1, tr, grid / R, 2 * plane if R > 1 else 0, per_step_s / R


def table(name, f, unit_step):
    rows = [f"### {name}", "",
            "| R | receives (first) | receives per step | compute per rank | speed-up at 25 GB/s | at 200 GB/s | steady state per step, 25 / 200 GB/s |",
            "|---|---|---|---|---|---|---|"]
    for R in [2, 4, 8, 16, 32, 64]:
        t1, t25, recv, step, comp = f(R, 25e9)
        _, t200, _, _, _ = f(R, 200e9)
        # steady state: one step's compute and exchange only (what a long loop approaches)
        if unit_step:
            c1 = comp * R
            s25 = c1 / (comp + step / 25e9)
            s200 = c1 / (comp + step / 200e9)
            steady = f"{s25:.1f}× / {s200:.1f}×"
        else:
            steady = "-"
        rows.append(
            f"| {R} | {recv/2**20:,.0f} MiB | {step/2**20:,.1f} MiB | {comp*1e3:,.1f} ms | "
            f"{t1/t25:.2f}× | {t1/t200:.2f}× | {steady} |"
        )
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(table("mm 8192³ (one product; A scattered by rows, B broadcast, C gathered)", mm, False))
    print(table("n-body 10^6 bodies × 100 steps (state all-gathered each step)", nbody, True))
    print(table("3-D 7-point stencil 2048³ × 100 steps, today's lowering (halo planes each step)", stencil, True))
    print(table("3-D 7-point stencil 2048³ × 100 steps at the copy bound",
                lambda R, B: stencil(R, B, per_step_s=ST_BOUND_S), True))
