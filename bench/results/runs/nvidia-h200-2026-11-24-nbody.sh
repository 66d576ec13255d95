#!/bin/bash
# one device command: n-body and mri-q variants, this branch's lift and main's (lift-before)
D=.devcarry/nbody-speed
B="--device 1:0 --repeats 5"
NB="--size N=131072"; MQ="--size X=262144 --size K=2048"
t() { echo "## $*"; timeout 40 "$@" 2>&1 | grep -E "KERNEL|total|check|error|variant" ; }
$D/lift devices 2>&1 | head -5
for f in nb_b1_128_t64 nb_b1_128_t256 nb_b1_64_t256; do
  t $D/lift-before bench $D/v/$f.lisp --as-written $B $NB
  t $D/lift bench $D/v/$f.lisp --as-written $B $NB
done
for f in nb_b2_128_t64 nb_b2_128_t256 nb_b2_64_t256 nb_b4_128_t64 nb_b4_64_t256; do
  t $D/lift bench $D/v/$f.lisp --as-written $B $NB
done
for f in mq_b1_64_t64 mq_b1_128_t256; do
  t $D/lift-before bench $D/v/$f.lisp --as-written $B $MQ
  t $D/lift bench $D/v/$f.lisp --as-written $B $MQ
done
for f in mq_b2_128_t64 mq_b2_64_t256 mq_b4_64_t256; do
  t $D/lift bench $D/v/$f.lisp --as-written $B $MQ
done
# the cost model's first variant, checked against the interpreter at the suite's medium size
t $D/lift-before bench $D/nbody.lisp $B $NB --check-size N=1024
t $D/lift bench $D/nbody.lisp $B $NB --check-size N=1024
t $D/lift-before bench $D/mriq.lisp $B $MQ --check-size X=4096 --check-size K=256
t $D/lift bench $D/mriq.lisp $B $MQ --check-size X=4096 --check-size K=256
