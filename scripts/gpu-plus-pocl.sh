#!/usr/bin/env bash
# Issue 14's target on the single-GPU machine: mm 4096³ and mri-q on the GPU + PoCL
# (`lift run --devices GPU,POCL`) are not slower than on the GPU alone (`--device GPU`): the
# proportional split gives PoCL a sliver or nothing. Prints a markdown table (and writes it to
# $OUT/gpu-plus-pocl.md when OUT is set) in about a minute.
#
# Each program: one untimed run of each kind first (it fills the tuning cache's calibration
# and the OpenCL program caches, as a second run of the day would find them), then ROUNDS
# rounds alternating GPU alone and GPU + PoCL; the time is the host wall time of the whole
# command (reading the .npy inputs, compiling, running, writing the .npy result); the ratio is
# of the medians. Both kinds run with `--time`, so that the GPU + PoCL runs say each device's
# share and why (the last run's lines are shown under the table).
#
# Usage: scripts/gpu-plus-pocl.sh [--small] [--rounds R]
#   --small: small sizes (a check of the script itself, e.g. on a machine with PoCL only, where
#            the "GPU" is PoCL too)
# Environment: LIFT (default the newer of target/release/lift and target/debug/lift), PYTHON
#   (python3), GPU and POCL (device ids; default the first GPU and the first CPU that `lift
#   devices` lists), OUT (a folder for the table), LIFT_CACHE_DIR as lift takes it.
set -uo pipefail
cd "$(dirname "$0")/.."

SMALL=0
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --small) SMALL=1; shift ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "usage: $0 [--small] [--rounds R]" >&2; exit 2 ;;
  esac
done
if [ -z "${LIFT:-}" ]; then
  LIFT=target/release/lift
  { [ -x "$LIFT" ] && ! [ target/debug/lift -nt "$LIFT" ]; } || LIFT=target/debug/lift
fi
PYTHON=${PYTHON:-python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Device ids from `lift devices` (ID TYPE NAME ...): the first GPU, the first CPU.
"$LIFT" devices > "$TMP/devices.txt" 2>&1 || { cat "$TMP/devices.txt" >&2; exit 1; }
GPU=${GPU:-$(awk '$2 == "GPU" { print $1; exit }' "$TMP/devices.txt")}
POCL=${POCL:-$(awk '$2 == "CPU" { print $1; exit }' "$TMP/devices.txt")}
if [ "$SMALL" = 1 ] && [ -z "$GPU" ]; then GPU=$POCL; fi
if [ -z "$GPU" ] || [ -z "$POCL" ]; then
  echo "need a GPU and a CPU (PoCL) device; lift devices lists:" >&2
  cat "$TMP/devices.txt" >&2
  exit 1
fi

if [ "$SMALL" = 1 ]; then
  MM=(256 256 256); MRIQ=(4096 256)
else
  MM=(4096 4096 4096); MRIQ=(262144 2048)
fi

# Inputs as .npy (float32), from numpy when it is there, else from the array module.
"$PYTHON" - "$TMP" "${MM[@]}" "${MRIQ[@]}" <<'EOF' || { echo "could not write the inputs" >&2; exit 1; }
import struct, sys
out, m, k, n, x, kk = sys.argv[1], *map(int, sys.argv[2:])
def npy(path, shape, seed):
    count = 1
    for d in shape:
        count *= d
    try:
        import numpy as np
        data = np.random.default_rng(seed).uniform(-1, 1, count).astype("<f4").tobytes()
    except ImportError:
        from array import array
        data = array("f", (((i * 2654435761 + seed) % 2001) / 1000.0 - 1.0 for i in range(count))).tobytes()
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
npy(f"{out}/a.npy", (m, k), 1)
npy(f"{out}/b.npy", (k, n), 2)
for i, name in enumerate(["x", "y", "z"]):
    npy(f"{out}/{name}.npy", (x,), 10 + i)
for i, name in enumerate(["kx", "ky", "kz", "phiMag"]):
    npy(f"{out}/{name}.npy", (kk,), 20 + i)
EOF

data() {
  case "$1" in
    mm) echo "--data a=$TMP/a.npy --data b=$TMP/b.npy" ;;
    mriq) for p in x y z kx ky kz phiMag; do printf -- '--data %s=%s/%s.npy ' "$p" "$TMP" "$p"; done ;;
  esac
}

