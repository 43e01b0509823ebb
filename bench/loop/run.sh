#!/usr/bin/env bash
# Loop per-iteration overhead: Tessera vs onnxruntime-node on the same ONNX model (a Loop whose
# body adds 1 to a scalar), single-threaded, in one script run.
#   bash bench/loop/run.sh [ITERATIONS=100000] [REPEAT=5]
# Needs a release build (build/release/tools/cli/tessera) and onnxruntime-node (scripts/install_deps.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
iters=${1:-100000}
repeat=${2:-5}
tessera=${TESSERA:-$root/build/release/bin/tessera}
ort_path=${ORT_NODE_PATH:-$root/tests/models/node_modules/onnxruntime-node}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$root/bench/loop/make_loop_model.py" "$work/loop_add.onnx"
"$tessera" convert "$work/loop_add.onnx" -o "$work/loop_add.tsr" >/dev/null
/usr/bin/python3 - "$work" "$iters" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/M.npy", np.array(int(sys.argv[2]), dtype=np.int64))
np.save(sys.argv[1] + "/x0.npy", np.array(0.0, dtype=np.float32))
PY
ours=$("$tessera" run "$work/loop_add.tsr" --input "M=$work/M.npy" --input "x0=$work/x0.npy" --threads 1 \
        --repeat "$repeat" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' | head -n 1)
ort=$(ORT_NODE_PATH="$ort_path" node "$root/bench/loop/ort_loop.mjs" "$work/loop_add.onnx" "$iters" "$repeat" |
      /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
/usr/bin/python3 - "$iters" "$ours" "$ort" <<'PY'
import sys
n, ours, ort = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print(f"| runtime | ms for {n} iterations (median) | µs / iteration |")
print("| --- | --- | --- |")
print(f"| Tessera | {ours:.1f} | {1000 * ours / n:.3f} |")
print(f"| onnxruntime-node 1.30 | {ort:.1f} | {1000 * ort / n:.3f} |")
print(f"ratio (Tessera / onnxruntime): {ours / ort:.2f}")
PY
