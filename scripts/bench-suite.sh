#!/usr/bin/env bash
# The CGO'17 suite on one device: tune every program at its large size within a budget (or
# reuse the tuning cache), check the chosen variant against the interpreter at a medium size,
# time it at the large size, time the PyTorch anchors and input copies on the same GPU in the
# same run, and write the table and the chart to $RESULTS/<device>-<date>[-<tag>].{md,svg}, with
# every raw output (tune tables, bench JSON, errors, anchors) bundled in one text file beside
# them, `<...>.raw.txt`: the GPU tool brings back only a few files.
#
# Usage: scripts/bench-suite.sh [device] [--only key,key] [--budget 30s] [--tag NAME]
#        scripts/bench-suite.sh --merge A.raw.txt B.raw.txt [...]
#   device: an id `P:D` or part of a device name as `lift devices` prints it (default: the first GPU).
#   --only: the suite's rows to run (keys of $SUITE); the others show as "not run".
#   --budget: `lift tune --budget` per program (default $TUNE_BUDGET, else 30s). The whole tune
#     of a program, exploration included, ends within it; `lift bench` then takes 5-30 s more on
#     the H200 (inputs at the large size, the interpreter's check at the medium one).
#   --tag: appended to the output names (two partial runs of one day keep apart).
#   --merge: one table from the bundles of partial runs (later bundles win for a row in two;
#     the anchors of all are kept); needs no device, only $REPORT.
# Environment: LIFT (default target/release/lift), REPORT (target/release/bench-report),
#   RESULTS (default bench/results), PYTHON (python3), ANCHORS=0 to skip PyTorch (no CUDA),
#   SUITE (bench/cgo17/suite.tsv), TUNE_BUDGET.
# The table's "model rank of the tuned best" comes from each program's `lift tune` output
# (<key>.tune): where the fastest variant timed stands in the cost model's order.
# Two 600-s device commands hold the 16 programs with the default budget: e.g.
#   --only nn,mriq,kmeans_rows,kmeans_fmajor,md_rows,md_nmajor,convolution_row,convolution_col
#   --only gemv_n,gemv_t,atax,gesummv,mm,nbody,sum,transpose
# then --merge of the two bundles.
set -uo pipefail
cd "$(dirname "$0")/.."

DEVICE=""
ONLY=""
TAG=""
BUDGET=${TUNE_BUDGET:-30s}
MERGE=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only) ONLY="$2"; shift 2 ;;
    --budget) BUDGET="$2"; shift 2 ;;
    --tag) TAG="$2"; shift 2 ;;
    --merge) shift; MERGE=("$@"); break ;;
    --tune-top) echo "--tune-top is gone: the tune has a budget now (--budget)" >&2; exit 2 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) DEVICE="$1"; shift ;;
  esac
done
LIFT=${LIFT:-target/release/lift}
REPORT=${REPORT:-target/release/bench-report}
RESULTS=${RESULTS:-bench/results}
PYTHON=${PYTHON:-python3}
SUITE=${SUITE:-bench/cgo17/suite.tsv}
RAW=${RAW:-$(mktemp -d)}
mkdir -p "$RAW" "$RESULTS"