# Seconds of one whole command; its stderr is kept in $TMP/last-$kind.err.
run() { # key file kind
  local key=$1 file=$2 kind=$3 devs t0 t1 ext=npy
  if [ "$kind" = gpu ]; then devs="--device $GPU"; else devs="--devices $GPU,$POCL"; fi
  # (mri-q's result is (real, imag) tuples, which .npy does not hold)
  if [ "$key" = mriq ]; then ext=json; fi
  t0=$(date +%s.%N)
  # shellcheck disable=SC2046
  if ! timeout 100 "$LIFT" run "$file" $(data "$key") $devs --time -o "$TMP/out-$key-$kind.$ext" \
      > /dev/null 2> "$TMP/last-$kind.err"; then
    echo "failed: $LIFT run $file $devs: $(head -c 300 "$TMP/last-$kind.err")" >&2
    echo "nan"
    return
  fi
  t1=$(date +%s.%N)
  awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.3f\n", a - b }'
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

{
  echo "# GPU + PoCL against the GPU alone (issue 14), $(hostname), $(date -u +%Y-%m-%d)"
  echo
  echo "\`scripts/gpu-plus-pocl.sh\` ($LIFT, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')): GPU $GPU,"
  echo "PoCL $POCL; host wall time of each \`lift run\` (inputs from .npy, result written as .npy),"
  echo "after one untimed run of each kind; $ROUNDS rounds alternating."
  echo
  echo "| program | GPU alone (s) | GPU + PoCL (s) | median ratio |"
  echo "|---|---|---|---|"
} > "$TMP/table.md"

SHARES=""
for spec in "mm|bench/cgo17/mm.lisp|mm ${MM[0]}×${MM[1]}×${MM[2]}" "mriq|bench/cgo17/mriq.lisp|mri-q X=${MRIQ[0]} K=${MRIQ[1]}"; do
  IFS='|' read -r key file label <<< "$spec"
  echo "== $label" >&2
  run "$key" "$file" gpu > /dev/null
  run "$key" "$file" both > /dev/null
  gpu=(); both=()
  for _ in $(seq "$ROUNDS"); do
    gpu+=("$(run "$key" "$file" gpu)")
    both+=("$(run "$key" "$file" both)")
  done
  mg=$(median "${gpu[@]}"); mb=$(median "${both[@]}")
  ratio=$(awk -v a="$mb" -v b="$mg" 'BEGIN { if (b > 0) printf "%.2f×", a / b; else print "?" }')
  fmt() { printf '%.3f / ' "$@" | sed 's| / $||'; }
  echo "| $label | $(fmt "${gpu[@]}") | $(fmt "${both[@]}") | $ratio |" >> "$TMP/table.md"
  SHARES+="$(grep -h '^share of device' "$TMP/last-both.err" | sed "s|^|$label: |")"$'\n'
  # Given nothing, PoCL leaves the result as the GPU's alone, byte for byte.
  if ! cmp -s "$TMP"/out-"$key"-gpu.* "$TMP"/out-"$key"-both.*; then
    SHARES+="$label: the GPU + PoCL result differs from the GPU's in its bytes (PoCL computed a share)"$'\n'
  fi
done
{
  echo
  echo "Shares in the last GPU + PoCL run of each program (\`--time\`):"
  echo
  printf '%s' "$SHARES" | sed '/^$/d; s/^/- /'
} >> "$TMP/table.md"
cat "$TMP/table.md"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$TMP/table.md" "$OUT/gpu-plus-pocl.md"
fi
