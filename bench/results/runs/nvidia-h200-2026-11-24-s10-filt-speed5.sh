#!/bin/bash
# Second GPU call, issue 12 (branch filt-speed5). "lift" is the branch's final build (kept values
# gathered in local memory and stored by consecutive work-items; next ticket and next tile's
# loads issued before the look-back). A: variants from a build with LIFT_FX_* knobs (same text
# by default, plus one barrier after the look-back): TKC aggregate and ticket before the
# gathering; LANES=64 window of 64; RREG64 -cl-nv-maxrregcount=64; PARTS=1 4096-element tiles;
# STATS look-back trips counted; OLDSMALL the old prefetching shape below 2^25. B: 6.1 and the
# filter alone at 10^8, 10^7, 10^4: main's binary (lift-before) and lift; checks; torch anchor.
D=.devcarry/filt-speed5
mkdir -p /tmp/fb; for b in lift lift-before lift-knobs; do gzip -dc $D/$b.gz > /tmp/fb/$b; chmod +x /tmp/fb/$b; done
export LIFT_CACHE_DIR=/tmp/fb/cache
R=$OUT/res2.txt
V=0
B() { k=$1; shift; XO=""; [[ "$k" == *RREG64* ]] && XO="-cl-nv-maxrregcount=64"; echo "### [$k] $*" >> $R; env $k LIFT_DUMP_BINARY=/tmp/fb/bin/v$V LIFT_EXTRA_BUILD_OPTIONS="-cl-nv-verbose $XO" timeout 25 "$@" --device 1:0 2>&1 | grep -E "KERNEL|baseline copy|check:|error|FXSTATS" | sort -u | awk '!/FXSTATS/ || ++n<=2' | tee /tmp/fb/last >> $R; grep -h "registers\|spill" /tmp/fb/bin/v$V/*.log 2>/dev/null | sort -u | head -2 >> $R; V=$((V+1)); }
P=$D/filter_glb_only.lisp; S="--size N=100000000 --repeats 20"
B "X=0" /tmp/fb/lift bench $P $S
for k in "X=0" "LIFT_FX_TKC=1" "LIFT_FX_LANES=64" "LIFT_FX_TKC=1 LIFT_FX_LANES=64" "RREG64=1" "LIFT_FX_PARTS=1" "LIFT_FX_STATS=1"; do
  B "$k" /tmp/fb/lift-knobs bench $P $S
done
for N in 100000000 10000000 10000; do for p in thesis_6_1 filter_glb_only; do
  B "X=0" /tmp/fb/lift-before bench $D/$p.lisp --size N=$N --repeats 20
  B "X=0" /tmp/fb/lift bench $D/$p.lisp --size N=$N --repeats 20
  [ $N != 100000000 ] && B "LIFT_FX_OLDSMALL=1" /tmp/fb/lift-knobs bench $D/$p.lisp --size N=$N --repeats 20
done; done
B "X=0" /tmp/fb/lift bench $D/thesis_6_1.lisp --size N=300001 --check
B "X=0" /tmp/fb/lift bench $D/thesis_6_1.lisp --size N=4194307 --check
B "X=0" /tmp/fb/lift bench $P --size N=1000003 --check
B "LIFT_FX_TKC=1" /tmp/fb/lift-knobs bench $D/thesis_6_1.lisp --size N=4194307 --check
B "LIFT_FX_PARTS=1" /tmp/fb/lift-knobs bench $P --size N=1000003 --check
timeout 25 python3 - >> $R 2>&1 <<'PY'
import torch
for n in (10**8, 10**7, 10**4):
    x = torch.rand(n, device="cuda")
    for _ in range(3): y = torch.masked_select(x, x > 0.5) * 2.0; z = x.clone()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts, ts2 = [], []
    for _ in range(20):
        s.record(); y = torch.masked_select(x, x > 0.5) * 2.0; e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    for _ in range(20):
        s.record(); z = x.clone(); e.record(); torch.cuda.synchronize(); ts2.append(s.elapsed_time(e))
    ts.sort(); ts2.sort()
    print(f"torch N={n}: masked_select*2 median {ts[10]:.4f} ms, clone {ts2[10]:.4f} ms")
PY
cd /tmp/fb && tar czf $OUT/bin2.tgz bin/v0 2>/dev/null
