#!/bin/bash
# issue 11 (branch batch-rules), call 2 (final state): tune --budget 25s then bench of bmm, zip3sum,
# gemv_bias; main's binary (lift-before, cost model's first, empty cache); PyTorch anchors
D=.devcarry/batch-rules
export LIFT_CACHE_DIR=/tmp/liftcache; mkdir -p $LIFT_CACHE_DIR
R=$OUT/results.txt
run() { echo "### $*" >> $R; timeout ${T:-25} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
$D/lift devices >> $R 2>&1
T=30 run python3 $D/anchors.py --only "batched mm,sum of a*b+c,gemv with bias"
SB="--size B=4096 --size M=32 --size K=32 --size N=32"; CB="--check-size B=64 --check-size M=32 --check-size K=32 --check-size N=32"
SZ="--size N=100000000"; CZ="--check-size N=600064"
SG="--size M=10000 --size N=3000"; CG="--check-size M=32 --check-size N=3000"
LIFT_CACHE_DIR=/tmp/c0 T=12 run $D/lift-before bench $D/bmm.lisp --device 1:0 $SB --repeats 10
LIFT_CACHE_DIR=/tmp/c0 T=12 run $D/lift-before bench $D/gemv_bias.lisp --device 1:0 $SG --repeats 10
T=32 run $D/lift tune $D/bmm.lisp --devices 1:0 $SB --budget 25s --check-steps 0
LIFT_DUMP_BINARY=$OUT/bin_bmm T=15 run $D/lift bench $D/bmm.lisp --device 1:0 $SB $CB --repeats 20
T=32 run $D/lift tune $D/gemv_bias.lisp --devices 1:0 $SG --budget 25s --check-steps 0
LIFT_DUMP_BINARY=$OUT/bin_gb T=12 run $D/lift bench $D/gemv_bias.lisp --device 1:0 $SG $CG --repeats 20
T=32 run $D/lift tune $D/zip3sum.lisp --devices 1:0 $SZ --budget 25s --check-steps 0
LIFT_DUMP_BINARY=$OUT/bin_zip3 T=20 run $D/lift bench $D/zip3sum.lisp --device 1:0 $SZ $CZ --repeats 20
cd $OUT && tar czf bin.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*
