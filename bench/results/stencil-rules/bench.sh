#!/bin/bash
# The stencil suite with the stencil rules' binary (.devcarry/stencil-rules/lift): the cost
# model's choice of each program beside a copy of its input bytes (`lift bench`, one call each),
# then every one of the cost model's first 8 variants of a few programs (`lift tune --top 8`).
set -u
D=.devcarry/stencil-rules
mkdir -p /etc/OpenCL/vendors; L=$(ls /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so* /usr/lib/libnvidia-opencl.so* /usr/local/nvidia/lib64/libnvidia-opencl.so* 2>/dev/null|head -1); echo "$L" > /etc/OpenCL/vendors/nvidia.icd; if ! ldconfig -p|grep -q libOpenCL.so.1; then dpkg -x $D/ocl-icd*.deb /tmp/ocl; export LD_LIBRARY_PATH=/tmp/ocl/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}; fi
nvidia-smi -L; $D/lift devices
export LIFT_CACHE_DIR=$(mktemp -d)
T0=$(date +%s)
mkdir -p /tmp/st
while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*|key|convolution_separable) continue ;; esac
  s=""; for x in $large; do s="$s --size $x"; done
  timeout 40 $D/lift bench $file $s --device 1:0 --json > /tmp/st/$key.json 2> /tmp/st/$key.err || echo "$key failed: $(head -c 200 /tmp/st/$key.err)"
done < bench/stencil/suite.tsv
echo "bench done in $(( $(date +%s) - T0 )) s"
echo "all done in $(( $(date +%s) - T0 )) s"
python3 - <<'PY' | tee $OUT/stencil-table.md
import json,os
print("| stencil | sizes | lift (ms) | copy of the inputs (ms) | lift / copy | variant |")
print("|---|---|---|---|---|---|")
for f in sorted(os.listdir("/tmp/st")):
    if not f.endswith(".json") or os.path.getsize("/tmp/st/"+f)==0: continue
    r=json.loads(open("/tmp/st/"+f).read().strip().splitlines()[-1])
    sz=" ".join(f"{k}={v}" for k,v in r["sizes"].items())
    print(f"| {f[:-5]} | {sz} | {r['total_ms']:.4f} | {r['copy_ms']:.4f} | {r['total_ms']/r['copy_ms']:.2f} | {r['variant'].split(' | ')[0]} |")
PY
tar czf $OUT/st.tgz -C /tmp st
