#!/bin/bash
# One batch on the H200 with the merged binary ($D/lift), everything bundled into $OUT/final.tgz:
# 1) library overhead (C and Python against a hand-written OpenCL host), 2) the stencil suite,
# the cost model's choice beside a device copy, 3) forms of n-body, md, nn, k-means, gesummv
# (cost model's choice, --budget 0), 4) tensor-core layouts checked and timed beside cuBLAS,
# 5) scans beside a copy and torch.cumsum (when $D/scan.sh exists).
set -u
D=.devcarry/final2; L=$D/lift
mkdir -p /etc/OpenCL/vendors; LL=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$LL" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
R=/tmp/res; mkdir -p $R/stencil $R/forms $R/tensor
pack() { tar czf $OUT/final.tgz -C /tmp res; }
trap pack EXIT
trap 'echo "stopped by the watchdog" >> $R/times.txt; exit 1' TERM
( sleep ${WATCHDOG:-430}; kill -TERM $$ ) 2>/dev/null &
{ nvidia-smi -L; $L devices; } > $R/devices.txt 2>&1
DEV=$($L devices | awk '/NVIDIA|H200/{print $1; exit}'); DEV=${DEV:-1:0}
export LIFT_CACHE_DIR=$(mktemp -d)
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
# 1) library overhead
cp -r $D/ovb /tmp/ovb; export PYTHONPATH=$PWD/$D/py
for i in 1 2; do
  timeout 45 bash scripts/library-overhead.sh run /tmp/ovb H200 10000 python3 > $R/lib-table$i.md 2> $R/lib-err$i.txt; echo "rc $?" >> $R/lib-err$i.txt
done
echo "library done at $(el) s" | tee -a $R/times.txt
# 2) stencils: cost model's choice, checked at the medium size, beside the copy in the JSON
while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*|key) continue ;; esac
  [ $(el) -gt 170 ] && { echo "stencil stopped before $key" >> $R/times.txt; break; }
  s=""; for x in $large; do s="$s --size $x"; done
  c=""; for x in $medium; do c="$c --check-size $x"; done
  timeout 40 $L bench $file $s $c --device $DEV --json > $R/stencil/$key.json 2> $R/stencil/$key.err
done < bench/stencil/suite.tsv
echo "stencils done at $(el) s" | tee -a $R/times.txt
# 3) forms
ANCHORS=0 FORM_TIMEOUT=40 LIFT=$L timeout 110 scripts/bench-forms.sh --budget 0 --only nbody,md,nn,kmeans,gesummv --raw $R/forms > $R/forms/log.txt 2>&1
echo "forms done at $(el) s" | tee -a $R/times.txt
# 4) tensor cores
S4="--size M=4096 --size K=4096 --size N=4096"; C4="--check-size M=256 --check-size K=256 --check-size N=256"
SB="--size B=16 --size M=1024 --size K=1024 --size N=1024"
timeout 40 python3 $D/cublas.py 4096 16 1024 > $R/tensor/cublas.txt 2>&1
for p in mm mm_nt mm_tn; do timeout 30 $L bench $D/$p.lisp $S4 --precision tf32 $C4 --device $DEV --json > $R/tensor/$p.json 2> $R/tensor/$p.err; done
timeout 30 $L bench $D/bmm.lisp $SB --precision tf32 --check-size B=2 --check-size M=256 --check-size K=64 --check-size N=256 --device $DEV --json > $R/tensor/bmm.json 2> $R/tensor/bmm.err
timeout 30 $L bench $D/mm.lisp $S4 --device $DEV --json > $R/tensor/mm_f32.json 2> $R/tensor/mm_f32.err
echo "tensor done at $(el) s" | tee -a $R/times.txt
# 5) scans
[ -f $D/scan.sh ] && timeout 90 bash $D/scan.sh $R/scan > $R/scan.log 2>&1
echo "all done at $(el) s" | tee -a $R/times.txt
