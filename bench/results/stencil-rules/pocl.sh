#!/bin/bash
# before: /work/main's binary (no stencil rules); after: this branch's
cd /work/wt/stencil-rules
export LIFT_CACHE_DIR=$(mktemp -d)
for row in "jacobi2d_5pt H=1024 W=1024" "jacobi2d_9pt H=1024 W=1024" "gaussian H=1024 W=1024" "stencil2d_shoc H=1026 W=1026" "jacobi3d_7pt X=128 Y=128 Z=128" "jacobi3d_27pt X=128 Y=128 Z=128"; do
  set -- $row; f=$1; shift; s=""; for x in "$@"; do s="$s --size $x"; done
  for b in /work/main/target/release/lift /tmp/st/lift-new; do
    echo "== $f $b"; timeout 300 $b bench bench/stencil/$f.lisp $s --repeats 5 --json 2>&1 | tail -1
  done
done
