#!/bin/bash
# First GPU call, issue 12 (branch filt-speed4): variants of the filter kernel chosen by macros
# in its text (LIFT_FX_LBK reads a look-back lane, LIFT_FX_EARLY aggregate published in the
# scan, LIFT_FX_PF 0 no prefetch / 1 prefetch after the look-back / 2 ticket in the scan and
# prefetch before the look-back), set with LIFT_EXTRA_BUILD_OPTIONS; and ptxas register caps.
D=.devcarry/filt-speed4
mkdir -p /tmp/fb; for b in lift lift-before; do gzip -dc $D/$b.gz > /tmp/fb/$b; chmod +x /tmp/fb/$b; done
export LIFT_CACHE_DIR=/tmp/fb/cache
R=$OUT/res1.txt
/tmp/fb/lift devices | cut -c1-70 > $R
V=0
B() { o=$1; shift; echo "### [$o] $*" >> $R; LIFT_DUMP_BINARY=/tmp/fb/bin/v$V LIFT_EXTRA_BUILD_OPTIONS="-cl-nv-verbose $o" timeout 25 /tmp/fb/lift bench "$@" --device 1:0 2>&1 | grep -E "KERNEL|baseline copy|check:|error" >> $R; grep -h "registers\|spill" /tmp/fb/bin/v$V/*.log 2>/dev/null | sort -u | head -3 >> $R; V=$((V+1)); }
P=$D/filter_glb_only.lisp; S="--size N=100000000 --repeats 20"
B "" $P $S
B "-D LIFT_FX_LBK=4" $P $S
B "-D LIFT_FX_LBK=8" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_EARLY=1" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_PF=2" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_PF=0" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_EARLY=1 -D LIFT_FX_PF=2" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_PF=0 -cl-nv-maxrregcount=40" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_PF=0 -cl-nv-maxrregcount=64" $P $S
B "-D LIFT_FX_LBK=4 -cl-nv-maxrregcount=80" $P $S
B "-D LIFT_FX_LBK=4 -D LIFT_FX_EARLY=1 -D LIFT_FX_PF=2" $D/thesis_6_1.lisp --size N=300001 --check
B "-D LIFT_FX_LBK=8 -D LIFT_FX_EARLY=1" $D/thesis_6_1.lisp --size N=4194307 --check
B "-D LIFT_FX_LBK=4" $P --size N=10000000 --repeats 20
B "" $P --size N=10000000 --repeats 20
echo "### lift-before 1e8" >> $R; timeout 25 /tmp/fb/lift-before bench $P $S --device 1:0 2>&1 | grep -E "KERNEL|baseline copy|error" >> $R
cd /tmp/fb && tar czf $OUT/bin1.tgz bin 2>/dev/null
