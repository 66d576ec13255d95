#!/bin/bash
# second GPU call: this branch's final state against main's binary and cuBLAS, PTX + build times
D=.devcarry/mm-speed2
R=$OUT/results.txt
S="--size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 10"
export LIFT_CACHE_DIR=/tmp/liftcache2; rm -rf $LIFT_CACHE_DIR; mkdir -p $LIFT_CACHE_DIR
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> $R 2>&1
b() { echo "=== $*" >> $R; local t0=$(date +%s%N); timeout 40 "$@" >> $R 2>&1; echo "rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >> $R; }
LIFT_DUMP_BINARY=$OUT/bin-mm b $D/lift bench $D/mm.lisp $S --check-size M=256 --check-size K=48 --check-size N=256
b $D/lift-before bench $D/mm.lisp $S
LIFT_DUMP_BINARY=$OUT/bin-nt b $D/lift bench $D/mm_nt.lisp $S --check-size M=256 --check-size K=48 --check-size N=256
LIFT_DUMP_BINARY=$OUT/bin-tn b $D/lift bench $D/mm_tn.lisp $S --check-size M=256 --check-size K=48 --check-size N=256
echo "=== cuBLAS" >> $R
timeout 30 python3 -c "
import torch
torch.backends.cuda.matmul.allow_tf32=False
a=torch.randn(4096,4096,device='cuda');b=torch.randn(4096,4096,device='cuda')
for _ in range(5): torch.mm(a,b)
ts=[]
for _ in range(20):
  s=torch.cuda.Event(enable_timing=True);e=torch.cuda.Event(enable_timing=True)
  s.record();torch.mm(a,b);e.record();torch.cuda.synchronize();ts.append(s.elapsed_time(e))
ts.sort();print('torch.mm median ms',ts[10])
" >> $R 2>&1
b $D/lift bench $D/mm_v0_128x128.lisp $S
LIFT_DUMP_BINARY=$OUT/bin-v1 b $D/lift bench $D/mm_v1_128x64.lisp $S
b $D/lift bench $D/mm_v2_64x64.lisp $S
b $D/lift-before bench $D/mm_nt.lisp $S
b $D/lift-before bench $D/mm_tn.lisp $S
b $D/lift bench $D/mm.lisp $S
echo "=== PTX" >> $R
P=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/ptxas'))" 2>/dev/null); [ -x "$P" ] || P=$(ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
for f in $OUT/bin-*/*.bin; do echo "-- $f lines=$(wc -l < $f) fma=$(grep -a -c 'fma.rn' $f) ldsv4=$(grep -a -c 'ld.shared.v4' $f) lds=$(grep -a -c 'ld.shared' $f) sts=$(grep -a -c 'st.shared' $f) ldg=$(grep -a -c 'ld.global' $f) ldgv4=$(grep -a -c 'ld.global.v4' $f) bar=$(grep -a -c 'bar.sync' $f) local=$(grep -a -c 'ld.local\|st.local' $f)" >> $R; [ -n "$P" ] && timeout 20 $P -v --gpu-name sm_90 -o /dev/null $f 2>&1 | tail -4 >> $R; done
cat $OUT/bin-*/builds.tsv >> $R 2>/dev/null
cd $OUT; tar czf bins.tgz bin-* 2>/dev/null; rm -rf bin-*
