#!/bin/bash
# issue 11 indep-forms: lift bench of the independent programs (cost model's variant, empty
# tuning cache) next to the suite's sum and mm, then the PyTorch anchors, on device 1:0.
D=.devcarry/indep-forms
export LIFT_CACHE_DIR=/tmp/liftcache
$D/lift devices
b() { name=$1; shift; echo "== $name"; timeout 40 $D/lift bench "$@" --device 1:0 --json > $OUT/$name.json 2> $OUT/$name.err; echo "rc $?"; head -c 600 $OUT/$name.json; echo; head -c 300 $OUT/$name.err; }
b sumsq $D/sumsq.lisp --size N=100000000 --check-size N=4000000
b dot $D/dot.lisp --size N=100000000 --check-size N=4000000
b sum $D/sum.lisp --size N=100000000
b mm_nt $D/mm_nt.lisp --size M=4096 --size K=4096 --size N=4096 --check-size M=256 --check-size K=256 --check-size N=256
b mm_tn $D/mm_tn.lisp --size M=4096 --size K=4096 --size N=4096 --check-size M=256 --check-size K=256 --check-size N=256
b mm $D/mm.lisp --size M=4096 --size K=4096 --size N=4096
echo "== anchors"
timeout 40 python3 $D/anchors.py --only "sum of squares,dot product,sum,mm (B transposed),mm (A transposed),mm" | tee $OUT/anchors.jsonl
