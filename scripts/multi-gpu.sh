#!/usr/bin/env bash
# Issue 17: the same program on two GPUs and on one, in one `lift bench --devices` command each
# (the one-device run is measured in the same invocation), plus the PyTorch anchor for mm (rows
# of A split over the GPUs, both timed together, against one GPU); writes a markdown table with
# the raw JSON under it.
#
#   mm 8192³ (bench/cgo17/mm.lisp), n-body 131,072 bodies × 10 steps of a host loop
#   (examples/host_nbody.lisp with 10 steps: the positions are exchanged every step), mri-q
#   X=262,144 K=2,048 (bench/cgo17/mriq.lisp); 3 timed runs each after a warm-up run.
#
# Usage: scripts/multi-gpu.sh [--small] [--devices LIST] [--repeats R]
#   --small: small sizes (a check of the script itself, e.g. on PoCL: --devices 0:0,0:0)
#   --devices: as `lift bench --devices` takes it (default `gpus`)
# Environment: LIFT (default the newer of target/release/lift and target/debug/lift), PYTHON (python3),
#   OUT (the folder of the table; default bench/results), ANCHORS=0 to skip PyTorch.
# Nothing big is written: the inputs are made in memory by `lift bench`, and the n-body
# program with 10 steps is a small file in a temporary folder.
set -uo pipefail
cd "$(dirname "$0")/.."

SMALL=0
DEVICES=gpus
REPEATS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --small) SMALL=1; shift ;;
    --devices) DEVICES="$2"; shift 2 ;;
    --repeats) REPEATS="$2"; shift 2 ;;
    *) echo "usage: $0 [--small] [--devices LIST] [--repeats R]" >&2; exit 2 ;;
  esac
done
if [ -z "${LIFT:-}" ]; then
  # The newer build: a stale release binary may predate `bench --devices`.
  LIFT=target/release/lift
  { [ -x "$LIFT" ] && ! [ target/debug/lift -nt "$LIFT" ]; } || LIFT=target/debug/lift
fi
PYTHON=${PYTHON:-python3}
DEST=${OUT:-bench/results}
mkdir -p "$DEST"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# The host loop of the issue: 10 steps (the example takes 1,000).
sed 's/(iterate #1000/(iterate #10/' examples/host_nbody.lisp > "$TMP/host_nbody_10.lisp"
grep -q '(iterate #10$' "$TMP/host_nbody_10.lisp" || { echo "examples/host_nbody.lisp has no (iterate #1000" >&2; exit 1; }

# key, file, sizes, check sizes (the suite's medium sizes: checked against the interpreter first)
if [ "$SMALL" = 1 ]; then
  RUNS="mm|bench/cgo17/mm.lisp|M=128 K=64 N=64|M=16 K=8 N=8
nbody|$TMP/host_nbody_10.lisp|N=256|N=32
mriq|bench/cgo17/mriq.lisp|X=1024 K=64|X=64 K=16"
  MM_N=256
else
  RUNS="mm|bench/cgo17/mm.lisp|M=8192 K=8192 N=8192|M=256 K=256 N=256
nbody|$TMP/host_nbody_10.lisp|N=131072|N=64
mriq|bench/cgo17/mriq.lisp|X=262144 K=2048|X=4096 K=256"
  MM_N=8192
fi

sizes() { for s in $2; do printf -- '--%s %s ' "$1" "$s"; done; }

while IFS='|' read -r key file large medium; do
  echo "== $key: $large on $DEVICES"
  start=$(date +%s)
  # shellcheck disable=SC2046
  if timeout 300 "$LIFT" bench "$file" $(sizes size "$large") $(sizes check-size "$medium") \
      --devices "$DEVICES" --repeats "$REPEATS" --json > "$TMP/$key.json" 2> "$TMP/$key.err"; then
    rm -f "$TMP/$key.err"
  else
    [ -s "$TMP/$key.err" ] || echo "timed out or failed without a message" > "$TMP/$key.err"
    rm -f "$TMP/$key.json"
    echo "   failed: $(head -c 400 "$TMP/$key.err")"
  fi
  echo "   $(( $(date +%s) - start )) s"
done <<< "$RUNS"

if [ "${ANCHORS:-1}" != 0 ]; then
  echo "== PyTorch mm ${MM_N}³: rows of A over the GPUs, against one GPU"
  PYTHONUNBUFFERED=1 "$PYTHON" - "$MM_N" "$REPEATS" > "$TMP/anchor.json" 2> "$TMP/anchor.err" <<'EOF' \
    || echo "   anchor failed: $(tail -c 400 "$TMP/anchor.err")"
import json, sys, time
import torch

n, repeats = int(sys.argv[1]), int(sys.argv[2])
gpus = torch.cuda.device_count()
if gpus < 2:
    raise SystemExit(f"{gpus} CUDA device(s): the split needs two")
torch.backends.cuda.matmul.allow_tf32 = False  # plain float32, as the OpenCL kernels compute
devs = [torch.device(f"cuda:{i}") for i in range(gpus)]
g = torch.Generator().manual_seed(1)
a = torch.rand(n, n, generator=g) * 2 - 1
b = torch.rand(n, n, generator=g) * 2 - 1


