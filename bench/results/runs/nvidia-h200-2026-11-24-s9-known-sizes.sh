#!/usr/bin/env bash
# Session 9, branch known-sizes: the two nvidia-h200 calls, run from the repository root with
# D=.devcarry/known-sizes holding `lift` (this branch, release), `lift-before` (release build of
# the base 91b25a1, call 1 only), `difffuzz` (release, call 2), scripts/pocl-tune-table.py and,
# for call 2, the tuning cache of call 1 in $D/cache. Each call starts with the driver
# registration of the session's brief. Usage: bash this.sh 1|2
set -u
D=.devcarry/known-sizes
case "${1:-}" in
1)
  R=$OUT/r; mkdir -p $R
  cp $D/lift $D/lift-after
  for b in before after; do
    /usr/bin/time -v $D/lift-$b bench bench/cgo17/mm.lisp --device 1:0 --size M=4096 --size K=4096 --size N=4096 --repeats 5 > $R/mm-$b.txt 2> $R/mm-$b.time
    /usr/bin/time -v $D/lift-$b bench examples/thesis_6_1.lisp --device 1:0 --size N=100000000 --repeats 5 > $R/f61-$b.txt 2> $R/f61-$b.time
  done
  LIFT_DUMP_BINARY=$R/bin-dot $D/lift bench bench/indep/dot.lisp --device 1:0 --size N=100000000 > $R/dot.txt 2>&1
  LIFT_DUMP_BINARY=$R/bin-sum $D/lift bench bench/cgo17/sum.lisp --device 1:0 --size N=100000000 > $R/sum.txt 2>&1
  timeout 100 python3 $D/pocl-tune-table.py --lift $D/lift --budget 8s --device 0:0 --cache $R/cache \
    --only nn,mriq_phimag,mriq,kmeans_rows,kmeans_fmajor,md_rows,md_nmajor,convolution_row,convolution_col --out $R/part1.md
  ;;
2)
  R=$OUT/r2; mkdir -p $R
  LIFT_DUMP_BINARY=$R/bin-dot $D/lift bench bench/indep/dot.lisp --device 1:0 --size N=100000000 --check-size N=4000000 > $R/dot.txt 2>&1
  LIFT_DUMP_BINARY=$R/bin-sum $D/lift bench bench/cgo17/sum.lisp --device 1:0 --size N=100000000 --check-size N=4000000 > $R/sum.txt 2>&1
  for d in bin-dot bin-sum; do for f in $R/$d/*.bin; do
    echo "$f ld.global.nc.v4=$(grep -c 'ld.global.nc.v4' $f) scalar-f32-loads=$(grep -c 'ld.global.nc.f32\|ld.global.f32' $f)"
  done; done > $R/ptx-counts.txt
  timeout 40 $D/difffuzz run --seed 24 --cases 100000 --jobs 14 --device 1:0 --max-secs 28 --timeout 20 --out $R/fz24 > $R/fz24.log 2>&1
  cp -r $D/cache $R/cache
  timeout 92 python3 $D/pocl-tune-table.py --lift $D/lift --budget 10s --device 0:0 --cache $R/cache \
    --only gemv_n,gemv_t,atax,gesummv,mm,sum,transpose,nbody --out $R/part2.md
  ;;
*) echo "usage: $0 1|2" >&2; exit 2 ;;
esac
