#!/usr/bin/env bash
# check_mnv2_step_alloc.sh TESSERA ALLOC_TEST WORKDIR: steady-state heap allocations of a
# MobileNetV2-0.35 training step (BatchNormalization in training mode and its gradient, depthwise
# convs, ReLU6): bench/train/torch_train.py exports the model, `tessera prepare-training` makes the
# training model, and tessera_train_step_alloc_test counts 2 calls of each Trainer step after 2
# warm-up calls at 1 and 2 threads (batch 4, 64x64): 0 operator new and 0 system allocations.
# About 2 s. Skipped (77) without the dataset or torch/onnx.
set -euo pipefail
tessera=$1 alloc_test=$2 dir=$3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[[ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]] || { echo "SKIP: no dataset-fashion-mnist"; exit 77; }
/usr/bin/python3 -c "import torch, onnx" 2>/dev/null || { echo "SKIP: python3 lacks torch/onnx"; exit 77; }
rm -rf "$dir" && mkdir -p "$dir"
/usr/bin/python3 "$root/bench/train/torch_train.py" --arch mnv2 --limit 8 --export "$dir" 2>/dev/null
"$tessera" prepare-training "$dir/mnv2.onnx" -o "$dir/train.tsr" >/dev/null
"$alloc_test" --model "$dir/train.tsr" --threads 1,2 --warmup 2 --steps 2 --batch 4
