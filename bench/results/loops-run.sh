#!/bin/bash
# Loops inside a work-item on the device: Mandelbrot 4096^2 (hand-written mapGlb, high-level by
# the cost model, high-level tuned) and the MD5 search (2^24 keys), with a CUDA MD5 anchor.
set -u
D=.devcarry/work-item-loops
L=$D/lift
mkdir -p /etc/OpenCL/vendors; LIB=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$LIB" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
nvidia-smi -L; $L devices
export LIFT_CACHE_DIR=$(mktemp -d)
S="--size W=4096 --size H=4096"
C="--check-size W=64 --check-size H=64"
step() { echo "== $1 ($(date +%s))"; }
step "mandelbrot by hand (mapGlb1 x mapGlb)"
timeout 60 $L bench $D/mandelbrot_glb.lisp $S $C --repeats 10 --json > $OUT/mandel_glb.json 2> $OUT/mandel_glb.err; cat $OUT/mandel_glb.err | tail -3
step "mandelbrot high-level, the cost model's variant"
timeout 60 $L bench $D/mandelbrot.lisp $S $C --repeats 10 --json > $OUT/mandel_hl_model.json 2> $OUT/mandel_hl_model.err; tail -3 $OUT/mandel_hl_model.err
step "tune 10s"
timeout 45 $L tune $D/mandelbrot.lisp $S --budget 10s --repeats 3 --check-steps 0 --out $OUT/tune.csv > $OUT/tune.log 2>&1; tail -25 $OUT/tune.log
step "mandelbrot high-level, tuned"
timeout 60 $L bench $D/mandelbrot.lisp $S $C --repeats 10 --json > $OUT/mandel_hl_tuned.json 2> $OUT/mandel_hl_tuned.err; tail -3 $OUT/mandel_hl_tuned.err
step "md5 bench (2^24 keys)"
timeout 60 $L bench $D/md5_search.lisp --size N=16777216 --check-size N=256 --repeats 10 --json > $OUT/md5.json 2> $OUT/md5.err; tail -3 $OUT/md5.err
step "md5 run with MD5's tables, checked against hashlib"
timeout 60 $L run $D/md5_search_ex.lisp --data $D/md5_search.json --size N=16777216 -o $OUT/md5_found.json --time 2> $OUT/md5_run.err; tail -5 $OUT/md5_run.err
python3 -c "import json; a=json.load(open('$OUT/md5_found.json')); b=json.load(open('$D/md5_expect_2p24.json')); print('md5 keys found', len(a), 'expected', len(b), 'equal', a==b)"
step "CUDA anchor"
if command -v nvcc >/dev/null; then nvcc -O3 -o /tmp/md5a $D/md5_anchor.cu && /tmp/md5a 16777216 | tee $OUT/md5_anchor.json; else echo "no nvcc"; ls /usr/local/cuda*/bin 2>/dev/null | head; fi
step "end"
cat $OUT/*.json | head -c 6000
