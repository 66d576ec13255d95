#!/bin/bash
# second GPU call (mm-speed4): the branch's final state. For mm, mm_nt, mm_tn at 4096^3, each
# with an empty LIFT_CACHE_DIR: lift tune --budget 25s, then lift bench (the tuned variant);
# interleaved with cuBLAS and main's binary (lift-before, its cost model's choice); PTX of
# every variant mm's tune built; one experiment: the tuned mm with -cl-nv-maxrregcount=96.
D=.devcarry/mm-speed4
R=$OUT/results.txt
S="--size M=4096 --size K=4096 --size N=4096"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> $R 2>&1
b() { echo "=== $*" >> $R; local t0=$(date +%s%N); timeout 45 "$@" > /tmp/o.txt 2>&1; local rc=$?; grep -a -v "^\s*$" /tmp/o.txt | cut -c1-260 | tail -14 >> $R; echo "rc=$rc wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" >> $R; }
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
for p in mm mm_tn mm_nt; do
  export LIFT_CACHE_DIR=$(mktemp -d)
  if [ $p = mm ]; then LIFT_DUMP_BINARY=$OUT/bin-tune-mm b $D/lift tune $D/$p.lisp $S --devices 1:0 --budget 25s; else b $D/lift tune $D/$p.lisp $S --devices 1:0 --budget 25s; fi
  b $D/lift bench $D/$p.lisp $S --device 1:0 --repeats 10 --check-size M=256 --check-size K=32 --check-size N=256
  [ $p = mm ] && cublas
  LIFT_CACHE_DIR=$(mktemp -d) b $D/lift-before bench $D/$p.lisp $S --device 1:0 --repeats 10
  [ $p = mm ] && cublas
  [ $p = mm ] && LIFT_EXTRA_BUILD_OPTIONS=-cl-nv-maxrregcount=96 LIFT_DUMP_BINARY=$OUT/bin-maxrreg96 b $D/lift bench $D/$p.lisp $S --device 1:0 --repeats 10
done
echo "=== PTX" >> $R
P=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/ptxas'))" 2>/dev/null); [ -x "$P" ] || P=$(ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
for f in $OUT/bin-*/*.bin; do echo "-- $f lines=$(wc -l < $f) fma=$(grep -a -c 'fma.rn' $f) ldsv4=$(grep -a -c 'ld.shared.v4' $f) lds=$(grep -a -c 'ld.shared' $f) stsv4=$(grep -a -c 'st.shared.v4' $f) sts=$(grep -a -c 'st.shared' $f) ldgv4=$(grep -a -c 'ld.global.nc.v4\|ld.global.v4' $f) ldg=$(grep -a -c 'ld.global' $f) bar=$(grep -a -c 'bar.sync' $f) local=$(grep -a -c 'ld.local\|st.local' $f)" >> $R
  sed -e 's/^\.version 9\.[0-9]*/.version 8.7/' $f > /tmp/p.ptx; [ -n "$P" ] && timeout 20 $P -v --gpu-name sm_90 -o /tmp/p.cubin /tmp/p.ptx 2>&1 | grep -a -E "registers|spill|rror" >> $R; done
cat $OUT/bin-*/builds.tsv >> $R 2>/dev/null
cd $OUT; tar czf bins.tgz bin-* 2>/dev/null; rm -rf bin-*
