#!/usr/bin/env bash
# Serves web/ on localhost (COOP/COEP headers on, so the threads build can run) and prints the
# URL; the pinned models (third_party/models) are mounted at /models for the OCR page, and its
# sample pages (rendered by examples/ocr/make_samples.py into build/ocr-samples) at /samples.
# Builds the package first when web/dist is missing.
# Usage: scripts/serve_web.sh [PORT]   (default 8080; Ctrl-C stops it)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
port="${1:-8080}"
if [[ ! -f "$root/web/dist/tessera.mjs" ]]; then bash "$root/web/build.sh"; fi
if [[ ! -f "$root/third_party/models/ch_PP-OCRv4_rec_infer.onnx" ]]; then bash "$root/third_party/models/fetch.sh"; fi
if [[ ! -f "$root/build/ocr-samples/columns.png" ]]; then
  /usr/bin/python3 "$root/examples/ocr/make_samples.py" "$root/build/ocr-samples" ||
    echo "serve_web.sh: no OCR sample pages (python3-pil, fonts-dejavu-core); the page's sample buttons will say so" >&2
fi
exec node "$root/web/tools/serve.mjs" --root "$root/web" --mount "/models=$root/third_party/models" \
  --mount "/samples=$root/build/ocr-samples" --port "$port"
