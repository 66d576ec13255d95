#!/bin/bash
# First GPU call, issue 12 (branch filt-speed5): variants of the filter kernel chosen by LIFT_FX_*
# environment knobs of this branch's generator (CMP: kept values compacted in local memory and
# stored by consecutive work-items; V4: float4 stores of the compacted run; EARLY: compaction
# before the look-back, next ticket and next tile's loads issued before the look-back; TK: next
# ticket taken during the look-back; LANES: look-back window; STATS: look-back trips/stalls
# counted and printed; NOPF: no prefetch at every size).
D=.devcarry/filt-speed5
mkdir -p /tmp/fb; for b in lift lift-before; do gzip -dc $D/$b.gz > /tmp/fb/$b; chmod +x /tmp/fb/$b; done
export LIFT_CACHE_DIR=/tmp/fb/cache
R=$OUT/res1.txt
V=0
B() { k=$1; shift; echo "### [$k] $*" >> $R; env $k LIFT_DUMP_BINARY=/tmp/fb/bin/v$V LIFT_EXTRA_BUILD_OPTIONS="-cl-nv-verbose" timeout 25 "$@" --device 1:0 2>&1 | grep -E "KERNEL|baseline copy|check:|error|FXSTATS" | sort -u | tee /tmp/fb/last >> $R; grep -h "registers\|spill" /tmp/fb/bin/v$V/*.log 2>/dev/null | sort -u | head -2 >> $R; V=$((V+1)); }
S="--size N=100000000 --repeats 20"
for k in "X=0" "LIFT_FX_STATS=1" "LIFT_FX_CMP=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1" "LIFT_FX_CMP=1 LIFT_FX_EARLY=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1 LIFT_FX_STATS=1" "LIFT_FX_TK=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_TK=1" "LIFT_FX_LANES=64"; do
  B "$k" /tmp/fb/lift bench $D/filter_glb_only.lisp $S
done
for k in "X=0" "LIFT_FX_CMP=1 LIFT_FX_V4=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1" "LIFT_FX_CMP=1 LIFT_FX_EARLY=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_TK=1"; do
  B "$k" /tmp/fb/lift bench $D/thesis_6_1.lisp $S
done
B "X=0" /tmp/fb/lift-before bench $D/thesis_6_1.lisp $S
for N in 10000000 10000; do
for k in "X=0" "LIFT_FX_NOPF=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1" "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1 LIFT_FX_NOPF=1" "LIFT_FX_TK=1"; do
  B "$k" /tmp/fb/lift bench $D/thesis_6_1.lisp --size N=$N --repeats 20
done; done
B "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1" /tmp/fb/lift bench $D/thesis_6_1.lisp --size N=4194307 --check
B "LIFT_FX_CMP=1 LIFT_FX_V4=1 LIFT_FX_EARLY=1" /tmp/fb/lift bench $D/filter_glb_only.lisp --size N=1000003 --check
B "LIFT_FX_CMP=1 LIFT_FX_TK=1" /tmp/fb/lift bench $D/thesis_6_1.lisp --size N=300001 --check
cd /tmp/fb && tar czf $OUT/bin1.tgz bin/v0 bin/v3 bin/v5 2>/dev/null
