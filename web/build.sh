#!/usr/bin/env bash
# Builds the tessera-web package into web/dist/: tessera.mjs (the JS API), tessera.d.ts,
# tessera-core.mjs (Emscripten's loader) and tessera.wasm (core + CPU backend with WASM SIMD128 +
# script front end + ONNX importer over protobuf-lite), and the pthreads build of the same:
# tessera-threads-core.mjs, tessera-threads-core.worker.js (its Worker script), package.json (so
# node reads that script as CommonJS) and tessera-threads.wasm. Installs what it needs first
# (scripts/install_deps.sh), builds protobuf-lite for wasm once per flavor (web/protobuf_wasm.sh,
# cached in build/web-deps/), reuses the `wasm` preset's build directory (build/wasm) and builds
# the `wasm-threads` preset (build/wasm-threads: everything again with -pthread, only the
# tessera_web_threads target). Also builds the playground (web/playground/: Dear ImGui on WebGL2,
# ImGui sources fetched by web/playground/imgui_sources.sh) into web/dist/playground/.
# Then `cd web && npm pack` makes the tarball a page installs.
# Usage: web/build.sh        Environment: TSR_JOBS (default 2), TSR_SKIP_DEPS=1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [[ "${TSR_SKIP_DEPS:-0}" != 1 ]]; then bash scripts/install_deps.sh; fi
export NODE_PATH=/usr/share/nodejs
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake --preset wasm "${launcher[@]}"
cmake --build build/wasm -j"${TSR_JOBS:-2}" --target tessera_web tessera_playground
cmake --preset wasm-threads "${launcher[@]}"
cmake --build build/wasm-threads -j"${TSR_JOBS:-2}" --target tessera_web_threads
for f in web/dist/*.wasm web/dist/playground/*.wasm; do
  echo "$f: $(stat -c %s "$f") bytes, gzip -9 $(gzip -9c "$f" | wc -c) bytes"
done
