#!/usr/bin/env bash
# Training epoch time and accuracy of Tessera against PyTorch 1.13 (bench/train/torch_train.py), on
# two setups, each side taking the same steps: torch_train.py exports its model as initialized with
# seed 0 to ONNX with the data as IDX files, and `tessera train` trains that file on that data with
# the same batch size 64, Adam 1e-3, thread count and epoch order (seed 0: the Fisher-Yates shuffle
# over mt19937_64 of tools/train/trainer.h, which bench/train/shuffle.py repeats for PyTorch):
#   lenet  LeNet-5 on Fashion-MNIST (60k images; the layers of `tessera train --arch lenet`);
#   mnv2   MobileNetV2 width 0.35 at 64x64 on the first MNV2_LIMIT Fashion-MNIST images upscaled.
# For each thread count the runs alternate Tessera / PyTorch REPS times (the machine is shared:
# A/B/A/B keeps a load change from landing on one side only); prints every run, then per setup
# and thread count the median times of epoch 1 and their ratio tessera / torch (< 1: Tessera is
# faster), and the test accuracy after each epoch of the last runs (LeNet: 10k test images;
# mnv2: 1000).
# Usage: bench/train/run.sh [REPS=3] [THREADS="1 2"] [MNV2_LIMIT=2048] [SETUPS="lenet mnv2"] [EPOCHS=1]
# Needs: build/release/bin/tessera (or $TESSERA), python3-torch and dataset-fashion-mnist (Debian packages).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
reps="${1:-3}" threads="${2:-1 2}" limit="${3:-2048}" setups="${4:-lenet mnv2}" epochs="${5:-1}"
tessera="${TESSERA:-$root/build/release/bin/tessera}"  # TESSERA=path: another build (e.g. a baseline)
torch_py="$root/bench/train/torch_train.py"
[[ -x $tessera ]] || { echo "run.sh: build $tessera first"; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "run.sh: apt-get install python3-torch"; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for setup in $setups; do
  lim=0
  [[ $setup == mnv2 ]] && lim=$limit
  /usr/bin/python3 "$torch_py" --arch "$setup" --limit "$lim" --export "$out/$setup" 2>/dev/null
done

# One run; appends "setup threads side epoch1_seconds accuracy_after_each_epoch..." to $out/runs.
run() {
  local setup=$1 t=$2 side=$3 log="$out/log" lim=0
  [[ $setup == mnv2 ]] && lim=$limit
  if [[ $side == tessera ]]; then
    "$tessera" train "$out/$setup/$setup.onnx" --data "$out/$setup/data" --epochs "$epochs" --batch-size 64 \
      --threads "$t" --optimizer adam --lr 1e-3 --seed 0 >"$log" 2>/dev/null
    sed -nE 's/^epoch [0-9]+: .*test accuracy ([0-9.]+)%, ([0-9.]+) s.*/\2 \1/p' "$log" >"$out/r"
  else
    /usr/bin/python3 "$torch_py" --arch "$setup" --limit "$lim" --epochs "$epochs" --batch-size 64 --threads "$t" \
      --seed 0 >"$log"
    sed -nE 's/^torch epoch [0-9]+: ([0-9.]+) s, test accuracy ([0-9.]+)/\1 \2/p' "$log" \
      | awk '{printf "%s %.2f\n", $1, 100 * $2}' >"$out/r"
  fi
  [[ $(wc -l <"$out/r") == "$epochs" ]] || { echo "run.sh: no $epochs epoch lines from $side $setup:"; cat "$log"; exit 1; }
  echo "$setup $t $side $(head -1 "$out/r" | cut -d' ' -f1) $(cut -d' ' -f2 "$out/r" | tr '\n' ' ')" | tee -a "$out/runs"
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
print("| setup | threads | Tessera s (median) | PyTorch s (median) | ratio | spread T / P | accuracy per epoch T / P |")
print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
for key in dict.fromkeys((r[0], r[1]) for r in runs):
    t = [float(r[3]) for r in runs if (r[0], r[1], r[2]) == (*key, "tessera")]
    p = [float(r[3]) for r in runs if (r[0], r[1], r[2]) == (*key, "torch")]
    at = [r[4:] for r in runs if (r[0], r[1], r[2]) == (*key, "tessera")][-1]
    ap = [r[4:] for r in runs if (r[0], r[1], r[2]) == (*key, "torch")][-1]
    mt, mp = statistics.median(t), statistics.median(p)
    acc = lambda a: ", ".join(x + "%" for x in a)
    print(f"| {key[0]} | {key[1]} | {mt:.2f} | {mp:.2f} | **{mt / mp:.2f}** | "
          f"{min(t):.2f}-{max(t):.2f} / {min(p):.2f}-{max(p):.2f} | {acc(at)} / {acc(ap)} |")
PY
