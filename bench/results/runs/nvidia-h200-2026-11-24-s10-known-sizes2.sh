#!/usr/bin/env bash
# Session 10, branch known-sizes2: the two nvidia-h200 calls, run from the repository root after
# the session brief's driver registration, with D=.devcarry/known-sizes2 holding `lift` (this
# branch, release) and `lift-before` (release build of the base cbd94f7). Each program is tuned
# on an empty tuning cache (LIFT_CACHE_DIR) with the suite script's flags (--budget, --repeats 3,
# --check-steps 0), then `lift bench` times the tuned configuration (20 repeats).
# Usage: bash this.sh 1|2
set -u
D=.devcarry/known-sizes2
R=$OUT/r; mkdir -p $R
one() { # binary key file budget sizes...
  local bin=$1 key=$2 file=$3 budget=$4; shift 4
  local sizes=(); for s in "$@"; do sizes+=(--size "$s"); done
  export LIFT_CACHE_DIR=/tmp/cache-$bin-$key; rm -rf $LIFT_CACHE_DIR
  local t0=$(date +%s.%N)
  timeout 45 $D/$bin tune $file "${sizes[@]}" --devices 1:0 --budget $budget --repeats 3 --check-steps 0 > $R/$key-$bin.tune 2>&1
  local t1=$(date +%s.%N)
  # (the bench builds its kernels again, in a cache holding only the tuning results, so that
  # LIFT_DUMP_BINARY writes them)
  mkdir -p $LIFT_CACHE_DIR-b; cp $LIFT_CACHE_DIR/tuning.json $LIFT_CACHE_DIR-b/
  LIFT_CACHE_DIR=$LIFT_CACHE_DIR-b LIFT_DUMP_BINARY=$R/bin-$key-$bin timeout 30 $D/$bin bench $file "${sizes[@]}" --device 1:0 --repeats 20 > $R/$key-$bin.bench 2>&1
  grep -c 'e_flag' $R/bin-$key-$bin/*.cl 2>/dev/null | sed "s|^|$key $bin e_flag lines: |" >> $R/summary.txt
  echo "$key $bin tune $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s: $(grep '^kernels total' $R/$key-$bin.bench) | $(grep '^variant' $R/$key-$bin.bench)" >> $R/summary.txt
}
case "${1:-}" in
1)
  for b in lift-before lift; do
    one $b convolution_row bench/cgo17/convolution_row.lisp 25s H=8192 W=8192
    one $b convolution_col bench/cgo17/convolution_col.lisp 25s H=8192 W=8192
  done
  ;;
2)
  # (call 2 has 150 s in all: budgets of 20 s, and gemv N and mm of this branch only, to
  # compare with the official s9 table: 0.0693 and 3.040 ms)
  for b in lift-before lift; do
    one $b jacobi bench/indep/jacobi.lisp 20s H=8192 W=8192
    one $b jacobi2d bench/indep/jacobi2d.lisp 20s H=8192 W=8192
  done
  one lift gemv_n bench/cgo17/gemv_n.lisp 10s M=8192 N=8192
  one lift mm bench/cgo17/mm.lisp 15s M=4096 K=4096 N=4096
  ;;
*) echo "usage: $0 1|2" >&2; exit 2 ;;
esac
for f in $R/bin-*/*.bin; do
  [ -f "$f" ] && echo "$f mul=$(grep -c 'mul.lo\|mad.lo' $f) shl=$(grep -c 'shl.b' $f) .reg=$(grep -c '\.reg' $f) fma=$(grep -c 'fma.rn' $f) lines=$(wc -l < $f)"
done > $R/ptx-counts.txt
tar czf $OUT/r.tgz -C $OUT r
