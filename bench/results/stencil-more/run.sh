#!/bin/bash
# The stencil suite with the zipped columns' binary (.devcarry/stencil-more/lift), one command:
# A) each program's cost-model choice beside a device copy of its input bytes (`lift bench`);
# B) the previous binary's columns (v=8 in 2-D, v=4 in 3-D) as written, for the longer columns' anchor;
# C) a short tune (`lift tune --top 3`) of each program, then `lift bench` of the tuned choice.
# Every JSON lands in $OUT as it is made; a deadline keeps the batch inside its minutes.
set -u
D=.devcarry/stencil-more
LIMIT=${1:-250}
[ -n "${LOCAL:-}" ] || { mkdir -p /etc/OpenCL/vendors; L=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$L" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi; }
nvidia-smi -L; $D/lift devices | cut -c1-80
DEV=${DEV:-$($D/lift devices | awk '/NVIDIA|H200/{print $1; exit}')}; DEV=${DEV:-1:0}; echo "device $DEV"
export LIFT_CACHE_DIR=$(mktemp -d)
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
mkdir -p $OUT/A $OUT/B $OUT/C
declare -A SZ
while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*|key|convolution_separable) continue ;; esac
  sz=$large; [ "${SIZECOL:-large}" = medium ] && sz=$medium
  s=""; for x in $sz; do s="$s --size $x"; done; SZ[$key]="$s"
  timeout 30 $D/lift bench $file $s --device $DEV --json > $OUT/A/$key.json 2> $OUT/A/$key.err || echo "A $key failed: $(head -c 200 $OUT/A/$key.err)"
done < bench/stencil/suite.tsv
echo "A done at $(el) s"
for k in jacobi2d_5pt jacobi2d_9pt gaussian jacobi3d_7pt jacobi3d_27pt; do
  [ $(el) -gt $LIMIT ] && break
  timeout 30 $D/lift bench $D/old/$k.lisp ${SZ[$k]} --as-written --device $DEV --json > $OUT/B/$k.json 2> $OUT/B/$k.err || echo "B $k failed: $(head -c 200 $OUT/B/$k.err)"
done
echo "B done at $(el) s"
for k in hotspot hotspot3d jacobi3d_13pt jacobi2d_5pt gaussian jacobi2d_9pt grad2d stencil2d_shoc jacobi3d_7pt jacobi3d_27pt heat3d jacobi3d_19pt poisson3d srad1 srad2; do
  [ $(el) -gt $LIMIT ] && { echo "C stopped before $k at $(el) s"; break; }
  timeout 25 $D/lift tune bench/stencil/$k.lisp ${SZ[$k]} --devices $DEV --top 3 --repeats 3 --check-steps 0 --out $OUT/C/tune-$k.csv > $OUT/C/tune-$k.log 2>&1 || echo "tune $k failed: $(tail -c 200 $OUT/C/tune-$k.log)"
  timeout 25 $D/lift bench bench/stencil/$k.lisp ${SZ[$k]} --device $DEV --json > $OUT/C/$k.json 2> $OUT/C/$k.err || echo "C $k failed: $(head -c 200 $OUT/C/$k.err)"
done
echo "all done at $(el) s"
