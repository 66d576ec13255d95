#!/bin/bash
# issue 11 (branch batch-rules), call 1: bmm's batched register-blocked variants, zip3sum's float4 grid, gemv_bias's kernel
D=.devcarry/batch-rules
export LIFT_CACHE_DIR=/tmp/liftcache; mkdir -p $LIFT_CACHE_DIR
R=$OUT/results.txt
run() { echo "### $*" >> $R; timeout ${T:-25} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
S="--size B=4096 --size M=32 --size K=32 --size N=32"
$D/lift devices >> $R 2>&1
T=30 run python3 $D/anchors.py --only "batched mm,sum of a*b+c,gemv with bias"
LIFT_CACHE_DIR=/tmp/c0 T=15 run $D/lift-before bench $D/bmm.lisp --device 1:0 $S --repeats 10
LIFT_DUMP_BINARY=$OUT/bin_bmm0 T=15 run $D/lift bench $D/bmm_v0.lisp --as-written --device 1:0 $S --repeats 20
LIFT_DUMP_BINARY=$OUT/bin_bmm1 T=15 run $D/lift bench $D/bmm_v1.lisp --as-written --device 1:0 $S --repeats 20
LIFT_DUMP_BINARY=$OUT/bin_zip3 T=25 run $D/lift bench $D/zip3sum.lisp --device 1:0 --size N=100000000 --repeats 20
LIFT_CACHE_DIR=/tmp/c0 T=20 run $D/lift-before bench $D/zip3sum.lisp --device 1:0 --size N=100000000 --repeats 10
LIFT_DUMP_BINARY=$OUT/bin_gb T=15 run $D/lift bench $D/gemv_bias_v1.lisp --as-written --device 1:0 --size M=10000 --size N=3000 --repeats 20
cd $OUT && tar czf bin.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*
