#!/usr/bin/env bash
# Stripped sizes of the selective minimal runtimes (mobile/selective/) and of the full runtime,
# per build directory: x86-64 (the release preset) and aarch64 (the aarch64 preset).
#   bash mobile/size_report.sh build/release build/aarch64
# Each runtime is a complete model runner (the C API test program tests/c_api/c_api_test.c, about
# 18 KB of it with its .npy reader) linked statically against Tessera; libstdc++/libc stay shared
# and are not counted. A minimal runtime holds only its op list's OpDefs and its ops' kernels for
# their dtypes, CPU only, its non-kernel code compiled with -Os and without exceptions or unwind
# tables; on x86-64 its kernels are built for the baseline SIMD target alone (AVX2 at the default
# TSR_X86_64_LEVEL v3), where the full runtime carries AVX2 and AVX-512 copies.
# "full" is the same program with every op family and the gradient rules (tessera_c_api_test);
# libtessera.a is the whole static library (importer, script front end and training excluded
# from neither), stripped of debug info and local symbols.
set -uo pipefail
# "code+data KB" is what the runtime maps from the file: the allocated sections (size(1)'s text
# + data). The file is larger by its headers and by the padding that aligns the writable segment:
# up to 64 KB on aarch64, whose page size may be 64 KB, so that files there grow in steps.
printf '%-10s %-28s %12s %14s\n' arch runtime "stripped KB" "code+data KB"
for dir in "$@"; do
  [[ -d "$dir" ]] || continue
  files=(tests/c_api/tessera_c_api_test:full tessera_min_ppocr_v4_rec:min-ppocr_v4_rec
         tessera_min_silero_vad_legacy:min-silero_vad_legacy libtessera.a:libtessera.a)
  arch=x86-64 strip=strip size=size
  for f in "${files[@]}"; do
    if [[ -f "$dir/${f%%:*}" && "${f%%:*}" != *.a ]]; then
      if file -b "$dir/${f%%:*}" | grep -q aarch64; then
        arch=aarch64 strip=aarch64-linux-gnu-strip size=aarch64-linux-gnu-size
      fi
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
