#!/bin/bash
# s10 fuzz-rewrite, GPU calls 1 and 2: difffuzz's variants mode on the H200; call 2 first probes which mapWrg x mapLcl
# work-group sizes NVIDIA's driver launches. Carry: .devcarry/fuzz-rewrite (difffuzz release binary, run.sh, probe.sh, probe/).
# call 1: bash .devcarry/fuzz-rewrite/run.sh 33 95
# call 2: bash .devcarry/fuzz-rewrite/probe.sh > $OUT/probe.txt 2>&1; bash .devcarry/fuzz-rewrite/run.sh 34 80

# --- run.sh ---
# #!/bin/bash
# # difffuzz's variants mode on the H200 (device 1:0): bash run.sh SEED SECS
# set -u
# D=.devcarry/fuzz-rewrite
# SEED=$1; SECS=$2
# export LIFT_CACHE_DIR=/tmp/liftcache; mkdir -p $LIFT_CACHE_DIR
# { nproc; nvidia-smi -L; date -u; } > $OUT/info.txt 2>&1
# timeout -s KILL $((SECS + 40)) $D/difffuzz run --seed $SEED --cases 100000 --variants 4 --random 6 --jobs 16 --device 1:0 --out /tmp/f$SEED --max-secs $SECS --shrink-secs 20 --timeout 40 > $OUT/log.txt 2>&1
# echo "rc $?" >> $OUT/info.txt; date -u >> $OUT/info.txt
# cp /tmp/f$SEED/summary.txt $OUT/summary.txt
# tar czf $OUT/f$SEED.tgz -C /tmp f$SEED
# --- probe.sh ---
# #!/bin/bash
# # which mapLcl local sizes NVIDIA's driver takes for a mapWrg × mapLcl kernel: bash probe.sh
# D=.devcarry/fuzz-rewrite
# export LIFT_CACHE_DIR=/tmp/probecache; mkdir -p $LIFT_CACHE_DIR
# for K in 128 256 288 500 512 1000 1024; do
#   echo "== mapLcl $K"; LIFT_DUMP_BINARY=/tmp/probe/$K timeout 30 $D/difffuzz eval $D/probe/wrg$K.lisp $D/probe/wrg$K.json --device 1:0 2>&1 | head -3
#   grep -ah "reqntid\|maxntid\|^\s*\.reg" /tmp/probe/$K/* 2>/dev/null | head -6
# done
