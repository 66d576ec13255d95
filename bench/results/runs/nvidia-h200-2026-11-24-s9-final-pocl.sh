#!/bin/bash
# The PoCL table's programs whose program as written was not timed with 8-10 s budgets, again
# with 30 s each on the H200 host's PoCL; then mm on the H200 against cuBLAS, twice interleaved.
set -u; . .devcarry/s9/prelude.sh; D=.devcarry/s9; T0=$(date +%s)
timeout 330 python3 scripts/pocl-tune-table.py --lift $D/lift --budget 30s --device 0:0 --cache $OUT/cache \
  --only mriq,kmeans_rows,md_rows,md_nmajor,gemv_t,atax,mm --out $OUT/pocl30.md > $OUT/pocl30.log 2>&1
echo "pocl done at $(( $(date +%s) - T0 )) s"; rm -rf $OUT/cache
export LIFT_CACHE_DIR=$(mktemp -d)
$D/lift tune bench/cgo17/mm.lisp --size M=4096 --size K=4096 --size N=4096 --devices 1:0 --budget 25s --repeats 3 --check-steps 0 2>&1 | grep -E "^search|^best" > $OUT/mm.log
for i in 1 2; do
$D/lift bench bench/cgo17/mm.lisp --size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 20 2>&1 | grep -E "variant|KERNEL|total" >> $OUT/mm.log
python3 -c "
import torch
torch.backends.cuda.matmul.allow_tf32=False
a=torch.rand(4096,4096,device='cuda');b=torch.rand(4096,4096,device='cuda')
for _ in range(5): a@b
s=torch.cuda.Event(enable_timing=True);e=torch.cuda.Event(enable_timing=True);t=[]
for _ in range(20):
  s.record();a@b;e.record();torch.cuda.synchronize();t.append(s.elapsed_time(e))
t.sort();print('cuBLAS mm 4096^3 median ms',t[10])" >> $OUT/mm.log
done
cat $OUT/mm.log; grep -E "^\|" $OUT/pocl30.md | head -30; echo "all done at $(( $(date +%s) - T0 )) s"
