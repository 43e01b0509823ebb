#!/usr/bin/env bash
# Epoch time of LeNet-5 training on Fashion-MNIST: `tessera train --arch lenet` against PyTorch
# 1.13 (bench/train/torch_lenet.py: same layers, batch size, optimizer, thread count), run one
# after the other in this script. Prints both epoch times and the ratio tessera / torch (< 1:
# Tessera is faster), and the peak resident memory of each process.
# Usage: bench/train/run.sh [EPOCHS=1] [BATCH=64] [THREADS=1]
# Needs: build/release/bin/tessera (cmake --preset release && cmake --build build/release),
#        python3-torch and dataset-fashion-mnist (Debian packages).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
epochs="${1:-1}" batch="${2:-64}" threads="${3:-1}"
tessera="$root/build/release/bin/tessera"
[[ -x $tessera ]] || { echo "run.sh: build $tessera first"; exit 1; }
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "run.sh: apt-get install python3-torch"; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

/usr/bin/time -f "%M" -o "$out/tsr.mem" "$tessera" train --arch lenet --epochs "$epochs" --batch-size "$batch" \
  --threads "$threads" --optimizer adam --lr 1e-3 >"$out/tsr.txt" 2>/dev/null
/usr/bin/time -f "%M" -o "$out/torch.mem" /usr/bin/python3 "$root/bench/train/torch_lenet.py" --epochs "$epochs" \
  --batch-size "$batch" --threads "$threads" >"$out/torch.txt"
cat "$out/tsr.txt" "$out/torch.txt"
/usr/bin/python3 - "$out" <<'PY'
import re, sys
d = sys.argv[1]
t = [float(m) for m in re.findall(r"test accuracy [\d.]+%, ([\d.]+) s", open(f"{d}/tsr.txt").read())]
p = [float(m) for m in re.findall(r"torch epoch \d+: ([\d.]+) s", open(f"{d}/torch.txt").read())]
mt, mp = int(open(f"{d}/tsr.mem").read()), int(open(f"{d}/torch.mem").read())
ts, ps = sum(t) / len(t), sum(p) / len(p)
print(f"epoch time: tessera {ts:.2f} s, torch {ps:.2f} s, ratio {ts / ps:.2f}")
print(f"peak RSS: tessera {mt / 1024:.0f} MiB, torch {mp / 1024:.0f} MiB")
PY
