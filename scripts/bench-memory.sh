#!/usr/bin/env bash
# Peak resident memory of `lift bench` over 8·10^6 floats without and with `--check`: without
# it the inputs are made as buffer bytes and the result is not decoded (as `lift tune` does), so
# its peak is well under that of the checked bench (672 against 877 MiB before the lean inputs,
# 382 against 877 after). A resource measurement, so a benchmark rather than a test: it fails
# (exit 1) when the lean peak is not under 0.6 of the checked one.
# Usage: scripts/bench-memory.sh [lift-binary] [device]
set -eu
LIFT=${1:-target/release/lift}
DEV=${2:-}
devarg=()
[ -n "$DEV" ] && devarg=(--device "$DEV")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
prog="$dir/double.lisp"
echo '(lift (N) ((array-type float N)) (lambda (xs) (toGlobal (mapGlb (lambda (x) (* x 2.0f)) xs))))' > "$prog"
peak() {
  /usr/bin/time -f %M "$LIFT" bench "$prog" --size N=8000000 --repeats 1 "${devarg[@]}" "$@" 2>"$dir/time" >/dev/null
  tail -n 1 "$dir/time"
}
lean=$(peak)
checked=$(peak --check)
echo "lift bench, 8e6 floats: peak ${lean} KiB without --check, ${checked} KiB with it"
awk -v l="$lean" -v c="$checked" 'BEGIN { exit !(l < 0.6 * c) }'
