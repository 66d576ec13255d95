#!/usr/bin/env bash
# Differential fuzzing through the whole compiler (crates/difffuzz): random well-typed LIFT
# programs on the reference interpreter and on OpenCL, compared; failures are shrunk and written
# to a folder with their data.
#
#   scripts/fuzz.sh --cases 100000 --seed S [--out DIR] [--jobs J] [--start-case K] [--timeout SECS]
#                   [--shrink-secs SECS]   (time spent shrinking each distinct failure, default 60)
#                   [--max-secs SECS]      (stop starting cases after SECS; 0: no limit)
#                   [--oclgrind K]         (the agreeing cases of every K-th index also run on
#                                           Oclgrind's device; default 20 where `oclgrind` is
#                                           installed; 0: none)
#
# Each job is a child process per case stream; a case that aborts or hangs (--timeout seconds,
# default 60) is recorded as `crash` or `timeout` and the job goes on in a fresh process.
# Every finished case is appended to DIR/results.tsv; a run skips the cases recorded there, so
# a long campaign runs in pieces, e.g. in 10-minute slots on 16 cores, repeated until the
# summary has no "not run yet" line:
#   scripts/fuzz.sh --seed 7 --cases 100000 --jobs 16 --max-secs 540
# (or explicit ranges: --start-case 0 --cases 20000, then --start-case 20000 ..., same --out).
# Prints a progress line every 10 s and a summary of all recorded cases at the end (also in
# DIR/summary.txt). LIFT_TEST_DEVICE picks the OpenCL device (default: the first).
set -euo pipefail

cases=1000
seed=1
out=""
jobs=1
first=0
timeout=60
shrink_secs=60
max_secs=0
oclgrind=0
if command -v oclgrind >/dev/null; then oclgrind=20; fi
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) cases="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --first|--start-case) first="$2"; shift 2 ;;
    --max-secs) max_secs="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --shrink-secs) shrink_secs="$2"; shift 2 ;;
    --oclgrind) oclgrind="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
out="${out:-target/fuzz/seed-$seed}"

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release -p difffuzz --bin difffuzz
# Kernels of random programs would only fill the user's program cache.
export LIFT_CACHE_DIR="${LIFT_CACHE_DIR:-$(mktemp -d)}"
device=()
if [ -n "${LIFT_TEST_DEVICE:-}" ]; then device=(--device "$LIFT_TEST_DEVICE"); fi
sample=()
if [ "$oclgrind" != 0 ]; then sample=(--oclgrind "$oclgrind"); fi
exec target/release/difffuzz run --seed "$seed" --cases "$cases" --first "$first" \
  --jobs "$jobs" --out "$out" --timeout "$timeout" --shrink-secs "$shrink_secs" \
  --max-secs "$max_secs" "${device[@]}" "${sample[@]}"
