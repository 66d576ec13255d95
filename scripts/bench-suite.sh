#!/usr/bin/env bash
# The CGO'17 suite on one device, in one command: tune every program at its large size (or reuse
# the tuning cache), check the chosen variant against the interpreter at a medium size, time it
# at the large size, time the PyTorch anchors and input copies on the same GPU in the same run,
# and write the table, the raw JSON and the chart to bench/results/<device>-<date>.{md,svg}.
#
# Usage: scripts/bench-suite.sh [device] [--only key,key] [--tune-top K]
#   device: an id `P:D` or part of a device name as `lift devices` prints it (default: the first GPU).
# Environment: LIFT (default target/release/lift), REPORT (target/release/bench-report),
#   RESULTS (default bench/results), PYTHON (python3), ANCHORS=0 to skip PyTorch (no CUDA).
# The table's "model rank of the tuned best" comes from each program's `lift tune` output
# ($RAW/<key>.tune): where the fastest variant timed stands in the cost model's order.
# Fits one 10-minute device command for the whole suite: tuning runs at most TUNE_TOP variants
# per program without interpreter checks (the medium-size check covers the variant that is used).
# Not `lift tune --budget`: on the H200 a configuration of a suite program at its large size takes
# about 6 s to set up and time (256 MB inputs), so the ~15 s a program can have here tries only
# 2 configurations (convolution then tuned to 7.2 ms instead of 0.39; see
# bench/results/runs/nvidia-h200-2026-11-23-budget-14s.md).
set -uo pipefail
cd "$(dirname "$0")/.."

DEVICE=""
ONLY=""
TUNE_TOP=${TUNE_TOP:-4}
while [ $# -gt 0 ]; do
  case "$1" in
    --only) ONLY="$2"; shift 2 ;;
    --tune-top) TUNE_TOP="$2"; shift 2 ;;
    *) DEVICE="$1"; shift ;;
  esac
done
LIFT=${LIFT:-target/release/lift}
REPORT=${REPORT:-target/release/bench-report}
RESULTS=${RESULTS:-bench/results}
PYTHON=${PYTHON:-python3}
SUITE=${SUITE:-bench/cgo17/suite.tsv}
RAW=${RAW:-$(mktemp -d)}
mkdir -p "$RAW"

# `lift devices` prints columns separated by two or more spaces: ID, TYPE, NAME, ...
if [ -z "$DEVICE" ]; then
  DEVICE=$("$LIFT" devices | awk -F'  +' '$2 == "GPU" {print $1; exit}')
  [ -z "$DEVICE" ] && DEVICE=$("$LIFT" devices | awk -F'  +' 'NR > 1 {print $1; exit}')
fi
NAME=$("$LIFT" devices | awk -F'  +' -v d="$DEVICE" 'NR > 1 && ($1 == d || index($3, d)) {print $3; exit}')
[ -z "$NAME" ] && NAME="$DEVICE"
SLUG=$(echo "$NAME" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
DATE=$(date -u +%Y-%m-%d)
echo "device $DEVICE: $NAME -> $RESULTS/$SLUG-$DATE.md"

sizes() { for s in $2; do printf -- '--%s %s ' "$1" "$s"; done; }

while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*) continue ;; esac
  if [ -n "$ONLY" ] && ! echo ",$ONLY," | grep -q ",$key,"; then continue; fi
  echo "== $key ($bench${layout:+, $layout}): $large"
  start=$(date +%s)
  # Tuning at the large size fills the cache that `lift bench` reads; a failure here is not
  # fatal (the cost model's best variant is used instead), but it is shown.
  # shellcheck disable=SC2046
  timeout 120 "$LIFT" tune "$file" $(sizes size "$large") --devices "$DEVICE" --top "$TUNE_TOP" --repeats 3 \
    --check-steps 0 > "$RAW/$key.tune" 2>&1 || echo "   tune failed: $(head -c 300 "$RAW/$key.tune")"
  # shellcheck disable=SC2046
  if timeout 120 "$LIFT" bench "$file" $(sizes size "$large") --device "$DEVICE" --json \
      $(sizes check-size "$medium") > "$RAW/$key.json" 2> "$RAW/$key.err"; then
    rm -f "$RAW/$key.err"
  else
    [ -s "$RAW/$key.err" ] || echo "timed out or failed without a message" > "$RAW/$key.err"
    rm -f "$RAW/$key.json"
    echo "   bench failed: $(head -c 300 "$RAW/$key.err")"
  fi
  echo "   $(( $(date +%s) - start )) s"
done < "$SUITE"

if [ "${ANCHORS:-1}" != 0 ]; then
  echo "== anchors (PyTorch, input copies)"
  # The anchors of the suite's own benchmarks (another suite file names others), or of --only.
  ONLY_BENCH=$(awk -F'\t' -v o=",$ONLY," '$1 !~ /^#/ && $1 != "" && (o == ",," || index(o, ","$1",")) {print $2}' \
    "$SUITE" | sort -u | paste -sd, -)
  PYTHONUNBUFFERED=1 "$PYTHON" scripts/anchors.py ${ONLY_BENCH:+--only "$ONLY_BENCH"} > "$RAW/anchors.jsonl" \
    || echo "anchors failed"
fi

mkdir -p "$RESULTS"
"$REPORT" --suite "$SUITE" --raw "$RAW" --device "$NAME" --date "$DATE" \
  --out "$RESULTS/$SLUG-$DATE.md" --svg "$RESULTS/$SLUG-$DATE.svg"
cat "$RESULTS/$SLUG-$DATE.md"
