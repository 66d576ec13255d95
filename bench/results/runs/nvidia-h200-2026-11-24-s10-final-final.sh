#!/bin/bash
# Session 10's final measurement, one half of the suite per call ($1 = 1 or 2), with the
# differential fuzzer on PoCL niced in the background (seed $2, resumable from state/).
set -u; . bench/results/runs/nvidia-h200-2026-11-24-s10-final-prelude.sh
D=.devcarry/s10; T0=$(date +%s); PART=$1; SEED=$2
mkdir -p $OUT/fuzz$SEED; cp -r $D/state/fuzz$SEED/. $OUT/fuzz$SEED/ 2>/dev/null
POCL_MAX_PTHREAD_COUNT=1 LIFT_CACHE_DIR=$(mktemp -d) nice -n 19 $D/difffuzz run --seed $SEED --cases 100000 --jobs 12 --out $OUT/fuzz$SEED --timeout 60 --max-secs ${3:-300} --device 0:0 > $OUT/fuzz$SEED.log 2>&1 &
FZ=$!
if [ $PART = 1 ]; then ONLY=nn,mriq,kmeans_rows,kmeans_fmajor,md_rows,md_nmajor,convolution_row,convolution_col
else ONLY=gemv_n,gemv_t,atax,gesummv,mm,nbody,sum,transpose; fi
RAW=$(mktemp -d) RESULTS=$OUT LIFT=$D/lift REPORT=$D/bench-report timeout 480 scripts/bench-suite.sh 1:0 --only $ONLY --budget 25s --tag part$PART > $OUT/suite.log 2>&1
echo "suite done at $(( $(date +%s) - T0 )) s" >> $OUT/suite.log
if [ $PART = 2 ]; then
  for n in 100000000 10000000 10000; do for p in thesis_6_1 filter_glb_only; do echo "== $p N=$n"; $D/lift bench examples/$p.lisp --size N=$n --device 1:0 --repeats 20 2>&1 | tail -5; done; done > $OUT/filter.log 2>&1
  $D/lift bench examples/thesis_6_1.lisp --size N=4194307 --device 1:0 --check 2>&1 | tail -3 >> $OUT/filter.log
  for p in thesis_6_1 filter_glb_only; do LIFT_CACHE_DIR=$(mktemp -d) LIFT_DUMP_BINARY=$OUT/bin_$p $D/lift bench examples/$p.lisp --size N=100000000 --device 1:0 --repeats 5 > /dev/null 2>&1; echo "== $p PTX registers"; grep -h "\.reg " $OUT/bin_$p/* 2>/dev/null | sort | uniq -c; grep -h "maxntid\|reqntid" $OUT/bin_$p/* 2>/dev/null | sort | uniq -c; done >> $OUT/filter.log
  tar czf $OUT/bins.tgz -C $OUT bin_thesis_6_1 bin_filter_glb_only 2>/dev/null; rm -rf $OUT/bin_*
fi
wait $FZ
rm -rf $OUT/fuzz$SEED/cases 2>/dev/null
tar czf $OUT/fuzz$SEED.tgz -C $OUT fuzz$SEED && rm -rf $OUT/fuzz$SEED
grep -E "^difffuzz:|^programs|^agree|^clean|^different only|^wrong|^internal|^driver|^crash|^timeout" $OUT/fuzz$SEED.log
tail -30 $OUT/suite.log; cat $OUT/filter.log 2>/dev/null
