#!/bin/bash
set -u; . .devcarry/s8/prelude.sh; D=.devcarry/s8
export LIFT_CACHE_DIR=$(mktemp -d)
for p in nbody; do echo "== $p cost model"; $D/lift bench bench/cgo17/$p.lisp --size N=131072 --device 1:0 --repeats 10 2>&1 | grep -E "variant|KERNEL|total"; done
echo "== nbody low-level 2 rows 64 t256"; $D/lift bench .devcarry/s8/nb_r2_64_t256.lisp --size N=131072 --device 1:0 --repeats 10 2>&1 | grep -E "KERNEL|total"
echo "== mm tune --budget 60s"; /usr/bin/time -f 'wall %e s, max RSS %M KiB' $D/lift tune bench/cgo17/mm.lisp --size M=4096 --size K=4096 --size N=4096 --devices 1:0 --budget 60s --repeats 3 --check-steps 0 2>&1 | grep -E "best|wall|configurations|tried" | head -5
$D/lift bench bench/cgo17/mm.lisp --size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 10 2>&1 | grep -E "variant|KERNEL|total"
python3 -c "
import torch
torch.backends.cuda.matmul.allow_tf32=False
a=torch.rand(4096,4096,device='cuda');b=torch.rand(4096,4096,device='cuda')
for _ in range(5): a@b
s=torch.cuda.Event(enable_timing=True);e=torch.cuda.Event(enable_timing=True);t=[]
for _ in range(20):
  s.record();a@b;e.record();torch.cuda.synchronize();t.append(s.elapsed_time(e))
t.sort();print('cuBLAS mm 4096^3 median ms',t[10])"
