#!/bin/bash
# Per-run CPU time (ms, user + sys) of onnxruntime-node and of Tessera builds on one model, for a
# machine shared with other work, where wall-clock latency is not to be trusted: CPU time of a
# process doing R2 runs minus one doing R1 runs, divided by R2 - R1 (process start and model load
# cancel). Same inputs for every runtime: the .npy files of INPUT_DIR, bound by file name.
#
# Usage: bench/zoo/cpu_time.sh MODEL.onnx INPUT_DIR R1 R2 TESSERA [TESSERA...]
#   e.g. bench/zoo/cpu_time.sh /tmp/zq8/vit_tiny_q8.onnx /tmp/zq8/accuracy/vit_tiny/inputs 5 45 \
#          /work/main/build/release/bin/tessera build/release/bin/tessera
#   (bench/zoo/quantize.py writes OUT/accuracy/<name>/inputs). THREADS (default 1) sets both runtimes'
#   thread count. Prints one line: ort=MS and tessera<i>=MS per build, in the order given.
set -euo pipefail
if [ $# -lt 5 ]; then sed -n 2,11p "$0"; exit 2; fi
model=$1 inputs=$2 r1=$3 r2=$4
shift 4
here=$(cd "$(dirname "$0")/.." && pwd)
threads=${THREADS:-1}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
named=() flags=()
for f in "$inputs"/*.npy; do
  named+=("$(basename "$f" .npy)=$f")
  flags+=(--input "$(basename "$f" .npy)=$f")
done
cpu() {  # CPU seconds of the command
  /usr/bin/time -o "$tmp" -f "%U %S" "$@" >/dev/null 2>&1
  awk '{print $1 + $2}' "$tmp"
}
per_run() {  # ms per run from two CPU times
  awk -v a="$1" -v b="$2" -v r1="$r1" -v r2="$r2" 'BEGIN { printf "%.3f", (b - a) * 1000 / (r2 - r1) }'
}
o1=$(cpu node "$here/ort_child.js" "$model" "$threads" 1 "$r1" "${named[@]}")
o2=$(cpu node "$here/ort_child.js" "$model" "$threads" 1 "$r2" "${named[@]}")
line="ort=$(per_run "$o1" "$o2")"
i=0
for t in "$@"; do
  t1=$(cpu "$t" run "$model" "${flags[@]}" --repeat "$r1" --threads "$threads")
  t2=$(cpu "$t" run "$model" "${flags[@]}" --repeat "$r2" --threads "$threads")
  line="$line tessera$i=$(per_run "$t1" "$t2")"
  i=$((i + 1))
done
echo "$line"
