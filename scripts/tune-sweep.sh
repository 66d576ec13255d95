#!/usr/bin/env bash
# The tuning sweep of issue 4 on every device: matrix-matrix multiplication at 1024^3 and the
# sum of 10^8 floats. Usage: scripts/tune-sweep.sh [lift-binary]
set -u
LIFT=${1:-target/release/lift}
"$LIFT" devices
echo "== mm 1024^3"
"$LIFT" tune examples/hl_mm.lisp --size M=1024 --size N=1024 --size K=1024 --devices all --top 4 --repeats 3 --out "${OUT:-/tmp}/tune_mm.csv"
echo "== sum 10^8"
"$LIFT" tune examples/hl_sum.lisp --size N=100000000 --devices all --top 4 --repeats 5 --out "${OUT:-/tmp}/tune_sum.csv"
