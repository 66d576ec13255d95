#!/bin/bash
# Session 10's independent programs (bench/indep/suite.tsv) with a 15 s tune each, PoCL fuzz niced beside.
set -u; . bench/results/runs/nvidia-h200-2026-11-24-s10-final-prelude.sh
D=.devcarry/s10; T0=$(date +%s); SEED=$1
mkdir -p $OUT/fuzz$SEED
POCL_MAX_PTHREAD_COUNT=1 LIFT_CACHE_DIR=$(mktemp -d) nice -n 19 $D/difffuzz run --seed $SEED --cases 100000 --jobs 12 --out $OUT/fuzz$SEED --timeout 60 --max-secs ${2:-300} --device 0:0 > $OUT/fuzz$SEED.log 2>&1 &
FZ=$!
SUITE=bench/indep/suite.tsv RAW=$(mktemp -d) RESULTS=$OUT LIFT=$D/lift REPORT=$D/bench-report timeout 450 scripts/bench-suite.sh 1:0 --only ${3:-bmm,zip3sum,gemv_bias,jacobi,jacobi2d,mm_nt,mm_tn,dot,rownorm,colsum,rowmax,sumsq} --budget 15s --tag indep > $OUT/suite.log 2>&1
echo "suite done at $(( $(date +%s) - T0 )) s" >> $OUT/suite.log
# the variants mode on the H200 after the timings (not beside them)
LIFT_CACHE_DIR=$(mktemp -d) timeout -s KILL 110 $D/difffuzz run --seed 44 --cases 100000 --variants 4 --random 6 --jobs 16 --device 1:0 --out /tmp/f44 --max-secs ${4:-60} --shrink-secs 15 --timeout 40 > $OUT/fuzzvar44.log 2>&1
cp /tmp/f44/summary.txt $OUT/fuzzvar44-summary.txt 2>/dev/null; tail -25 $OUT/fuzzvar44.log
wait $FZ
rm -rf $OUT/fuzz$SEED/cases 2>/dev/null
tar czf $OUT/fuzz$SEED.tgz -C $OUT fuzz$SEED && rm -rf $OUT/fuzz$SEED
grep -E "^difffuzz:|^programs|^agree|^clean|^different only|^wrong|^internal|^driver|^crash|^timeout" $OUT/fuzz$SEED.log
tail -40 $OUT/suite.log
