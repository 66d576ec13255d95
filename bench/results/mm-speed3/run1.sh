#!/bin/bash
# first GPU call (mm-speed3): main's derived 128x128/8x8/k8 kernel (old_*) against the K-major
# A tile (new_*: unpadded; pad_*: rows padded by 4), several tile shapes; PTX + ptxas -v
# (the driver's PTX 9.0 relabelled 8.7 for the machine's triton ptxas, for register counts)
D=.devcarry/mm-speed3
R=$OUT/results.txt
S="--size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 10"
export LIFT_CACHE_DIR=/tmp/liftcache1; rm -rf $LIFT_CACHE_DIR; mkdir -p $LIFT_CACHE_DIR
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> $R 2>&1
b() { echo "=== $*" >> $R; local t0=$(date +%s%N); timeout 30 "$@" 2>&1 | grep -a -E "KERNEL|kernel|check|rror" >> $R; echo "rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >> $R; }
for f in old_128x128_k8 new_128x128_k8 pad_mm_128x128-8x8-k8 pad_mm_128x128-8x8-k16 pad_mm_128x64-8x8-k8 pad_mm_128x64-8x8-k16 pad_mm_64x128-8x8-k8 old_128x128_k16 pad_mm_128x64-8x4-k16 old_128x64_8x4_k16 pad_mm_tn_128x128-8x8-k8 pad_mm_tn_128x128-8x8-k16 pad_mm_tn_128x64-8x8-k8 pad_mm_nt_128x128-8x8-k8 pad_mm_nt_128x128-8x8-k16 pad_mm_nt_128x64-8x8-k8; do
  LIFT_DUMP_BINARY=$OUT/bin-$f b $D/lift bench $D/$f.lisp $S
done
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
echo "=== PTX" >> $R
P=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/ptxas'))" 2>/dev/null); [ -x "$P" ] || P=$(ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
echo "ptxas=$P" >> $R
for f in $OUT/bin-*/*.bin; do echo "-- $f lines=$(wc -l < $f) fma=$(grep -a -c 'fma.rn' $f) ldsv4=$(grep -a -c 'ld.shared.v4' $f) lds=$(grep -a -c 'ld.shared' $f) sts=$(grep -a -c 'st.shared' $f) ldg=$(grep -a -c 'ld.global' $f) ldgv4=$(grep -a -c 'ld.global.v4' $f) bar=$(grep -a -c 'bar.sync' $f) local=$(grep -a -c 'ld.local\|st.local' $f)" >> $R
  sed -e 's/^\.version 9\.[0-9]*/.version 8.7/' $f > /tmp/p.ptx; [ -n "$P" ] && timeout 20 $P -v --gpu-name sm_90 -o /tmp/p.cubin /tmp/p.ptx 2>&1 | grep -a -E "registers|spill|rror" >> $R; done
cat $OUT/bin-*/builds.tsv >> $R 2>/dev/null
cd $OUT; tar czf bins.tgz bin-* 2>/dev/null; rm -rf bin-*
