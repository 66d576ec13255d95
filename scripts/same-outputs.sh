#!/usr/bin/env bash
# Whether two builds of `lift` behave the same on every example and bench program: `check`,
# `compile` and `explore` of each, and `run` (interpreter and OpenCL) of each example with a
# data file of the same name, written to one file per program and command under OUT/a and OUT/b
# and compared. For refactorings meant to change no behaviour (issue 27).
#
#   scripts/same-outputs.sh OLD-LIFT NEW-LIFT [OUT]     (exit 1 and the differing files if any)
#
# Copy the old binary aside before rebuilding: `cp target/release/lift /tmp/lift-old`.
set -euo pipefail
old=$1
new=$2
out=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
outputs() {
  local bin=$1 dir=$2
  mkdir -p "$dir"
  find examples bench -name '*.lisp' | sort | while read -r f; do
    n=$(echo "$f" | tr '/' '_')
    for cmd in check compile explore; do
      { timeout 120 "$bin" "$cmd" "$f" 2>&1 || echo "exit $?"; } | sed "s#$(basename "$bin")#lift#g" > "$dir/$n.$cmd"
    done
    data=${f%.lisp}.json
    if [ -f "$data" ]; then
      for backend in interp opencl; do
        { timeout 120 "$bin" run "$f" --data "$data" --backend "$backend" 2>&1 || echo "exit $?"; } \
          | sed "s#$(basename "$bin")#lift#g" > "$dir/$n.run-$backend"
      done
    fi
  done
}
outputs "$old" "$out/a"
outputs "$new" "$out/b"
if diff -rq "$out/a" "$out/b"; then
  echo "same: $(ls "$out/a" | wc -l) outputs in $out"
else
  exit 1
fi
