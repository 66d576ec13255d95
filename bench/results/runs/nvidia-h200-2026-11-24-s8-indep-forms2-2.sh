#!/bin/bash
# issue 11, independent programs (branch indep-forms2), final state: tune + bench on the H200, PyTorch anchors
D=.devcarry/indep-forms2
export LIFT_CACHE_DIR=/tmp/liftcache2; mkdir -p $LIFT_CACHE_DIR
R=$OUT/results2.txt
run() { echo "### $*" >> $R; s=$(date +%s.%N); timeout ${T:-25} "$@" >> $R 2>&1; echo "### rc=$? wall=$(echo "$(date +%s.%N) - $s" | bc)" >> $R; }
T=40 run python3 $D/anchors.py
T=45 run $D/lift tune $D/zip3sum.lisp --devices 1:0 --size N=100000000 --top 4 --repeats 5 --check-steps 0
LIFT_CACHE_DIR=/tmp/c0 T=15 run $D/lift-before bench $D/bmm.lisp --device 1:0 --size B=4096 --size M=32 --size K=32 --size N=32 --repeats 10
T=25 run $D/lift tune $D/bmm.lisp --devices 1:0 --size B=4096 --size M=32 --size K=32 --size N=32 --top 6 --repeats 5 --check-steps 0
T=30 run $D/lift tune $D/dot.lisp --devices 1:0 --size N=100000000 --top 5 --repeats 10 --check-steps 0
T=25 run $D/lift tune $D/sum.lisp --devices 1:0 --size N=100000000 --top 4 --repeats 10 --check-steps 0
LIFT_CACHE_DIR=/tmp/c1 T=20 run $D/lift bench $D/sumsq.lisp --device 1:0 --size N=100000000 --repeats 20
T=25 run $D/lift tune $D/rownorm.lisp --devices 1:0 --size R=100000 --size C=1000 --top 3 --repeats 5 --check-steps 0
T=25 run $D/lift tune $D/gemv_bias.lisp --devices 1:0 --size M=10000 --size N=3000 --top 3 --repeats 5 --check-steps 0
