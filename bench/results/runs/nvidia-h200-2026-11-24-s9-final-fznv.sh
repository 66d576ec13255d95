#!/bin/bash
set -u; . .devcarry/s9/prelude.sh; D=.devcarry/s9; S=$1
mkdir -p $OUT/fuzz$S
LIFT_CACHE_DIR=$(mktemp -d) $D/difffuzz run --seed $S --cases 100000 --jobs 8 --out $OUT/fuzz$S --timeout 60 --max-secs ${2:-100} --device 1:0 > $OUT/fuzz$S.log 2>&1
rm -rf $OUT/fuzz$S/cases; tar czf $OUT/fuzz$S.tgz -C $OUT fuzz$S && rm -rf $OUT/fuzz$S
sed -n '/^difffuzz:/,$p' $OUT/fuzz$S.log | head -12
