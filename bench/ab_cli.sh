#!/usr/bin/env bash
# A/B latency of two `tessera` builds on the same models, alternating A and B in each round so
# that drift on a shared machine hits both: prints "model A|B round median_ms" lines, then the
# median over rounds of each and their ratio B/A.
# Usage: bench/ab_cli.sh A_TESSERA B_TESSERA [ROUNDS]   (run from the repo root; models from
#        third_party/models/fetch.sh; 1 thread, 5 warm-up and 40 timed runs per round)
set -euo pipefail
a="$1" b="$2" rounds="${3:-3}"
dir=third_party/models
models=(
  "ch_PP-OCRv4_rec_infer --shape x=1,3,48,320"
  "mlsd_320x320_tiny"
  "face_detection_front_128x128_barracuda"
  "embedding_model --shape input_1=1,76,32,1"
)
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
for entry in "${models[@]}"; do
  read -r m args <<<"$entry"
  ta=() tb=()
  for ((r = 1; r <= rounds; ++r)); do
    for which in A B; do
      bin=$a; [[ $which == B ]] && bin=$b
      # shellcheck disable=SC2086
      ms=$("$bin" run "$dir/$m.onnx" --random-inputs --seed 1 $args --warmup 5 --repeat 40 |
           sed -n 's/^latency: median \([0-9.]*\) ms.*/\1/p')
      echo "$m $which $r $ms"
      if [[ $which == A ]]; then ta+=("$ms"); else tb+=("$ms"); fi
    done
  done
  ma=$(printf '%s\n' "${ta[@]}" | median) mb=$(printf '%s\n' "${tb[@]}" | median)
  echo "$m: A $ma ms, B $mb ms, B/A $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
done
