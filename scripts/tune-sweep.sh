#!/usr/bin/env bash
# The tuning sweep of issue 4 on every device: matrix-matrix multiplication at 1024^3 and the
# sum of 10^8 floats. At 1024^3 interpreting each variant would take too long, so the same
# variants are checked against the interpreter at 256^3 first.
# Usage: scripts/tune-sweep.sh [lift-binary] [mm|sum|all]
set -u
LIFT=${1:-target/release/lift}
WHAT=${2:-all}
"$LIFT" devices
if [ "$WHAT" != sum ]; then
  echo "== mm 256^3 (checked)"
  "$LIFT" tune examples/hl_mm.lisp --size M=256 --size N=256 --size K=256 --devices all --top 8 --repeats 3
  echo "== mm 1024^3 (not checked)"
  "$LIFT" tune examples/hl_mm.lisp --size M=1024 --size N=1024 --size K=1024 --devices all --top 8 --repeats 3 --check-steps 0 --out "${OUT:-/tmp}/tune_mm.csv"
fi
if [ "$WHAT" != mm ]; then
  echo "== sum 10^8"
  "$LIFT" tune examples/hl_sum.lisp --size N=100000000 --devices all --top 8 --repeats 5 --out "${OUT:-/tmp}/tune_sum.csv"
fi
