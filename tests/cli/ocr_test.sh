#!/bin/bash
# ocr_test.sh OCR TESSERA IMAGEMAGICK MODEL_TSR MODEL_ONNX KEYS WORKDIR [BUNDLED_HELLO_PNG]
# Renders five lines of ordinary English/digits with ImageMagick and checks that tessera-ocr
# reads each exactly (and the bundled examples/ocr/hello.png as "Hello Tessera 2026"). Exits 77 (skipped) when the model, keys or ImageMagick are unavailable.
# When only the ONNX model exists, it is converted with `tessera convert` first; a conversion
# failure of any kind (exit 5 included: an op the importer lacks) fails the test.
ocr=$1; tessera=$2; magick=$3; model=$4; onnx=$5; keys=$6; work=$7; hello=$8
mkdir -p "$work" || exit 1
if [ -z "$magick" ] || ! "$magick" -version 2>/dev/null | grep -q ImageMagick; then
  echo "SKIP: ImageMagick not found"; exit 77
fi
if [ ! -f "$keys" ]; then echo "SKIP: keys file $keys not found"; exit 77; fi
if [ ! -f "$model" ]; then
  if [ ! -f "$onnx" ]; then echo "SKIP: neither $model nor $onnx exists"; exit 77; fi
  model=$work/ch_PP-OCRv4_rec.tsr
  if [ ! -f "$model" ] || [ "$onnx" -nt "$model" ]; then
    "$tessera" convert "$onnx" -o "$model"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: could not convert $onnx (exit $rc)"; exit 1; fi
  fi
fi
lines=(
  "Hello Tessera 2026"
  "The quick brown fox"
  "Invoice number 48213"
  "Open from 9 to 17"
  "Total 1250 dollars"
)
fail=0
for i in "${!lines[@]}"; do
  img=$work/line_$i.png
  "$magick" -background white -fill black -font DejaVu-Sans -pointsize 32 \
    label:"${lines[$i]}" -bordercolor white -border 8 "$img" || exit 1
  got=$("$ocr" --model "$model" --keys "$keys" "$img")
  rc=$?
  if [ $rc -ne 0 ] || [ "$got" != "${lines[$i]}" ]; then
    echo "FAIL: expected \"${lines[$i]}\", got \"$got\" (exit $rc)"
    fail=1
  else
    echo "ok: $got"
  fi
done
if [ -n "$hello" ]; then
  got=$("$ocr" --model "$model" --keys "$keys" "$hello")
  if [ "$got" != "Hello Tessera 2026" ]; then echo "FAIL: $hello read as \"$got\""; fail=1; else echo "ok: $got"; fi
fi
exit $fail
