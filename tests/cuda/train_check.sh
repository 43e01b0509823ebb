#!/bin/bash
# train_check.sh TESSERA WORKDIR [LIMIT]: one epoch of LeNet on Fashion-MNIST (the first LIMIT
# samples, default 4096) with --device cuda and with --device cpu, same seed and batches; fails
# unless both finish and their final train/test losses agree within 2e-3 relative (float sums
# in another order over 64 steps), and the CUDA run placed the training ops on the device.
set -u
tessera=$1; work=$2; limit=${3:-4096}
mkdir -p "$work"
common=(train --arch lenet --epochs 1 --limit "$limit" --batch-size 64 --optimizer adamw --seed 3)
"$tessera" "${common[@]}" --device cpu -o "$work/cpu" > "$work/cpu.txt" 2>&1 || { cat "$work/cpu.txt"; exit 1; }
"$tessera" "${common[@]}" --device cuda -o "$work/cuda" > "$work/cuda.txt" 2>&1
rc=$?
cat "$work/cuda.txt"
[ $rc = 0 ] || { echo "FAIL: tessera train --device cuda exited $rc"; exit 1; }
/usr/bin/python3 - "$work/cpu.txt" "$work/cuda.txt" <<'PY'
import re, sys
def losses(path):
    m = re.search(r"train loss ([0-9.]+).*test loss ([0-9.]+)", open(path).read())
    if not m:
        sys.exit(f"FAIL: no epoch line in {path}")
    return float(m.group(1)), float(m.group(2))
c, g = losses(sys.argv[1]), losses(sys.argv[2])
print(f"cpu train/test loss {c}, cuda {g}")
for a, b in zip(c, g):
    if abs(a - b) > 2e-3 * max(abs(a), 1e-6):
        sys.exit(f"FAIL: losses differ: cpu {c} vs cuda {g}")
print("PASS")
PY
