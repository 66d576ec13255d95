#!/bin/bash
# first GPU call (mm-speed4): float4 tile copies (new) against main's kernel (lift-before),
# B's tile unpadded (MMK_NOPAD_B), K by 16 as a #pragma unroll loop or written out (MMK_TEXTUAL),
# cuBLAS; PTX counts and ptxas -v of each kernel built.
D=.devcarry/mm-speed4
R=$OUT/results.txt
S="--size M=4096 --size K=4096 --size N=4096 --device 1:0 --repeats 10"
export LIFT_CACHE_DIR=/tmp/liftcache-mmk1; rm -rf $LIFT_CACHE_DIR; mkdir -p $LIFT_CACHE_DIR
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> $R 2>&1
b() { echo "=== $*" >> $R; local t0=$(date +%s%N); timeout 30 "$@" > /tmp/o.txt 2>&1; local rc=$?; grep -a -E "^variant|KERNEL|kernels total|check|rror" /tmp/o.txt | cut -c1-200 >> $R; echo "rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >> $R; }
cublas() { echo "=== cuBLAS" >> $R; timeout 30 python3 -c "
import torch
torch.backends.cuda.matmul.allow_tf32=False
a=torch.randn(4096,4096,device='cuda');b=torch.randn(4096,4096,device='cuda')
for _ in range(5): torch.mm(a,b)
ts=[]
for _ in range(20):
  s=torch.cuda.Event(enable_timing=True);e=torch.cuda.Event(enable_timing=True)
  s.record();torch.mm(a,b);e.record();torch.cuda.synchronize();ts.append(s.elapsed_time(e))
ts.sort();print('torch.mm median ms',ts[10])
" >> $R 2>&1; }
LIFT_DUMP_BINARY=$OUT/bin-new-mm b $D/lift bench $D/mm.lisp $S
cublas
LIFT_DUMP_BINARY=$OUT/bin-before-mm b $D/lift-before bench $D/mm.lisp $S
MMK_NOPAD_B=1 LIFT_DUMP_BINARY=$OUT/bin-nopad b $D/lift bench $D/mm64x128k8.lisp $S
for f in mm128x64k8 mm128x128k8 mm128x128k16; do LIFT_DUMP_BINARY=$OUT/bin-$f b $D/lift bench $D/$f.lisp $S; done
MMK_TEXTUAL=1 LIFT_DUMP_BINARY=$OUT/bin-k16textual b $D/lift bench $D/mm128x128k16.lisp $S
for p in mm_nt mm_tn; do LIFT_DUMP_BINARY=$OUT/bin-$p b $D/lift bench $D/$p.lisp $S; done
b $D/lift bench $D/mm.lisp $S
cublas
echo "=== PTX" >> $R
P=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/ptxas'))" 2>/dev/null); [ -x "$P" ] || P=$(ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
for f in $OUT/bin-*/*.bin; do echo "-- $f lines=$(wc -l < $f) fma=$(grep -a -c 'fma.rn' $f) ldsv4=$(grep -a -c 'ld.shared.v4' $f) lds=$(grep -a -c 'ld.shared' $f) stsv4=$(grep -a -c 'st.shared.v4' $f) sts=$(grep -a -c 'st.shared' $f) ldgv4=$(grep -a -c 'ld.global.nc.v4\|ld.global.v4' $f) ldg=$(grep -a -c 'ld.global' $f) bar=$(grep -a -c 'bar.sync' $f) local=$(grep -a -c 'ld.local\|st.local' $f)" >> $R
  sed -e 's/^\.version 9\.[0-9]*/.version 8.7/' $f > /tmp/p.ptx; [ -n "$P" ] && timeout 20 $P -v --gpu-name sm_90 -o /tmp/p.cubin /tmp/p.ptx 2>&1 | grep -a -E "registers|spill|rror" >> $R; done
cat $OUT/bin-*/builds.tsv >> $R 2>/dev/null
cd $OUT; tar czf bins.tgz bin-* 2>/dev/null; rm -rf bin-*
