#!/usr/bin/env bash
# Host overhead per call of a program used from an application: the same kernels launched by a
# minimal hand-written OpenCL host program (scripts/overhead/handwritten.c), by the library's
# entry point from C (`lift build`, scripts/overhead/via_library.c) and from Python on device
# arrays (scripts/overhead/via_python.py), for a 1,024-element saxpy (examples/saxpy.lisp) and a
# 64×64 matrix product (examples/hl_mm.lisp). Prints a Markdown table.
#
#   scripts/library-overhead.sh build DIR [LIFT]        libraries, specs and C programs into DIR
#                                                        (needs `cc`; LIFT: target/release/lift)
#   scripts/library-overhead.sh run DIR DEVICE [CALLS] [PYTHON]   (DEVICE: `P:D` or part of a name)
#                                                        the three, CALLS calls each (10000); the
#                                                        Python column needs PYTHON with `lift`
#                                                        (and `cc`); it runs on the first GPU, so
#                                                        DEVICE should be that one
#
# Both steps can run on different machines with the same OpenCL loader (the GPU machine has no
# C compiler need then). The libraries are built without `--device` (the cost model's variant
# for the sizes, common work-group limits), so both host programs launch exactly the same kernels
# everywhere; spec.py refuses a spec whose kernel text is not the library's.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
ov="$repo/scripts/overhead"

build() {
  local dir="$1" lift="${2:-$repo/target/release/lift}"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  "$lift" build "$repo/examples/saxpy.lisp" -o "$dir" --size N=1024 >/dev/null
  "$lift" build "$repo/examples/hl_mm.lisp" -o "$dir" --size M=64 --size K=64 --size N=64 >/dev/null
  for p in "saxpy N=1024" "hl_mm M=64 K=64 N=64"; do
    set -- $p
    local name="$1"; shift
    local sizes=(); for s in "$@"; do sizes+=(--size "$s"); done
    "$lift" compile "$repo/examples/$name.lisp" --emit plan "${sizes[@]}" > "$dir/$name.plan"
    "$lift" compile "$repo/examples/$name.lisp" --emit cl "${sizes[@]}" > "$dir/$name.cl"
    python3 "$ov/spec.py" "$dir/$name.plan" "$dir/$name.cl" "$dir/$name.c" "$dir/$name.h" "$@" > "$dir/$name.spec"
    # The spec names the kernel file by its path here; on another machine it is beside the spec.
    sed -i "s|^source .*|source $name.cl|" "$dir/$name.spec"
  done
  cc -std=c99 -O2 -Wall -o "$dir/handwritten" "$ov/handwritten.c" -l:libOpenCL.so.1
  cc -std=c99 -O2 -Wall -o "$dir/via_library" "$ov/via_library.c" -I "$dir" -L "$dir" -lsaxpy -lhl_mm \
    -Wl,-rpath,'$ORIGIN' -l:libOpenCL.so.1
  echo "built in $dir"
}

run() {
  local dir="$1" device="$2" calls="${3:-10000}" python="${4:-}"
  cd "$dir"
  local hs hm
  ./handwritten saxpy.spec "$device" 1 | grep '^device:'
  hs=$(./handwritten saxpy.spec "$device" "$calls" | sed -n 's/^per call us: //p')
  hm=$(./handwritten hl_mm.spec "$device" "$calls" | sed -n 's/^per call us: //p')
  local lib; lib=$(./via_library "$device" "$calls")
  local ls lm; ls=$(sed -n 's/^saxpy per call us: //p' <<<"$lib"); lm=$(sed -n 's/^mm per call us: //p' <<<"$lib")
  local ps="—" pm="—" py=""
  if [ -n "$python" ] && py=$("$python" "$ov/via_python.py" "$repo" "$calls" 2>&1); then
    ps=$(sed -n 's/^saxpy per call us: //p' <<<"$py"); pm=$(sed -n 's/^mm per call us: //p' <<<"$py")
  elif [ -n "$python" ]; then
    echo "python: $py" >&2
  fi
  echo "| program | hand-written host (µs/call) | library from C (µs/call) | C / hand-written | Python on device arrays (µs/call) | Python − C (µs) |"
  echo "|---|---|---|---|---|---|"
  for row in "saxpy 1,024|$hs|$ls|$ps" "mm 64×64|$hm|$lm|$pm"; do
    IFS='|' read -r name h l p <<<"$row"
    local ratio diff
    ratio=$(awk -v h="$h" -v l="$l" 'BEGIN { printf "%.2f×", l / h }')
    diff=$(awk -v l="$l" -v p="$p" 'BEGIN { if (p == "—") print "—"; else printf "%+.1f", p - l }')
    echo "| $name | $h | $l | $ratio | $p | $diff |"
  done
  echo
  echo "calls per loop: $calls (median of 5 loops after a warm-up); device $device"
  grep 'used:' <<<"$lib" | sed 's/^/C /'
  [ -n "$py" ] && grep 'used:' <<<"$py" | sed 's/^/Python /' || true
}

case "${1:-}" in
  build) shift; build "$@" ;;
  run) shift; run "$@" ;;
  *) sed -n '2,19p' "$0"; exit 2 ;;
esac
