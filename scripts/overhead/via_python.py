"""Per-call time of the Python module's device-array calls on saxpy (1,024) and hl_mm (64x64):
inputs made device arrays once, then each call `prog(...)` returns a device array that the next
call replaces (freeing it), as a Python loop would do it.

usage: python via_python.py REPO CALLS   (prints `saxpy per call us: X`, `mm per call us: X`)

The programs are loaded without a device, so that their libraries are built as
library-overhead.sh builds the C ones (the same kernels); they then run on the first GPU, else
the first device.

Each program's library is built for the benchmark's sizes (`Program.build`), like via_library's."""
import statistics
import sys
import time

import numpy as np

import lift

repo, calls = sys.argv[1], int(sys.argv[2])
data = (np.arange(64 * 64) % 13).astype(np.float32) * 0.125


def per_call(f):
    for _ in range(calls // 10 + 1):
        f()
    loops = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        loops.append((time.perf_counter() - t0) / calls)
    return statistics.median(loops) * 1e6


saxpy = lift.load(f"{repo}/examples/saxpy.lisp")
saxpy.build({"N": 1024})
xs, ys = saxpy.to_device(data[:1024]), saxpy.to_device(data[1024:2048])
print(f"saxpy per call us: {per_call(lambda: saxpy(2.0, xs, ys)):.2f}")
print(f"saxpy used: {saxpy.used}")
mm = lift.load(f"{repo}/examples/hl_mm.lisp")
mm.build({"M": 64, "K": 64, "N": 64})
a = mm.to_device(data.reshape(64, 64))
print(f"mm per call us: {per_call(lambda: mm(a, a)):.2f}")
print(f"mm used: {mm.used}")
