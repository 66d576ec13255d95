#!/bin/bash
. .devcarry/s10/prelude.sh; D=.devcarry/s10
export LIFT_CACHE_DIR=$(mktemp -d)
LIFT_EXTRA_BUILD_OPTIONS="-cl-nv-verbose" LIFT_DUMP_BINARY=$OUT/bin timeout 100 $D/difffuzz eval $D/c431.lisp $D/c431.json --device 1:0 --variants 4 --random 6 --symbolic 0 --pick 9068858450735176598 > $OUT/eval.txt 2>&1
tail -5 $OUT/eval.txt
cd $OUT/bin && for f in *.log; do echo "== $f"; grep -h "reqd_work_group_size" ${f%.log}.cl | head -3; grep -h "Used\|registers" $f | head -4; done
cat builds.tsv | head -20
