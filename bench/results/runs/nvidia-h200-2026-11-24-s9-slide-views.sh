#!/bin/bash
# slide-views (session 9), the two H200 commands: `run` kind nvidia-h200, the driver registration of the brief, then
# `bash .devcarry/slide-views/gpu1.sh` (09:16) and `bash .devcarry/slide-views/gpu2.sh` (09:50).
# lift7: session 7's binary (main at 498851f, .devcarry/rows-layouts2/lift-before); liftmain/lift-before: main's release binary of 07:46 (4c27e8b, session 8's final code);
# lift: this branch (gpu1: a8eff32, slides as views; gpu2: ebe41da, plus chunked rows of reductions and one-row tilings;
# c288e86 after it only re-ranks: the convolution chunks measured here rank below one output a work-item).

#### gpu1.sh
# slide-views, GPU call 1: convolution row (session 7's binary vs main's), jacobi and jacobi2d
# (main's binary vs this branch), PyTorch jacobi anchor. Results in $OUT/r1.txt, binaries in $OUT/bin*.tgz.
D=.devcarry/slide-views
B=/tmp/sv; mkdir -p $B
for b in lift7 liftmain lift; do gunzip -c $D/$b.gz > $B/$b; chmod +x $B/$b; done
R=$OUT/r1.txt
run() { echo "### $*" >> $R; timeout ${T:-20} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
date -u >> $R
$B/lift devices >> $R 2>&1
C="--size H=8192 --size W=8192 --device 1:0"
LIFT_CACHE_DIR=/tmp/c7 LIFT_DUMP_BINARY=$OUT/bin_conv7 run $B/lift7 bench $D/convolution_row.lisp $C --repeats 20
LIFT_CACHE_DIR=/tmp/cm LIFT_DUMP_BINARY=$OUT/bin_convm run $B/liftmain bench $D/convolution_row.lisp $C --repeats 20
LIFT_CACHE_DIR=/tmp/cm LIFT_DUMP_BINARY=$OUT/bin_j2m run $B/liftmain bench $D/jacobi2d.lisp $C --repeats 10
LIFT_CACHE_DIR=/tmp/cb LIFT_DUMP_BINARY=$OUT/bin_j run $B/lift bench $D/jacobi.lisp $C --repeats 20
LIFT_CACHE_DIR=/tmp/cb LIFT_DUMP_BINARY=$OUT/bin_j2 run $B/lift bench $D/jacobi2d.lisp $C --repeats 20 --check-size H=128 --check-size W=256
LIFT_CACHE_DIR=/tmp/c7 run $B/lift7 bench $D/convolution_row.lisp $C --repeats 20
LIFT_CACHE_DIR=/tmp/cm run $B/liftmain bench $D/convolution_row.lisp $C --repeats 20
(cd $OUT && tar czf bin1.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*)
date -u >> $R
T=30 run python3 $D/anchors.py --only "jacobi 5-point"
T=30 LIFT_CACHE_DIR=/tmp/cb run $B/lift tune $D/convolution_row.lisp --devices 1:0 --size H=8192 --size W=8192 --budget 18s --check-steps 0
LIFT_CACHE_DIR=/tmp/cb LIFT_DUMP_BINARY=$OUT/bin_convt run $B/lift bench $D/convolution_row.lisp $C --repeats 20
date -u >> $R
(cd $OUT && tar czf bin2.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*)

#### gpu2.sh
# slide-views, GPU call 2: this branch (lift: tune --budget, then bench of the tuned variant)
# against main's binary (lift-before: bench of its cost-model variant), PyTorch anchors.
D=.devcarry/slide-views
B=/tmp/sv; mkdir -p $B
for b in liftmain lift; do gunzip -c $D/$b.gz > $B/$b; chmod +x $B/$b; done
mv $B/liftmain $B/lift-before
R=$OUT/r2.txt
run() { echo "### $*" >> $R; timeout ${T:-15} "$@" >> $R 2>&1; echo "### rc=$?" >> $R; }
date -u >> $R
export LIFT_CACHE_DIR=/tmp/cb
S="--size H=8192 --size W=8192"; M="--size X=262144 --size K=2048"
for p in "convolution_row:18:$S" "mriq:12:$M" "convolution_col:12:$S" "jacobi2d:8:$S"; do f=${p%%:*}; r=${p#*:}; b=${r%%:*}; s=${r#*:}
  T=$((b+6)) run $B/lift tune $D/$f.lisp --devices 1:0 $s --budget ${b}s --check-steps 0
  LIFT_DUMP_BINARY=$OUT/bin_$f T=10 run $B/lift bench $D/$f.lisp --device 1:0 $s --repeats 20
done
date -u >> $R
for p in "convolution_col:$S" "mriq:$M"; do f=${p%%:*}; s=${p#*:}
  LIFT_CACHE_DIR=/tmp/c0 T=10 run $B/lift-before bench $D/$f.lisp --device 1:0 $s --repeats 20
done
(cd $OUT && tar czf bin2.tgz bin_* 2>/dev/null; rm -rf $OUT/bin_*)
T=20 run python3 $D/anchors.py --only "convolution,mri-q"
date -u >> $R
# session 7's and main's convolution row PTX (call 1) to SASS, where the machine has the tools
TB=$(timeout 10 python3 -c "import triton, os; print(os.path.dirname(triton.__file__))" 2>/dev/null)/backends/nvidia/bin
P=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas $TB/ptxas 2>/dev/null | head -1); O=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump $TB/cuobjdump 2>/dev/null | head -1)
echo "ptxas: $P cuobjdump: $O" >> $R
if [ -n "$P" ]; then for k in conv7 convm; do timeout 10 $P -arch=sm_90 -v $D/$k.ptx -o /tmp/$k.cubin >> $R 2>&1; [ -n "$O" ] && timeout 10 $O -sass /tmp/$k.cubin > $OUT/$k.sass 2>&1; done; fi
