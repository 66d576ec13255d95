#!/bin/bash
# mm-regblock: one GPU measurement of register-blocked mm at 4096^3 (see the branch's report)
# The programs other than mm_regblock.lisp and mm.lisp are `lift explore` variants saved to .devcarry (see mm-regblock-nvidia-h200-2026-11-24.md).
D=.devcarry/mm-regblock; L=$D/lift; S="--size M=4096 --size K=4096 --size N=4096"
export LIFT_CACHE_DIR=/tmp/liftcache; mkdir -p $LIFT_CACHE_DIR
$L devices
echo "== cuBLAS anchor"
timeout 30 python3 -c "
import torch,statistics
torch.backends.cuda.matmul.allow_tf32=False
n=4096; a=torch.rand(n,n,device='cuda'); b=torch.rand(n,n,device='cuda')
for _ in range(5): a@b
torch.cuda.synchronize(); t=[]
for _ in range(20):
  s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True); s.record(); a@b; e.record(); e.synchronize(); t.append(s.elapsed_time(e))
m=statistics.median(t); print('cuBLAS fp32 4096^3: %.4f ms, %.2f TFLOP/s'%(m, 2*n**3/m/1e9))
"
for f in mm_regblock flat_v0 flat_v1 strided_v0 contig_v0 flat_v3; do
  echo "== $f: $(head -1 $D/$f.lisp)"
  C=""; case $f in mm_regblock|flat_v0) C="--check-size M=256 --check-size K=32 --check-size N=256";; esac
  timeout 25 $L bench $D/$f.lisp $S --device 1:0 --repeats 10 $C 2>&1 | tail -4
done
echo "== tune mm.lisp (top 4)"
timeout 45 $L tune $D/mm.lisp $S --devices 1:0 --top 4 --repeats 3 --check-steps 0 2>&1 | tail -12
echo "== bench mm.lisp (tuned)"
timeout 20 $L bench $D/mm.lisp $S --device 1:0 --repeats 10 2>&1 | tail -4
