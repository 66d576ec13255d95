#!/bin/bash
# On PoCL (this machine's CPU, shared): each stencil of bench/stencil at a size PoCL runs in
# about a millisecond, its default lowering (`lift bench --as-written`) and its tuned choice
# (`lift tune --top 3`, then `lift bench`), each beside the copy of its input bytes that
# `lift bench` times in the same call.
set -u
L=${L:-target/release/lift}; O=${O:-/tmp/stencil-pocl}; mkdir -p $O
export LIFT_CACHE_DIR=$(mktemp -d)
while read -r key sizes; do
  f=bench/stencil/$key.lisp; s=""; for x in $sizes; do s="$s --size $x"; done
  timeout 300 $L bench $f $s --as-written --repeats 10 --json > $O/default-$key.json 2> $O/default-$key.err || echo "default $key failed"
  timeout 600 $L tune $f $s --top 3 --repeats 5 --check-steps 0 --out $O/tune-$key.csv > $O/tune-$key.log 2>&1 || echo "tune $key failed"
  timeout 300 $L bench $f $s --repeats 10 --json > $O/tuned-$key.json 2> $O/tuned-$key.err || echo "tuned $key failed"
done <<'LIST'
gaussian H=1024 W=1024
grad2d H=1024 W=1024
jacobi2d_5pt H=1024 W=1024
jacobi2d_9pt H=1024 W=1024
stencil2d_shoc H=1026 W=1026
hotspot H=1024 W=1024
srad1 H=502 W=458
srad2 H=502 W=458
heat3d X=64 Y=64 Z=64
poisson3d X=64 Y=64 Z=64
jacobi3d_7pt X=64 Y=64 Z=64
jacobi3d_13pt X=64 Y=64 Z=64
jacobi3d_19pt X=64 Y=64 Z=64
jacobi3d_27pt X=64 Y=64 Z=64
hotspot3d X=256 Y=256 Z=8
LIST
