#!/usr/bin/env bash
# `lift build` time (without tuning: no --device, so no `lift tune` and no tuning cache) of
# every program of the CGO'17 suite (bench/cgo17/suite.tsv), built for its large sizes (the
# kernels for those sizes and the generic ones), twice, with the machine's load average before
# each pass: other work on the machine slows a build, so the two passes and the load say how far
# a figure is from the machine's own. Prints a Markdown table.
#
#   scripts/library-build-time.sh [LIFT]     (LIFT: target/release/lift)
#
# Environment: SUITE (bench/cgo17/suite.tsv), CC (the C compiler `lift build` runs, else cc).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
lift="${1:-$repo/target/release/lift}"
suite="${SUITE:-$repo/bench/cgo17/suite.tsv}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

now() { date +%s.%N; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

declare -A first second
keys=()
for pass in 1 2; do
  echo "pass $pass: load average (1, 5, 15 min) before it: $(load)" >&2
  loads[$pass]="$(load)"
  while IFS=$'\t' read -r key _bench _layout file large _medium; do
    case "$key" in ''|'#'*) continue ;; esac
    args=()
    for s in $large; do args+=(--size "$s"); done
    start=$(now)
    if "$lift" build "$repo/$file" -o "$out/$key" "${args[@]}" >"$out/$key.log" 2>&1; then
      t=$(echo "$(now) - $start" | bc -l)
    else
      # A refusal is reported in the table (an older lift refused some programs).
      t="refused: $(head -1 "$out/$key.log" | sed 's/|/\\|/g')"
    fi
    if [ "$pass" = 1 ]; then
      first[$key]=$t
      keys+=("$key|$file|$large")
    else
      second[$key]=$t
    fi
  done <"$suite"
done
loads[3]="$(load)"

echo "| program | sizes built | pass 1 (s) | pass 2 (s) |"
echo "|---|---|---:|---:|"
worst=0
for k in "${keys[@]}"; do
  IFS='|' read -r key file large <<<"$k"
  a=${first[$key]}
  b=${second[$key]}
  fmt() { case "$1" in refused*) printf '%s' "$1" ;; *) printf '%.2f' "$1" ;; esac; }
  printf '| %s | %s | %s | %s |\n' "$key" "$large" "$(fmt "$a")" "$(fmt "$b")"
  for t in "$a" "$b"; do
    case "$t" in refused*) continue ;; esac
    if [ "$(echo "$t > $worst" | bc -l)" = 1 ]; then worst=$t; fi
  done
done
echo
printf 'slowest build: %.2f s; load average (1, 5, 15 min) before pass 1: %s, before pass 2: %s, after: %s; %s cores\n' \
  "$worst" "${loads[1]}" "${loads[2]}" "${loads[3]}" "$(nproc)"
