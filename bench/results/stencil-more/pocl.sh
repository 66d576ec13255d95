#!/bin/bash
# On PoCL (this machine's CPU): each stencil of bench/stencil at its medium size, its default
# lowering (`lift bench --as-written`) and its tuned choice (`lift tune --top 3`, then `lift bench`),
# each beside the copy of its input bytes that `lift bench` times in the same call.
set -u
L=${L:-target/release/lift}; O=${O:-/tmp/stencil-pocl}; mkdir -p $O
export LIFT_CACHE_DIR=$(mktemp -d)
while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*|key|convolution_separable) continue ;; esac
  s=""; for x in $medium; do s="$s --size $x"; done
  timeout 120 $L bench $file $s --as-written --repeats 5 --json > $O/default-$key.json 2> $O/default-$key.err || echo "default $key failed"
  timeout 300 $L tune $file $s --top 3 --repeats 3 --check-steps 0 --out $O/tune-$key.csv > $O/tune-$key.log 2>&1 || echo "tune $key failed"
  timeout 120 $L bench $file $s --repeats 5 --json > $O/tuned-$key.json 2> $O/tuned-$key.err || echo "tuned $key failed"
done < bench/stencil/suite.tsv
