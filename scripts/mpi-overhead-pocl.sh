#!/usr/bin/env bash
# R = 2 PoCL ranks against one process on one host (issue 32's overhead target: R = 2 adds at
# most 15 % to the one-process time of mm and of a stencil loop, at sizes where the kernels
# take at least 200 ms). Prints the raw reports and a Markdown table
# (bench/results/mpi-overhead-pocl-2026-12-02.md).
#
# Fair on a host of C cores shared with other work: both sides run C PoCL worker threads in all
# (one process: C; R ranks: C/R each), so that neither gets a larger share
# of the host from its number of threads. The PoCL thread count is fixed per process, so the
# two sides are two invocations of `lift bench --mpi` (rank 0's "one process" line, and the
# "R ranks" line), each the median of REPEATS whole runs after one untimed run (compile,
# copies, kernels, transfers; process start and MPI_Init are outside), and the invocations
# alternate (one process, R ranks, one process, …) PAIRS times, so that a change in the host's
# load falls on both alike. The ratio of each pair, and the median of the pairs', is reported
# with the load average (1 min) before each invocation. Each 2-rank report also gives its own
# rank 0 alone at C/R threads: the speed-up over that many cores.
#
# Usage: scripts/mpi-overhead-pocl.sh [LIFT] (default target/release/lift, built with
# `cargo build --release -p lift --features mpi`). Environment: PAIRS (5), REPEATS (3),
# CORES (2), RANKS (2), MM (2048), STENCIL (4194304), STEPS (50).
set -euo pipefail
LIFT=${1:-target/release/lift}
PAIRS=${PAIRS:-5}
REPEATS=${REPEATS:-3}
CORES=${CORES:-2}
RANKS=${RANKS:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/mm.lisp" <<'EOF'
(lift (M K N)
  ((array-type (array-type float K) M) (array-type (array-type float N) K))
  (lambda (a b)
    (map (lambda (row)
           (join (map (lambda (col) (reduce + 0.0f (map (lambda (p) (* (get #0 p) (get #1 p))) (zip row col))))
                      (transpose b))))
         a)))
EOF
cat >"$dir/stencil.lisp" <<'EOF'
(lift (N K) ((array-type float N))
  (lambda (xs)
    (iterate K
      (lambda (s)
        (join (mapGlb (lambda (w) (toGlobal (mapSeq (lambda (t) (* t 0.3333f)) (reduceSeq + 0.0f w))))
                      (slide #3 #1 (pad-clamp #1 #1 s)))))
      xs)))
EOF

mpi() { # ranks, threads per rank, program, sizes...
  local n=$1 cu=$2 prog=$3
  shift 3
  local sizes=()
  for s in "$@"; do sizes+=(--size "$s"); done
  # PoCL 3 reads POCL_MAX_PTHREAD_COUNT (`clinfo` shows it as the device's compute units);
  # later versions read POCL_CPU_MAX_CU_COUNT. Both are set, so that each side really has its
  # share of threads (with only the second, PoCL 3.1 gave every rank every core).
  timeout 900 mpirun --oversubscribe --allow-run-as-root -n "$n" -x POCL_MAX_PTHREAD_COUNT="$cu" -x POCL_CPU_MAX_CU_COUNT="$cu" \
    "$LIFT" bench "$dir/$prog" "${sizes[@]}" --repeats "$REPEATS" --mpi
}
field() { # the median in ms of the line of a report that starts with $2
  grep -m1 "^  $2" "$1" | sed -E 's/.*: ([0-9.]+) ms.*/\1/'
}
load() { cut -d' ' -f1 /proc/loadavg; }

rows=()
# (mm 128³: kernels of a few ms, so the run is its fixed costs: compile, device, transfers)
# The sizes are chosen so that one process's kernels take at least 200 ms on an idle 2-core host
# (`lift bench` at 2 PoCL threads: mm 2048³ about 800 ms, mm 1024³ only about 45 ms).
MM=${MM:-2048}
STENCIL=${STENCIL:-4194304}
STEPS=${STEPS:-50}
cases=("mm ${MM}³|mm.lisp|M=$MM K=$MM N=$MM" "stencil loop $STENCIL × $STEPS steps|stencil.lisp|N=$STENCIL K=$STEPS"
  "mm 128³ (fixed costs)|mm.lisp|M=128 K=128 N=128")
for case in "${cases[@]}"; do
  IFS='|' read -r name prog sizes <<<"$case"
  # shellcheck disable=SC2086 # (sizes are words)
  for p in $(seq 1 "$PAIRS"); do
    l1=$(load)
    mpi 1 "$CORES" "$prog" $sizes >"$dir/one" 2>&1 || { cat "$dir/one"; exit 1; }
    l2=$(load)
    mpi "$RANKS" $((CORES / RANKS)) "$prog" $sizes >"$dir/split" 2>&1 || { cat "$dir/split"; exit 1; }
    echo "== $name, pair $p: one process ($CORES threads), load $l1"; cat "$dir/one"
    echo "== $name, pair $p: $RANKS ranks ($((CORES / RANKS)) thread(s) each), load $l2"; cat "$dir/split"
    one=$(field "$dir/one" "one process")
    split=$(field "$dir/split" "$RANKS ranks")
    alone=$(field "$dir/split" "one process")
    cpu1=$(grep -m1 "CPU time" "$dir/one" | sed -E 's/.*one process ([0-9]+) ms.*/\1/')
    cpu2=$(grep -m1 "CPU time" "$dir/split" | sed -E 's/.*all ranks ([0-9]+) ms.*/\1/')
    rows+=("$name|$p|$one|$split|$alone|$l1 / $l2|$cpu1|$cpu2")
  done
done

echo
echo "| program | pair | one process, $CORES threads (ms) | $RANKS ranks, $((CORES / RANKS)) each (ms) | ratio | one rank alone, $((CORES / RANKS)) thread(s) (ms) | CPU per run: one process / all ranks (ms) | load before each |"
echo "|---|---|---|---|---|---|---|---|"
for r in "${rows[@]}"; do
  IFS='|' read -r name p one split alone l cpu1 cpu2 <<<"$r"
  echo "| $name | $p | $one | $split | $(awk "BEGIN{printf \"%.3f\", $split/$one}") | $alone | $cpu1 / $cpu2 | $l |"
done
echo
echo "| program | median ratio ($PAIRS pairs) |"
echo "|---|---|"
for case in "${cases[@]}"; do
  name=${case%%|*}
  printf '%s\n' "${rows[@]}" | awk -F'|' -v n="$name" '$1 == n { print $4 / $3 }' | sort -g |
    awk -v n="$name" '{ r[NR] = $1 } END { printf "| %s | %.3f |\n", n, r[int((NR + 1) / 2)] }'
done
