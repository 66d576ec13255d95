#!/bin/bash
# The stencil suite (`lift bench`, the cost model's choice) and the 3-D stencils' columns and
# blocks as written, each next to a device copy of its input bytes in the same `lift bench`.
# MODE=small DEV=0:0 OUT=dir: the same at the suite's medium sizes (a check of the script).
# $D holds the binary (`lift`), `variants.py`, `table.py`, the ocl-icd package and var/<key>/col*.lisp,
# made by `lift explore bench/stencil/<key>.lisp --size … --top 64 | python3 variants.py var/<key>
# 'stencil columns of'` at the suite's large sizes (then the blocks of 4x4 removed: the suite's
# choice times them).
# Everything comes back as one archive and one table ($OUT/stencil-fast.tgz, $OUT/table.md):
# the device returns only a few files of $OUT (the first run of this script returned 8 of 62).
set -u
D=.devcarry/stencil-fast
DEV=${DEV:-1:0}
MODE=${MODE:-large}
if [ "$MODE" = large ]; then
mkdir -p /etc/OpenCL/vendors; L=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$L" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
fi
export LIFT_CACHE_DIR=$(mktemp -d)
W=$(mktemp -d)
mkdir -p $W/st $W/var
sizes() { local s=""; for x in $1; do s="$s --size $x"; done; echo $s; }
declare -A SZ
while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*|key) continue ;; esac
  if [ "$MODE" = large ]; then SZ[$key]=$large; else SZ[$key]=$medium; fi
  s=$(sizes "${SZ[$key]}")
  timeout 60 $D/lift bench $file $s --device $DEV --json > $W/st/$key.json 2> $W/st/$key.err || echo "$key failed: $(head -c 200 $W/st/$key.err)"
done < bench/stencil/suite.tsv
for k in jacobi3d_27pt jacobi3d_19pt jacobi3d_7pt heat3d poisson3d hotspot3d; do
  for f in $D/var/$k/col*.lisp; do
    n=$(basename $f .lisp)
    s=$(sizes "${SZ[$k]}")
    timeout 60 $D/lift bench $f --as-written $s --device $DEV --json > $W/var/$k-$n.json 2> $W/var/$k-$n.err || echo "$k $n failed: $(head -c 200 $W/var/$k-$n.err)"
  done
done
tar czf $OUT/stencil-fast.tgz -C $W st var
python3 $D/table.py $W | tee $OUT/table.md
