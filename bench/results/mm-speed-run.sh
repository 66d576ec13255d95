#!/bin/bash
# mm-speed: one H200 run. lift bench of mm.lisp (cost model's choice) with main's binary and
# this branch's, the branch's low-level variants, and cuBLAS (torch.mm, TF32 off).
set -u
D=.devcarry/mm-speed
S="--size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 10"
export LIFT_CACHE_DIR=/tmp/liftcache-mmk; mkdir -p $LIFT_CACHE_DIR
B() { echo "== $*"; timeout 25 "$@" 2>&1 | grep -v "^sizes\|^baseline\|^ratio\|^device" ; }
$D/lift devices 2>&1 | cut -c1-100
B $D/lift-before bench $D/mm.lisp $S
B $D/lift bench $D/mm.lisp $S --check-size M=256 --check-size K=32 --check-size N=256
for f in rb128_k8 rb128_k32 rb128x64_k16 mm_rb_contig8 v4; do echo "# $(head -c 150 $D/$f.lisp | head -1)"; B $D/lift bench $D/$f.lisp $S; done
B $D/lift bench $D/rb128_k16.lisp $S
timeout 40 python3 - <<'PY'
import torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
a = torch.randn(4096, 4096, device="cuda"); b = torch.randn(4096, 4096, device="cuda")
for _ in range(5): torch.mm(a, b)
torch.cuda.synchronize()
ts = []
for _ in range(20):
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); torch.mm(a, b); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); m = (ts[9] + ts[10]) / 2
print(f"cuBLAS torch.mm fp32 (TF32 off) median of 20: {m:.4f} ms = {2*4096**3/m/1e9:.2f} TFLOP/s; {torch.cuda.get_device_name()}")
PY
