#!/usr/bin/env bash
# Training epoch time of Tessera against PyTorch 1.13 (bench/train/torch_train.py: same layers,
# initialization rule, data, batch size 64, Adam 1e-3, thread count), on two setups:
#   lenet  `tessera train --arch lenet`, LeNet-5 on Fashion-MNIST (60k images), one epoch;
#   mnv2   MobileNetV2 width 0.35 at 64x64 (torch_train.py exports it to ONNX with its data: the
#          first MNV2_LIMIT Fashion-MNIST images upscaled), `tessera train mnv2.onnx`, one epoch.
# For each thread count the runs alternate Tessera / PyTorch REPS times (the machine is shared:
# A/B/A/B keeps a load change from landing on one side only); prints every run, then per setup
# and thread count the median epoch times and their ratio tessera / torch (< 1: Tessera is
# faster), and the test accuracy of the last runs (LeNet: 10k test images; mnv2: 1000).
# Usage: bench/train/run.sh [REPS=3] [THREADS="1 2"] [MNV2_LIMIT=2048] [SETUPS="lenet mnv2"]
# Needs: build/release/bin/tessera (or $TESSERA), python3-torch and dataset-fashion-mnist (Debian packages).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
reps="${1:-3}" threads="${2:-1 2}" limit="${3:-2048}" setups="${4:-lenet mnv2}"
tessera="${TESSERA:-$root/build/release/bin/tessera}"  # TESSERA=path: another build (e.g. a baseline)
torch_py="$root/bench/train/torch_train.py"
[[ -x $tessera ]] || { echo "run.sh: build $tessera first"; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "run.sh: apt-get install python3-torch"; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
if [[ " $setups " == *" mnv2 "* ]]; then
  /usr/bin/python3 "$torch_py" --arch mnv2 --limit "$limit" --export "$out/mnv2" 2>/dev/null
fi

# One run; appends "setup threads side seconds accuracy" to $out/runs.
run() {
  local setup=$1 t=$2 side=$3 log="$out/log"
  if [[ $side == tessera ]]; then
    local model=(--arch lenet)
    [[ $setup == mnv2 ]] && model=("$out/mnv2/mnv2.onnx" --data "$out/mnv2/data")
    "$tessera" train "${model[@]}" --epochs 1 --batch-size 64 --threads "$t" --optimizer adam --lr 1e-3 \
      >"$log" 2>/dev/null
    sed -nE 's/^epoch 1: .*test accuracy ([0-9.]+)%, ([0-9.]+) s.*/\2 \1/p' "$log" | tail -1 >"$out/r"
  else
    local extra=()
    [[ $setup == mnv2 ]] && extra=(--limit "$limit")
    /usr/bin/python3 "$torch_py" --arch "$setup" "${extra[@]}" --epochs 1 --batch-size 64 --threads "$t" >"$log"
    sed -nE 's/^torch epoch 1: ([0-9.]+) s, test accuracy ([0-9.]+)/\1 \2/p' "$log" \
      | awk '{printf "%s %.2f\n", $1, 100 * $2}' >"$out/r"
  fi
  [[ -s $out/r ]] || { echo "run.sh: no epoch line from $side $setup:"; cat "$log"; exit 1; }
  echo "$setup $t $side $(cat "$out/r")" | tee -a "$out/runs"
}

for setup in $setups; do
  for t in $threads; do
    for ((i = 0; i < reps; ++i)); do
      run "$setup" "$t" tessera
      run "$setup" "$t" torch
    done
  done
done
/usr/bin/python3 - "$out/runs" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
print("| setup | threads | Tessera s (median) | PyTorch s (median) | ratio | spread T / P | accuracy T / P |")
print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
for key in dict.fromkeys((r[0], r[1]) for r in runs):
    t = [float(r[3]) for r in runs if (r[0], r[1], r[2]) == (*key, "tessera")]
    p = [float(r[3]) for r in runs if (r[0], r[1], r[2]) == (*key, "torch")]
    at = [r[4] for r in runs if (r[0], r[1], r[2]) == (*key, "tessera")][-1]
    ap = [r[4] for r in runs if (r[0], r[1], r[2]) == (*key, "torch")][-1]
    mt, mp = statistics.median(t), statistics.median(p)
    print(f"| {key[0]} | {key[1]} | {mt:.2f} | {mp:.2f} | **{mt / mp:.2f}** | "
          f"{min(t):.2f}-{max(t):.2f} / {min(p):.2f}-{max(p):.2f} | {at}% / {ap}% |")
PY
