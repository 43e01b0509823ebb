#!/usr/bin/env bash
# Installs a build tree's library package (component tessera_dev) into a fresh prefix, then builds tests/install/consumer from that prefix
# both ways (CMake find_package(Tessera) -> Tessera::tessera, and pkg-config tessera) and runs
# both binaries. Usage: consumer_test.sh BUILD_DIR WORK_DIR [MODEL.tsr]
set -euo pipefail
build="$1" work="$2" model="${3:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$work"
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" --component tessera_dev >"$work.install.log" 2>&1 || { cat "$work.install.log"; exit 1; }
for f in libtessera.a tessera_c.h TesseraConfig.cmake tessera.pc; do
  [[ -n "$(find "$prefix" -name "$f")" ]] || { echo "consumer_test: $f was not installed"; exit 1; }
done
pc_dir="$(dirname "$(find "$prefix" -name tessera.pc | head -1)")"
echo "installed: $(find "$prefix" -name 'libtessera.a') $pc_dir/tessera.pc $(find "$prefix" -name TesseraConfig.cmake)"

echo "== find_package(Tessera)"
cmake -S "$here/consumer" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/cmake-build" >/dev/null
"$work/cmake-build/consumer" ${model:+"$model"}
# Dynamic dims 512: Silero VAD's (the model CTest passes) batch dims agree and its STFT gets a window.
"$work/cmake-build/consumer_cpp" ${model:+"$model" 512}

echo "== pkg-config tessera: $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs tessera)"
# shellcheck disable=SC2046
cc -std=c11 -o "$work/consumer-pc" "$here/consumer/consumer.c" $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs tessera)
"$work/consumer-pc" ${model:+"$model"}
echo "consumer_test: both consumers built from $prefix and ran"
