#!/bin/bash
# nn, md_rows and n-body again after the lean tuple/vector inputs (their tune inputs were values).
set -u; . .devcarry/s9/prelude.sh; D=.devcarry/s9; T0=$(date +%s)
RAW=$(mktemp -d) RESULTS=$OUT LIFT=$D/lift REPORT=$D/bench-report timeout 400 scripts/bench-suite.sh 1:0 --only nn,md_rows,nbody --budget 25s --tag rows > $OUT/suite.log 2>&1
grep -E "^\| (nn|md|n-body)" $OUT/*.md | head -8; grep -h -E "^search|^best" $OUT/suite.log | head; echo "done at $(( $(date +%s) - T0 )) s"
