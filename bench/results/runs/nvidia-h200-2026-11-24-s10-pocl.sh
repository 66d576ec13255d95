#!/bin/bash
# call 1: bash pocl.sh; call 2: bash pocl30.sh (carry .devcarry/s10)
# The PoCL tuned-vs-default table of issue 11 on the H200 host's PoCL (16 cores), all suite programs, 10 s each.
set -u; . .devcarry/s10/prelude.sh; D=.devcarry/s10; T0=$(date +%s)
uptime > $OUT/load.txt
timeout 540 python3 scripts/pocl-tune-table.py --lift $D/lift --budget 10s --device 0:0 --cache $OUT/cache --out $OUT/pocl.md > $OUT/pocl.log 2>&1
echo "pocl done at $(( $(date +%s) - T0 )) s rc $?"; rm -rf $OUT/cache
grep -E "^\|" $OUT/pocl.md | head -30; tail -5 $OUT/pocl.log
# --- pocl30.sh ---
# # The PoCL tuned-vs-default table of issue 11 on the H200 host's PoCL (16 cores), all suite programs, 30 s each, the programs whose as-written run the 10 s budget left out.
# set -u; . .devcarry/s10/prelude.sh; D=.devcarry/s10; T0=$(date +%s)
# uptime > $OUT/load.txt
# timeout 330 python3 scripts/pocl-tune-table.py --lift $D/lift --budget 30s --only mriq,md_rows,md_nmajor,convolution_row,mm,nbody --device 0:0 --cache $OUT/cache --out $OUT/pocl.md > $OUT/pocl.log 2>&1
# echo "pocl done at $(( $(date +%s) - T0 )) s rc $?"; rm -rf $OUT/cache
# grep -E "^\|" $OUT/pocl.md | head -30; tail -5 $OUT/pocl.log
