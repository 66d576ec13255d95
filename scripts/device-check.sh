#!/usr/bin/env bash
# Runs every example on a chosen OpenCL device and compares with the interpreter, then times the
# benchmark programs next to a device copy of their input bytes.
# Usage: scripts/device-check.sh [lift-binary] [device]
set -u
LIFT=${1:-target/release/lift}
DEV=${2:-}
devarg=()
[ -n "$DEV" ] && devarg=(--device "$DEV")
"$LIFT" devices
fail=0
for f in examples/*.lisp; do
  n=${f%.lisp}
  a=$("$LIFT" run "$f" --data "$n.json" --backend interp 2>&1)
  b=$("$LIFT" run "$f" --data "$n.json" "${devarg[@]}" 2>&1)
  if [ "$a" == "$b" ]; then
    echo "same   $f"
  elif python3 - "$a" "$b" <<'PY'
import json, sys
def close(x, y):
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(close(p, q) for p, q in zip(x, y))
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return x == y or abs(x - y) <= 1e-4 * max(abs(x), abs(y), 1e-6)
    return x == y
try:
    sys.exit(0 if close(json.loads(sys.argv[1]), json.loads(sys.argv[2])) else 1)
except Exception:
    sys.exit(1)
PY
  then
    echo "close  $f"
  else
    echo "DIFF   $f"; echo "  interp: ${a:0:200}"; echo "  device: ${b:0:200}"; fail=1
  fi
done
for spec in "examples/thesis_6_1.lisp N=10000" "examples/thesis_6_1.lisp N=100000000" "examples/thesis_2_1.lisp N=100000000" "bench/scale_vec.lisp N=100000000"; do
  set -- $spec
  echo "== bench $1 $2"
  "$LIFT" bench "$1" --size "$2" "${devarg[@]}" --repeats 10
done
exit $fail
