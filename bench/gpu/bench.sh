#!/bin/bash
# bench/gpu/bench.sh [BUILD_DIR] [REPEAT]: model latency on the CUDA backend against the CPU
# backend and, on the same GPU, the Vulkan backend; then LeNet training throughput on CUDA against
# PyTorch CUDA eager (bench/gpu/torch_lenet.py) where torch with CUDA is installed.
# Models are the real ones of tests/models as the model tests left them (run `ctest -L models`
# first): build/release/tests/models/<name>/<name>.tsr with the reference inputs in ref/.
# Prints one line per model and device: "<model> <device> median <ms> min <ms>".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build/release}
repeat=${2:-50}
T=$build/bin/tessera
[ -x "$T" ] || { echo "no tessera CLI at $T (build the release preset first)"; exit 1; }
for dir in "$build"/tests/models/*/; do
  name=$(basename "$dir")
  tsr=$dir/$name.tsr
  [ -f "$tsr" ] && [ -f "$dir/ref/ref.json" ] || continue
  # The reference inputs gen_refs.js wrote (tests/models/run_model_test.py), by input name.
  mapfile -t inputs < <(/usr/bin/python3 -c 'import json,os,sys
d=sys.argv[1]
for i in json.load(open(os.path.join(d,"ref.json")))["inputs"]: print("--input"); print(i["name"]+"="+os.path.join(d,i["file"]))' "$dir/ref")
  for dev in cpu cuda vulkan; do
    out=$("$T" run "$tsr" "${inputs[@]}" --device "$dev" --repeat "$repeat" 2>&1)
    rc=$?
    if [ $rc != 0 ]; then
      echo "$name $dev unavailable (exit $rc: $(tail -1 <<<"$out"))"
      continue
    fi
    lat=$(grep -o 'median [0-9.]* ms, min [0-9.]* ms' <<<"$out")
    place=$(grep -o '([0-9.]*%)' <<<"$out" | head -1)
    echo "$name $dev $lat ${place:+on device $place}"
  done
done
echo "--- LeNet training, batch 64, 1 epoch of 8192 Fashion-MNIST samples"
for dev in cpu cuda; do
  "$T" train --arch lenet --epochs 1 --limit 8192 --batch-size 64 --device "$dev" 2>&1 | grep -o 'epoch 1:.*samples/s)' | sed "s/^/tessera $dev: /"
done
/usr/bin/python3 "$root/bench/gpu/torch_lenet.py" --samples 8192 --batch-size 64 || true
