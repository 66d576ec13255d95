#!/bin/bash
# mm_nt and mm at tf32 after the K step fitted to the operands' layouts, beside cuBLAS TF32.
set -u
D=.devcarry/final2; L=$D/lift
mkdir -p /etc/OpenCL/vendors; LL=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$LL" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
DEV=$($L devices | awk '/NVIDIA|H200/{print $1; exit}'); export LIFT_CACHE_DIR=$(mktemp -d)
S4="--size M=4096 --size K=4096 --size N=4096"; C4="--check-size M=256 --check-size K=256 --check-size N=256"
timeout 30 python3 $D/cublas.py 4096 16 1024 2>&1 | grep "TF32 mm"
for p in mm_nt mm; do echo "== $p"; timeout 30 $L bench $D/$p.lisp $S4 --precision tf32 $C4 --device $DEV 2>&1 | grep -v "^  KERNEL\|^code gen"; done