# A bundle: every file of $RAW, each after a line `#### lift-suite-raw <name>` (names have no
# spaces; the contents never start a line with that marker).
MARK='#### lift-suite-raw'
bundle() {
  for f in "$RAW"/*; do
    [ -f "$f" ] || continue
    printf '%s %s\n' "$MARK" "$(basename "$f")"
    cat "$f"
    # (a file without a final newline would glue the next marker to its last line)
    [ -n "$(tail -c1 "$f")" ] && echo
  done
}
unbundle() {
  awk -v mark="$MARK" -v dir="$RAW" '
    index($0, mark " ") == 1 { name = substr($0, length(mark) + 2); out = dir "/" name
      # (the anchors of every part are kept; of another file, the last part'"'"'s)
      if (name != "anchors.jsonl") printf "" > out
      next }
    out != "" { print >> out }
  ' "$1"
}

report() {
  local base="$1"
  "$REPORT" --suite "$SUITE" --raw "$RAW" --device "$NAME" --date "$DATE" \
    --out "$RESULTS/$base.md" --svg "$RESULTS/$base.svg"
  cat "$RESULTS/$base.md"
}

if [ ${#MERGE[@]} -gt 0 ]; then
  for b in "${MERGE[@]}"; do
    [ -f "$b" ] || { echo "no bundle $b" >&2; exit 2; }
    unbundle "$b"
  done
  # (anchors of a benchmark in two parts: the report keeps the last line)
  NAME=$(cat "$RAW/device.txt" 2>/dev/null || echo "unknown device")
  DATE=$(cat "$RAW/date.txt" 2>/dev/null || date -u +%Y-%m-%d)
  SLUG=$(echo "$NAME" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
  BASE="$SLUG-$DATE${TAG:+-$TAG}"
  bundle > "$RESULTS/$BASE.raw.txt"
  report "$BASE"
  exit 0
fi

# `lift devices` prints columns separated by two or more spaces: ID, TYPE, NAME, ...
if [ -z "$DEVICE" ]; then
  DEVICE=$("$LIFT" devices | awk -F'  +' '$2 == "GPU" {print $1; exit}')
  [ -z "$DEVICE" ] && DEVICE=$("$LIFT" devices | awk -F'  +' 'NR > 1 {print $1; exit}')
fi
NAME=$("$LIFT" devices | awk -F'  +' -v d="$DEVICE" 'NR > 1 && ($1 == d || index($3, d)) {print $3; exit}')
[ -z "$NAME" ] && NAME="$DEVICE"
SLUG=$(echo "$NAME" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
DATE=$(date -u +%Y-%m-%d)
BASE="$SLUG-$DATE${TAG:+-$TAG}"
echo "$NAME" > "$RAW/device.txt"
echo "$DATE" > "$RAW/date.txt"
echo "device $DEVICE: $NAME -> $RESULTS/$BASE.md (tune budget $BUDGET per program)"

# Seconds of a budget such as `30s`, `2m`, `90` (for the safety timeout only).
budget_s() {
  case "$1" in
    *ms) echo 1 ;;
    *s) echo "${1%s}" ;;
    *m) echo $(( ${1%m} * 60 )) ;;
    *) echo "$1" ;;
  esac | cut -d. -f1
}
TUNE_KILL=$(( $(budget_s "$BUDGET") + 60 ))
# Wall time and peak RSS of a command into file $1, where /usr/bin/time exists.
measured() {
  local out="$1"; shift
  if [ -x /usr/bin/time ]; then /usr/bin/time -f '%e s wall, %M KiB max RSS' -o "$out" "$@"; else "$@"; fi
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

sizes() { for s in $2; do printf -- '--%s %s ' "$1" "$s"; done; }

while IFS=$'\t' read -r key bench layout file large medium; do
  case "$key" in ''|'#'*) continue ;; esac
  if [ -n "$ONLY" ] && ! echo ",$ONLY," | grep -q ",$key,"; then continue; fi
  echo "== $key ($bench${layout:+, $layout}): $large"
  start=$(now)
  # Tuning at the large size fills the cache that `lift bench` reads; a failure here is not
  # fatal (the cost model's best variant is used instead), but it is shown. Nothing is checked
  # here (the medium-size check of `lift bench` covers the variant that is used); the timeout
  # only catches a hang past the budget.
  # shellcheck disable=SC2046
  measured "$RAW/$key.tune-time" timeout "$TUNE_KILL" "$LIFT" tune "$file" $(sizes size "$large") \
    --devices "$DEVICE" --budget "$BUDGET" --repeats 3 --check-steps 0 > "$RAW/$key.tune" 2>&1 \
    || echo "   tune failed: $(head -c 300 "$RAW/$key.tune")"
  tuned=$(now)
  # shellcheck disable=SC2046
  if timeout 120 "$LIFT" bench "$file" $(sizes size "$large") --device "$DEVICE" --json \
      $(sizes check-size "$medium") > "$RAW/$key.json" 2> "$RAW/$key.err"; then
    rm -f "$RAW/$key.err"
  else
    [ -s "$RAW/$key.err" ] || echo "timed out or failed without a message" > "$RAW/$key.err"
    rm -f "$RAW/$key.json"
    echo "   bench failed: $(head -c 300 "$RAW/$key.err")"
  fi
  echo "   tune $(secs "$start" "$tuned") s ($(tail -1 "$RAW/$key.tune-time" 2>/dev/null)), bench $(secs "$tuned" "$(now)") s"
done < "$SUITE"

if [ "${ANCHORS:-1}" != 0 ]; then
  echo "== anchors (PyTorch, input copies)"
  # The anchors of the suite's own benchmarks (another suite file names others), or of --only.
  ONLY_BENCH=$(awk -F'\t' -v o=",$ONLY," '$1 !~ /^#/ && $1 != "" && (o == ",," || index(o, ","$1",")) {print $2}' \
    "$SUITE" | sort -u | paste -sd, -)
  PYTHONUNBUFFERED=1 "$PYTHON" scripts/anchors.py ${ONLY_BENCH:+--only "$ONLY_BENCH"} > "$RAW/anchors.jsonl" \
    || echo "anchors failed"
fi

bundle > "$RESULTS/$BASE.raw.txt"
report "$BASE"
