#!/usr/bin/env bash
# Installs everything the build, the tests, the demo and the benchmarks use (clang with
# libclang-rt-14-dev: the asan/tsan presets and the libFuzzer harnesses; llvm: llvm-symbolizer
# for sanitizer stack traces; python3-torch and python3-torchvision: the model zoo, bench/zoo;
# libopenblas-dev: bench/gemm's reference):
#  - Debian packages (apt-get, noninteractive; as root, or through sudo otherwise), skipped
#    quickly when all of them are already installed;
#  - onnxruntime-node (the reference runtime of tests/models and bench/), pinned by
#    tests/models/package-lock.json, into tests/models/node_modules (skipped when present).
# Usage: scripts/install_deps.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  cmake ninja-build g++ flatbuffers-compiler libflatbuffers-dev catch2 libhwy-dev
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-numpy libstb-dev
  emscripten nodejs npm imagemagick fonts-dejavu-core python3-pil libcli11-dev zlib1g-dev
  dataset-fashion-mnist dpkg-dev chromium
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user-static pkg-config default-jdk-headless
  clang libclang-rt-14-dev llvm time python3-torch python3-torchvision libopenblas-dev
  libimgui-dev libglfw3-dev libgl1-mesa-dri xvfb
)

missing=()
for p in "${packages[@]}"; do
  # A node from another source (e.g. NodeSource's nodejs, which bundles npm and conflicts with
  # Debian's npm package) is fine as long as the commands exist.
  if [[ $p == nodejs ]] && command -v node >/dev/null; then continue; fi
  if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "install_deps.sh: apt-get install ${missing[*]}"
  sudo=""
  if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "install_deps.sh: Debian packages already installed"
fi

# onnxruntime-node: its postinstall step would download CUDA files; the CPU build ships inside
# the package, so skip that step.
ort_dir="$root/tests/models"
if [[ -f "$ort_dir/node_modules/onnxruntime-node/package.json" ]] &&
   grep -q '"version": "1.30.0"' "$ort_dir/node_modules/onnxruntime-node/package.json"; then
  echo "install_deps.sh: onnxruntime-node 1.30.0 already installed"
else
  echo "install_deps.sh: npm ci (onnxruntime-node) in tests/models"
  (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund)
fi

# playwright-core (drives Debian's chromium in tests/web; never a downloaded browser), pinned by
# web/package-lock.json, into web/node_modules.
if [[ -f "$root/web/node_modules/playwright-core/package.json" ]]; then
  echo "install_deps.sh: web/node_modules already installed"
else
  echo "install_deps.sh: npm ci (playwright-core) in web"
  (cd "$root/web" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
fi
