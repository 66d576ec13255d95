#!/bin/bash
# issue 11, independent programs (branch indep-forms2): tune + bench on the H200, PyTorch anchors
D=.devcarry/indep-forms2
export LIFT_CACHE_DIR=/tmp/liftcache; mkdir -p $LIFT_CACHE_DIR
R=$OUT/results.txt
run() { echo "### $*" >> $R; timeout ${T:-25} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
$D/lift devices >> $R 2>&1
T=40 run python3 $D/anchors.py
# before (main's binary, cost model's first variant, empty cache) and after (cost model's first)
for p in "dot N=100000000" "sum N=100000000"; do set -- $p; f=$1; s=$2
  LIFT_CACHE_DIR=/tmp/c0 run $D/lift-before bench $D/$f.lisp --device 1:0 --size $s --repeats 20
  LIFT_CACHE_DIR=/tmp/c1 LIFT_DUMP_BINARY=$OUT/bin_$f run $D/lift bench $D/$f.lisp --device 1:0 --size $s --repeats 20
done
for p in "rownorm R=100000 C=1000" "gemv_bias M=10000 N=3000" "jacobi H=8192 W=8192" "zip3sum N=100000000" "bmm B=4096 M=32 K=32 N=32"; do set -- $p; f=$1; shift; s=""; for x in "$@"; do s="$s --size $x"; done
  LIFT_CACHE_DIR=/tmp/c0 T=20 run $D/lift-before bench $D/$f.lisp --device 1:0 $s --repeats 10
  T=40 run $D/lift tune $D/$f.lisp --devices 1:0 $s --top 6 --repeats 5 --check-steps 0
done
T=30 run $D/lift tune $D/dot.lisp --devices 1:0 --size N=100000000 --top 4 --check-steps 0
T=30 run $D/lift tune $D/sum.lisp --devices 1:0 --size N=100000000 --top 4 --check-steps 0
cd $OUT && tar czf bin.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*
