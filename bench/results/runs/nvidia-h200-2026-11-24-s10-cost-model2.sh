#!/bin/bash
# Branch cost-model2, session 10: the two H200 commands (run from /work/main with
# carry [".devcarry/cost-model2", ".devcarry/ocl-icd-libopencl1_2.3.1-1_amd64.deb"], after the
# driver registration of the brief). `lift` = this branch's `cargo build --release -p lift`,
# `lift-before` = /work/main's (cbd94f7). Outputs: ...-s10-cost-model2-1.txt, -2.txt.
#
# Files of run 1, made here before the call (`lift explore … --top N`, one file per kept variant,
# /tmp/cost/extract.py; variant numbers as in `lift explore`'s order at 11:58 UTC):
#   gb-{0..4}.lisp   bench/indep/gemv_bias.lisp at M=10000 N=3000 (0: wgreduce 64 padded to
#                    chunks of 48, 1: 128, 2: 256, 3: mapWrg 2500 × mapLcl 4, 4: mapGlb)
#   bmm-{0..11}.lisp bench/indep/bmm.lisp at B=4096 M=K=N=32 (the 12 kept variants)
#   nt-{0..3}.lisp   bench/indep/mm_nt.lisp at 4096³ (128×128, 64×128, 128×64 by 8×8 k8; 64×64 4×4 k16)
D=.devcarry/cost-model2
if [ "$1" = 1 ]; then
R=$OUT/run1.txt
: > $R
$D/lift devices >> $R 2>&1
b() { # file sizes...
  f=$1; shift
  args=(); for s in "$@"; do args+=(--size $s); done
  echo "== $f" >> $R
  timeout 40 $D/lift bench $f "${args[@]}" --device 1:0 --repeats 20 --json >> $R 2>&1
}
export LIFT_DUMP_BINARY=$OUT/bin
for i in 0 1 2 3 4; do b $D/gb-$i.lisp M=10000 N=3000; done
unset LIFT_DUMP_BINARY
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do b $D/bmm-$i.lisp B=4096 M=32 K=32 N=32; done
for i in 0 1 2 3; do b $D/nt-$i.lisp M=4096 K=4096 N=4096; done
for i in 0 1; do b $D/gb-$i.lisp M=10000 N=3000; done
for i in 0 1; do b $D/nt-$i.lisp M=4096 K=4096 N=4096; done
for i in 0 1 2; do b $D/bmm-$i.lisp B=4096 M=32 K=32 N=32; done
echo "== anchors" >> $R
timeout 40 python3 scripts/anchors.py --only "gemv with bias,batched mm,mm (B transposed)" >> $R 2>&1
cd $OUT && tar czf bin.tgz bin && rm -rf bin
fi
if [ "$1" = 2 ]; then
R=$OUT/run2.txt
: > $R
run() { echo "### $*" >> $R; timeout ${T:-20} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
$D/lift devices >> $R 2>&1
SN="--size M=4096 --size K=4096 --size N=4096"
SB="--size B=4096 --size M=32 --size K=32 --size N=32"
SG="--size M=10000 --size N=3000"
SV="--size M=8192 --size N=8192"
for bin in lift lift-before; do
  export LIFT_CACHE_DIR=/tmp/cache-$bin; mkdir -p $LIFT_CACHE_DIR
  for p in "mm_nt:$SN" "bmm:$SB" "gemv_bias:$SG"; do
    prog=${p%%:*}; sz=${p#*:}
    T=22 run $D/$bin tune $D/$prog.lisp --devices 1:0 $sz --budget 15s --check-steps 0
    T=10 run $D/$bin bench $D/$prog.lisp --device 1:0 $sz --repeats 20
  done
done
T=30 run python3 scripts/anchors.py --only "gemv with bias,batched mm,mm (B transposed),gemv N,atax"
for bin in lift lift-before; do
  export LIFT_CACHE_DIR=/tmp/empty-$bin; mkdir -p $LIFT_CACHE_DIR
  T=8 run $D/$bin bench $D/gemv_n.lisp --device 1:0 $SV --repeats 20
  T=8 run $D/$bin bench $D/atax.lisp --device 1:0 $SV --repeats 20
done
fi
