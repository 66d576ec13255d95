#!/bin/bash
# Second batch on the H200: cuBLAS TF32 anchors (torch), this binary's tensor-core products
# (cp.async staging) checked and timed, mm with the previous binary (registers, swizzled stages)
# in the same command, mm built with a register cap, and hand-edited variants of mm's kernel;
# all in $OUT/tensor-cores-run-e.tgz.
set -u
D=.devcarry/tensor-cores; L=$D/lift; SWZ=$D/lift-swizzle
mkdir -p /etc/OpenCL/vendors; LL=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$LL" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
R=/tmp/res; mkdir -p $R/dump $R/var
pack() { tar czf $OUT/tensor-cores-run-e.tgz -C /tmp res; }
trap pack EXIT
trap 'echo "stopped by the watchdog" >> $R/times.txt; exit 1' TERM
( sleep ${WATCHDOG:-188}; kill -TERM $$ ) 2>/dev/null &
{ nvidia-smi -L; $L devices; } > $R/devices.txt 2>&1
DEV=$($L devices | awk '/NVIDIA|H200/{print $1; exit}'); DEV=${DEV:-1:0}
export LIFT_CACHE_DIR=$(mktemp -d)
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
S4="--size M=4096 --size K=4096 --size N=4096"; C4="--check-size M=256 --check-size K=256 --check-size N=256"
SB="--size B=16 --size M=1024 --size K=1024 --size N=1024"; CB="--check-size B=2 --check-size M=256 --check-size K=64 --check-size N=256"
V="LIFT_EXTRA_BUILD_OPTIONS=-cl-nv-verbose"
timeout 40 python3 $D/cublas.py 4096 16 1024 > $R/cublas.txt 2>&1
echo "cublas done at $(el) s" >> $R/times.txt
for p in mm mm_nt mm_tn; do
  env $V LIFT_DUMP_BINARY=$R/dump/$p timeout 30 $L bench $D/$p.lisp $S4 --precision tf32 $C4 --device $DEV --json > $R/$p.json 2> $R/$p.err
  echo "$p done at $(el) s" >> $R/times.txt
done
env $V LIFT_DUMP_BINARY=$R/dump/bmm timeout 30 $L bench $D/bmm.lisp $SB --precision tf32 $CB --device $DEV --json > $R/bmm.json 2> $R/bmm.err
timeout 25 $SWZ bench $D/mm.lisp $S4 --precision tf32 --device $DEV --json > $R/mm_swizzle.json 2> $R/mm_swizzle.err
for p in mm mm_tn; do
  [ $(el) -gt 150 ] && break
  LIFT_EXTRA_BUILD_OPTIONS="-cl-nv-verbose -cl-nv-maxrregcount=168" LIFT_DUMP_BINARY=$R/dump/${p}_cap timeout 25 $L bench $D/$p.lisp $S4 --precision tf32 --device $DEV --json > $R/${p}_cap168.json 2> $R/${p}_cap168.err
done
echo "benches done at $(el) s" >> $R/times.txt
K=$(grep -l "mma.sync" $R/dump/mm/*.cl 2>/dev/null | xargs grep -l "< 255)" 2>/dev/null | head -1)
if [ -n "$K" ]; then
  OPTS=$(awk -F'\t' -v k=$(basename $K .cl) '$1==k{print $4}' $R/dump/mm/builds.tsv)
  echo "kernel $K options $OPTS" >> $R/var/times.txt
  for v in same noload same; do
    python3 $D/variant.py $K $v $R/var/$v.cl 2>> $R/var/times.txt
    timeout 25 python3 $D/clrun.py $R/var/$v.cl --global 1024,128 --local 32,4 --arg in:16777216 --arg in:16777216 --arg out:16777216 --reps 10 --opts "$OPTS" --label $v >> $R/var/times.txt 2>&1
  done
  for cap in 168; do
    [ $(el) -gt 165 ] && break
    for v in same noload; do
      timeout 25 python3 $D/clrun.py $R/var/$v.cl --global 1024,128 --local 32,4 --arg in:16777216 --arg in:16777216 --arg out:16777216 --reps 10 --opts "$OPTS -cl-nv-maxrregcount=$cap" --label "$v-cap$cap" >> $R/var/times.txt 2>&1
    done
  done
fi
echo "all done at $(el) s" >> $R/times.txt
