#!/usr/bin/env bash
# The forms corpus (bench/forms/) on one device: every formulation of a computation timed at its
# large size as `lift run` would run it (tuned within --budget, or the cost model's choice with
# --budget 0), beside the suite's own file of the same computation, the PyTorch anchor and the
# device copy of the inputs, all in one run. Each form's variant is first checked against the
# interpreter at its medium size (`lift bench --check-size`).
#
# Usage: scripts/bench-forms.sh [--budget 0|20s] [--only sum,dot,...] [--raw DIR]
#   writes DIR/<key>.json (lift bench), DIR/<key>.err, DIR/anchors.jsonl, then prints the table
#   of scripts/forms-table.py (also DIR/table.md).
# Environment: LIFT (default target/release/lift), PYTHON (python3), ANCHORS=0 to skip PyTorch,
#   FORM_TIMEOUT (seconds for one program's bench, default 120).
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=0
ONLY=""
RAW=$(mktemp -d)
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) BUDGET="$2"; shift 2 ;;
    --only) ONLY="$2"; shift 2 ;;
    --raw) RAW="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
LIFT=${LIFT:-target/release/lift}
PYTHON=${PYTHON:-python3}
mkdir -p "$RAW"
sizes() { for s in $2; do printf -- '--%s %s ' "$1" "$s"; done; }
wanted() { [ -z "$ONLY" ] || echo ",$ONLY," | grep -q ",$1,"; }

# One program: tune (unless the budget is 0), then bench with a check at the medium size.
one() {
  local key="$1" file="$2" large="$3" medium="$4"
  if [ "$BUDGET" != 0 ]; then
    # shellcheck disable=SC2046
    timeout 300 "$LIFT" tune "$file" $(sizes size "$large") --budget "$BUDGET" --repeats 3 \
      --check-steps 0 > "$RAW/$key.tune" 2>&1 || echo "   tune failed: $(head -c 200 "$RAW/$key.tune")"
  fi
  # shellcheck disable=SC2046
  if timeout "${FORM_TIMEOUT:-120}" "$LIFT" bench "$file" $(sizes size "$large") --json $(sizes check-size "$medium") \
      > "$RAW/$key.json" 2> "$RAW/$key.err"; then
    rm -f "$RAW/$key.err"
  else
    [ -s "$RAW/$key.err" ] || echo "timed out or failed without a message" > "$RAW/$key.err"
    rm -f "$RAW/$key.json"
    echo "   $key failed: $(head -c 200 "$RAW/$key.err")"
  fi
}

# The forms.
while IFS=$'\t' read -r key comp _form file large medium; do
  case "$key" in ''|'#'*|key) continue ;; esac
  wanted "$comp" || continue
  echo "== form $key"
  one "form.$comp.$key" "bench/forms/$file" "$large" "$medium"
done < bench/forms/suite.tsv

# The suite's file of each computation (bench/forms/reference.tsv), timed the same way.
while IFS=$'\t' read -r comp file anchor large medium; do
  case "$comp" in ''|'#'*) continue ;; esac
  wanted "$comp" || continue
  [ "$file" = "-" ] && continue
  echo "== suite $comp"
  one "suite.$comp" "$file" "$large" "$medium"
done < bench/forms/reference.tsv

if [ "${ANCHORS:-1}" != 0 ]; then
  names=$(awk -F'\t' -v o=",$ONLY," '$1 !~ /^#/ && $3 != "-" && (o == ",," || index(o, ","$1",")) {print $3}' \
    bench/forms/reference.tsv | sort -u | paste -sd, -)
  PYTHONUNBUFFERED=1 "$PYTHON" scripts/anchors.py --only "$names" > "$RAW/anchors.jsonl" || echo "anchors failed"
fi
"$PYTHON" scripts/forms-table.py "$RAW" | tee "$RAW/table.md"
