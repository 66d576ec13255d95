#!/bin/bash
# Session 9's independent programs (bench/indep/suite.tsv) with a 15 s tune each, PoCL fuzz niced beside.
set -u; . .devcarry/s9/prelude.sh
D=.devcarry/s9; T0=$(date +%s); SEED=$1
mkdir -p $OUT/fuzz$SEED
POCL_MAX_PTHREAD_COUNT=1 LIFT_CACHE_DIR=$(mktemp -d) nice -n 19 $D/difffuzz run --seed $SEED --cases 100000 --jobs 12 --out $OUT/fuzz$SEED --timeout 60 --max-secs ${2:-300} --device 0:0 > $OUT/fuzz$SEED.log 2>&1 &
FZ=$!
SUITE=bench/indep/suite.tsv RAW=$(mktemp -d) RESULTS=$OUT LIFT=$D/lift REPORT=$D/bench-report timeout 450 scripts/bench-suite.sh 1:0 --only ${3:-bmm,zip3sum,gemv_bias,jacobi,jacobi2d,mm_nt,mm_tn,dot,rownorm,colsum,rowmax,sumsq} --budget 15s --tag indep > $OUT/suite.log 2>&1
echo "suite done at $(( $(date +%s) - T0 )) s" >> $OUT/suite.log
mkdir -p $OUT/sum; RAW=$(mktemp -d) RESULTS=$OUT/sum LIFT=$D/lift REPORT=$D/bench-report timeout 120 scripts/bench-suite.sh 1:0 --only sum --budget 25s --tag sum > $OUT/sum.log 2>&1
grep -E "^\| sum|search:|best:" $OUT/sum.log $OUT/sum/*.raw.txt | head; echo "sum done at $(( $(date +%s) - T0 )) s"
wait $FZ
rm -rf $OUT/fuzz$SEED/cases 2>/dev/null
tar czf $OUT/fuzz$SEED.tgz -C $OUT fuzz$SEED && rm -rf $OUT/fuzz$SEED
grep -E "^difffuzz:|^programs|^agree|^clean|^different only|^wrong|^internal|^driver|^crash|^timeout" $OUT/fuzz$SEED.log
tail -40 $OUT/suite.log
