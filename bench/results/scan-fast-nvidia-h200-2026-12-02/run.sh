#!/bin/bash
# scanGlb of 4-byte scalars in registers with warp shuffles, three builds: liftA (8 vectors of 4
# a work-item in a whole-array scan, 128 predecessors a look-back trip), liftB (16 vectors), lift8
# (the first build: 8 vectors, 32 a trip); each checked against the interpreter at sizes the tiles
# do not divide, beside a copy (lift bench) and torch's copy and cumsum in the same command.
set -u
D=.devcarry/scan-fast; R=/tmp/res; mkdir -p $R
mkdir -p /etc/OpenCL/vendors; L=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$L" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
export LIFT_CACHE_DIR=$(mktemp -d)
nvidia-smi -L > $R/gpu.txt 2>&1; $D/liftA devices >> $R/gpu.txt 2>&1
timeout 40 python3 $D/torch_anchor.py > $R/torch.txt 2>&1
for B in ${BUILDS:-liftA liftB lift8}; do
  timeout 40 $D/$B bench $D/scan_sum.lisp --size N=268435456 --check-size N=4000037 --repeats 20 --json > $R/$B-sum.json 2> $R/$B-sum.err
  timeout 40 $D/$B bench $D/scan_rows.lisp --size N=32768 --size M=8192 --check-size N=7 --check-size M=9000 --repeats 20 --json > $R/$B-rows.json 2> $R/$B-rows.err
  timeout 40 $D/$B bench $D/scan_int.lisp --size N=268435456 --check-size N=3000017 --repeats 20 --json > $R/$B-int.json 2> $R/$B-int.err
done
# the unaligned rows (vload4) and maps fused before and after an int scan, checked on the GPU
timeout 30 $D/liftA bench $D/scan_rows.lisp --size N=4096 --size M=8190 --check-size N=5 --check-size M=9001 --repeats 5 --json > $R/rows-odd.json 2> $R/rows-odd.err
timeout 30 $D/liftA bench $D/scan_map.lisp --size N=16777216 --check-size N=1000003 --repeats 5 --json > $R/map.json 2> $R/map.err
$D/liftA compile $D/scan_sum.lisp --emit cl > $R/sum.cl 2>&1
tar czf $OUT/scan-fast.tgz -C /tmp res
for f in $R/*.err $R/torch.txt; do echo "== $f"; tail -4 $f; done
