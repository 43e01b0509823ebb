#!/usr/bin/env bash
# Stripped sizes of the selective minimal runtimes (mobile/selective/) and of the full runtime,
# per build directory: x86-64 (the release preset), aarch64 (the aarch64 preset) or armv7
# (mobile/linux-arm/armv7.cmake).
#   bash mobile/size_report.sh build/release build/aarch64
# A minimal runtime is the shared library libtessera_min_NAME.so: only its op list's OpDefs and
# its ops' kernels for their dtypes, CPU only, exporting the C API alone; built as
# TSR_MIN_OPTIMIZE says (default size: -Os throughout and the size-first kernel set), without
# exceptions, unwind tables or RTTI, segments aligned for pages up to TSR_MIN_PAGE_SIZE (16 KiB).
# libstdc++/libc stay shared and are not counted. On x86-64 its kernels are built for the
# baseline SIMD target alone (AVX2 at the default TSR_X86_64_LEVEL v3), where the full runtime
# carries AVX2 and AVX-512 copies.
# "full" is the C API test program (tests/c_api/c_api_test.c, a complete model runner, about
# 18 KB of it its own code) linked statically with every op family and the gradient rules;
# libtessera.a is the whole static library (importer, script front end and training included),
# stripped of debug info and local symbols.
set -uo pipefail
# "code+data KB" is what the runtime maps from the file: the allocated sections (size(1)'s text
# + data). The file is larger by its headers and by the padding that aligns the writable segment
# (up to the page size the segments are aligned for: 64 KB for the full program on aarch64).
printf '%-10s %-28s %12s %14s\n' arch runtime "stripped KB" "code+data KB"
for dir in "$@"; do
  [[ -d "$dir" ]] || continue
  files=(tests/c_api/tessera_c_api_test:full libtessera_min_ppocr_v4_rec.so:min-ppocr_v4_rec
         libtessera_min_silero_vad_legacy.so:min-silero_vad_legacy libtessera.a:libtessera.a)
  arch=x86-64 strip=strip size=size
  for f in "${files[@]}"; do
    if [[ -f "$dir/${f%%:*}" && "${f%%:*}" != *.a ]]; then
      case "$(file -b "$dir/${f%%:*}")" in
        *aarch64*) arch=aarch64 strip=aarch64-linux-gnu-strip size=aarch64-linux-gnu-size ;;
        *", ARM,"*) arch=armv7 strip=arm-linux-gnueabihf-strip size=arm-linux-gnueabihf-size ;;
      esac
      break
    fi
  done
  tmp="$(mktemp -d)"
  for f in "${files[@]}"; do
    path="$dir/${f%%:*}" label="${f##*:}"
    [[ -f "$path" ]] || { printf '%-10s %-28s %12s\n' "$arch" "$label" "(not built)"; continue; }
    cp "$path" "$tmp/x"
    loaded=""
    if [[ "$label" == libtessera.a ]]; then
      "$strip" --strip-unneeded "$tmp/x"
    else
      "$strip" "$tmp/x"
      loaded="$("$size" "$tmp/x" | awk 'NR == 2 { printf "%.1f", ($1 + $2) / 1024 }')"
    fi
    printf '%-10s %-28s %12s %14s\n' "$arch" "$label" \
      "$(awk -v b="$(stat -c %s "$tmp/x")" 'BEGIN { printf "%.1f", b / 1024 }')" "$loaded"
  done
  rm -rf "$tmp"
done