def timed(parts):
    """parts: (device, A rows, B) per GPU; every GPU's mm is started, then all are waited for.
    Returns the host wall time and each GPU's event time (ms), medians over the repeats."""
    walls, per = [], [[] for _ in parts]
    for r in range(repeats + 1):
        for d, _, _ in parts:
            torch.cuda.synchronize(d)
        evs = []
        t0 = time.perf_counter()
        for d, x, y in parts:
            with torch.cuda.device(d):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                torch.mm(x, y)
                e.record()
                evs.append((s, e))
        for d, _, _ in parts:
            torch.cuda.synchronize(d)
        wall = (time.perf_counter() - t0) * 1e3
        if r == 0:
            continue  # warm-up (cuBLAS handles, kernel choice)
        walls.append(wall)
        for i, (s, e) in enumerate(evs):
            per[i].append(s.elapsed_time(e))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return med(walls), [med(p) for p in per]


one = [(devs[0], a.to(devs[0]), b.to(devs[0]))]
wall1, k1 = timed(one)
del one
rows = [r.contiguous() for r in torch.chunk(a, 2)]
two = [(devs[i], rows[i].to(devs[i]), b.to(devs[i])) for i in range(2)]
wall2, k2 = timed(two)
print(json.dumps({
    "n": n, "repeats": repeats, "device": torch.cuda.get_device_name(0),
    "one_gpu": {"wall_ms": wall1, "kernel_ms": k1},
    "two_gpus": {"wall_ms": wall2, "kernel_ms": k2},
}))
EOF
fi

DATE=$(date -u +%Y-%m-%d)
TABLE="$DEST/multi-gpu-$DATE$([ "$SMALL" = 1 ] && echo -small).md"
"$PYTHON" - "$TMP" "$DEVICES" "$REPEATS" > "$TABLE" <<'EOF'
import json, os, sys

tmp, devices, repeats = sys.argv[1], sys.argv[2], sys.argv[3]
names = {"mm": "mm", "nbody": "n-body (host loop)", "mriq": "mri-q"}
print(f"# `lift bench --devices {devices}`: the split against the first device alone\n")
print(f"Made by `scripts/multi-gpu.sh` ({repeats} timed runs after a warm-up, the run of median wall")
print("time). Kernel times are profiling events (summed over kernels and steps); upload (inputs,")
print("bytes made beforehand), download (results read back, every step), exchange (a host loop's")
print("state sent to each device after each step), decode (bytes to values) and gather (parts put")
print("together) are host times around blocking calls. Wall: from the first upload to the last part's bytes")
print("on the host (a host loop's earlier steps include their decode and gather); total: to the gathered")
print("values. Per-device columns list the devices in order.\n")
print("| program | sizes | run | shares | upload ms | kernels ms | download ms | exchange ms | decode ms | gather ms | wall ms | total ms | speed-up wall / kernels / total |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
raw = []
fmt = lambda xs: " / ".join(f"{x:.2f}" for x in xs)
for key in ["mm", "nbody", "mriq"]:
    path = os.path.join(tmp, key + ".json")
    if not os.path.exists(path):
        err = os.path.join(tmp, key + ".err")
        why = open(err).read().strip().replace("\n", " ")[:300] if os.path.exists(err) else "no output"
        print(f"| {names[key]} | | failed: {why} | | | | | | | | | | |")
        continue
    r = json.load(open(path))
    raw.append(r)
    sizes = " ".join(f"{k}={v}" for k, v in r["sizes"].items())
    if r["steps"] > 1:
        sizes += f", {r['steps']} steps"
    for what, m in [(f"{len(r['split']['devices'])} devices", r["split"]), ("first alone", r["single"])]:
        ds = m["devices"]
        col = lambda f: fmt([d[f] for d in ds])
        shares = " / ".join(f"{d['share'][0]}..{d['share'][1]}" for d in ds)
        speed = (f"{r['speedup_wall']:.2f}× / {r['speedup_kernels']:.2f}× / {r['speedup_total']:.2f}×"
                 if m is r["split"] else "")
        print(f"| {names[key]} | {sizes} | {what} | {shares} | {col('upload_ms')} | {col('kernel_ms')} | "
              f"{col('download_ms')} | {col('exchange_ms')} | {col('decode_ms')} | {m['gather_ms']:.2f} | "
              f"{m['wall_ms']:.2f} | {m['total_ms']:.2f} | {speed} |")
    print(f"| | | check | {r['check']} | | | | | | | | | |")
anchor = os.path.join(tmp, "anchor.json")
if os.path.exists(anchor) and os.path.getsize(anchor) > 0:
    a = json.load(open(anchor))
    n = a["n"]
    o, t = a["one_gpu"], a["two_gpus"]
    print(f"\nPyTorch anchor, mm {n}³ float32 (no TF32) on {a['device']}: rows of A split over two GPUs")
    print("(B on both), every GPU's mm started then all waited for; kernels from CUDA events.\n")
    print("| run | kernels ms | wall ms | speed-up wall / kernels |")
    print("|---|---|---|---|")
    print(f"| one GPU | {fmt(o['kernel_ms'])} | {o['wall_ms']:.2f} | |")
    print(f"| two GPUs | {fmt(t['kernel_ms'])} | {t['wall_ms']:.2f} | "
          f"{o['wall_ms'] / t['wall_ms']:.2f}× / {max(o['kernel_ms']) / max(t['kernel_ms']):.2f}× |")
    raw.append(a)
else:
    print("\nPyTorch anchor: not run (ANCHORS=0, no torch, or fewer than two CUDA devices).")
print("\n## Raw JSON\n")
print("```")
for r in raw:
    print(json.dumps(r))
print("```")
EOF
echo "table: $TABLE"
cat "$TABLE"
