#!/usr/bin/env bash
# Demo: builds what the demo runs (the tessera CLI and tessera-ocr, CPU only, in build/demo:
# the `demo` preset), fetches the pinned PP-OCRv4 recognizer, converts it to .tsr and reads the
# text of examples/ocr/hello.png with it. The test suite (scripts/test.sh) builds the rest.
# Usage: bash scripts/demo.sh        (TSR_JOBS sets the build parallelism, default 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${TSR_JOBS:-2}"
t0=$SECONDS

bash scripts/install_deps.sh
cmake --preset demo >/dev/null
cmake --build --preset demo -j"$jobs"
bash third_party/models/fetch.sh ch_PP-OCRv4_rec_infer.onnx ppocr_keys_v1.txt

tessera=build/demo/bin/tessera
ocr=build/demo/bin/tessera-ocr
[[ -x $tessera ]] || { echo "demo.sh: the tessera CLI was not built" >&2; exit 1; }
[[ -x $ocr ]] || { echo "demo.sh: tessera-ocr (examples/ocr) was not built" >&2; exit 1; }
model=third_party/models/ch_PP-OCRv4_rec_infer.tsr
if [[ ! -f $model || third_party/models/ch_PP-OCRv4_rec_infer.onnx -nt $model || $tessera -nt $model ]]; then
  "$tessera" convert third_party/models/ch_PP-OCRv4_rec_infer.onnx -o "$model"
fi

echo "---- tessera-ocr examples/ocr/hello.png"
"$ocr" examples/ocr/hello.png
echo "demo.sh: done in $((SECONDS - t0)) s"
