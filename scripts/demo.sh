#!/usr/bin/env bash
# Demo: builds tessera, fetches the pinned PP-OCRv4 recognizer, converts it to .tsr and reads
# the text of examples/ocr/hello.png with it.
# Usage: bash scripts/demo.sh        (TSR_JOBS sets the build parallelism, default 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${TSR_JOBS:-2}"

bash scripts/install_deps.sh
cmake --preset release -DTSR_BUILD_TOOLS=ON >/dev/null
cmake --build build/release -j"$jobs"
bash third_party/models/fetch.sh

# Executables: build/release/bin/ (or next to their CMakeLists when a target sets no output dir).
find_exe() { find build/release -type f -name "$1" -perm -u+x | sort | head -1; }
tessera="$(find_exe tessera)"
ocr="$(find_exe tessera-ocr)"
[[ -n $tessera ]] || { echo "demo.sh: the tessera CLI was not built" >&2; exit 1; }
[[ -n $ocr ]] || { echo "demo.sh: tessera-ocr (examples/ocr) was not built" >&2; exit 1; }
model=third_party/models/ch_PP-OCRv4_rec_infer.tsr
if [[ ! -f $model || third_party/models/ch_PP-OCRv4_rec_infer.onnx -nt $model || $tessera -nt $model ]]; then
  "$tessera" convert third_party/models/ch_PP-OCRv4_rec_infer.onnx -o "$model"
fi

echo "---- tessera-ocr examples/ocr/hello.png"
"$ocr" examples/ocr/hello.png
