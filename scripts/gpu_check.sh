#!/bin/bash
# scripts/gpu_check.sh [BUILD_DIR]: the CUDA backend's checks for a machine with an NVIDIA GPU.
# Needs a release build with the CUDA backend (cmake --preset release; nvcc found) and the pinned
# models (bash third_party/models/fetch.sh). Runs, in order:
#   1. the op harness: every CUDA kernel against the CPU kernel on random shapes (tests/vulkan);
#   2. the real models of tests/models with --device cuda against onnxruntime's outputs;
#   3. one LeNet training epoch with --device cuda against the same epoch on the CPU;
#   4. the benchmark (bench/gpu/bench.sh).
# Exits non-zero when any check fails; on a machine without a CUDA device the CTest checks report
# "skipped" (exit 77) and the script says so and exits 2.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
cd "$root"
[ -x "$build/bin/tessera" ] || { echo "gpu_check: no tessera CLI in $build; build the release preset first"; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
log=$(mktemp)
ctest --test-dir "$build" -L cuda --output-on-failure 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if grep -q "Not Run\|Skipped" "$log" && grep -q "SKIP: .*no CUDA device" "$log"; then
  echo "gpu_check: no CUDA device on this machine: the GPU checks were skipped"
  exit 2
fi
[ "$rc" = 0 ] || { echo "gpu_check: FAILED (ctest exit $rc)"; exit 1; }
bash "$root/bench/gpu/bench.sh" "$build" 50
echo "gpu_check: PASS"
