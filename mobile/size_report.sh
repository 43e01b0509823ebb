#!/usr/bin/env bash
# Stripped sizes of the selective minimal runtimes (cmake/selective.cmake) and of the full
# runtime, per build directory: x86-64 (the release preset) and aarch64 (the aarch64 preset).
#   bash mobile/size_report.sh build/release build/aarch64
# Each runtime is a complete model runner (the C API test program, ~15 KB of it) linked
# statically against libtessera.a; libstdc++/libc stay shared and are not counted.
# "full" is the same program with every op family and the gradient rules (tessera_c_api_test);
# libtessera.a is the whole static library (importer, script front end and training excluded
# from neither), stripped of debug info and local symbols.
set -uo pipefail
printf '%-10s %-28s %12s\n' arch runtime "stripped KB"
for dir in "$@"; do
  [[ -d "$dir" ]] || continue
  if file -b "$dir/tests/c_api/tessera_c_api_test" 2>/dev/null | grep -q aarch64; then
    arch=aarch64 strip=aarch64-linux-gnu-strip
  else
    arch=x86-64 strip=strip
  fi
  tmp="$(mktemp -d)"
  for f in tests/c_api/tessera_c_api_test:full tessera_min_ppocr_v4_rec:min-ppocr_v4_rec \
           tessera_min_silero_vad_legacy:min-silero_vad_legacy libtessera.a:libtessera.a; do
    path="$dir/${f%%:*}" label="${f##*:}"
    [[ -f "$path" ]] || { printf '%-10s %-28s %12s\n' "$arch" "$label" "(not built)"; continue; }
    cp "$path" "$tmp/x"
    if [[ "$label" == libtessera.a ]]; then "$strip" --strip-unneeded "$tmp/x"; else "$strip" "$tmp/x"; fi
    printf '%-10s %-28s %12s\n' "$arch" "$label" "$(awk -v b="$(stat -c %s "$tmp/x")" 'BEGIN { printf "%.1f", b / 1024 }')"
  done
  rm -rf "$tmp"
done
