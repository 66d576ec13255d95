#!/bin/bash
# The committed scan kernels (whole array of 2^28 floats and ints, rows 32768 × 8192), each checked
# against the interpreter at sizes the tiles do not divide, beside a copy and torch.cumsum.
set -u
D=.devcarry/final2; mkdir -p $1
timeout 40 python3 $D/torch_anchor.py > $1/torch.txt 2>&1
timeout 40 $D/lift bench $D/scan_sum.lisp --size N=268435456 --check-size N=4000037 --repeats 20 --json > $1/sum.json 2> $1/sum.err
timeout 40 $D/lift bench $D/scan_rows.lisp --size N=32768 --size M=8192 --check-size N=7 --check-size M=9000 --repeats 20 --json > $1/rows.json 2> $1/rows.err
timeout 40 $D/lift bench $D/scan_int.lisp --size N=268435456 --check-size N=3000017 --repeats 20 --json > $1/int.json 2> $1/int.err
