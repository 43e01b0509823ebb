#!/usr/bin/env bash
# Builds protobuf-lite for WebAssembly from Debian's protobuf source package (the version of the
# installed protoc, so generated code and runtime match) into build/web-deps/ (git-ignored).
# With `pthread` it builds the -pthread flavor (for tessera-threads.wasm, whose shared memory needs
# objects compiled with atomics) beside the plain one.
# Idempotent: a second run with the library present does nothing. Nothing is copied into the repo.
# scripts/debian_source.sh fetches the sources without touching Debian's apt configuration.
# Needs dpkg-dev (dpkg-source) and emscripten.
# Usage: web/protobuf_wasm.sh [DEPS_DIR] [pthread]   prints the install prefix on its last line.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="${1:-$root/build/web-deps}"
version="$(dpkg-query -W -f='${Version}' libprotobuf-dev)"     # e.g. 3.21.12-3+deb12u1
upstream="${version%%-*}"
flavor=""; flags="-msimd128"
if [[ "${2:-}" == pthread ]]; then flavor="-pthread"; flags="-msimd128 -pthread"; fi
prefix="$deps/protobuf-$upstream-wasm$flavor"
build="$deps/build-protobuf$flavor"
if [[ -f "$prefix/lib/libprotobuf-lite.a" ]]; then echo "$prefix"; exit 0; fi

src="$deps/src/protobuf-$upstream"
bash "$root/scripts/debian_source.sh" "$deps" protobuf "$version" "$src"
export NODE_PATH=/usr/share/nodejs
emcmake cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel \
  -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_PROTOC_BINARIES=OFF \
  -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
cmake --build "$build" -j"${TSR_JOBS:-2}" --target libprotobuf-lite >/dev/null
mkdir -p "$prefix/lib" "$prefix/include"
cp "$build/libprotobuf-lite.a" "$prefix/lib/"
# The headers: the source tree's (the lite runtime needs only those under google/protobuf).
cp -r "$src/src/google" "$prefix/include/"
echo "$prefix"
