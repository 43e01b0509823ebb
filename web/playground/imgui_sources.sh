#!/usr/bin/env bash
# Fetches Dear ImGui's sources from Debian's `imgui` source package (the version of the installed
# libimgui-dev, which ships headers and a static library but no .cpp files) into
# build/web-deps/src/imgui-<version>/ (git-ignored; nothing is copied into the repo).
# scripts/debian_source.sh fetches it without touching Debian's apt configuration. Idempotent: prints the source folder on its
# last line. Needs dpkg-dev (dpkg-source).
# Usage: web/playground/imgui_sources.sh [DEPS_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deps="${1:-$root/build/web-deps}"
version="$(dpkg-query -W -f='${source:Version}' libimgui-dev)"   # e.g. 1.86+ds-1 (not the +bN binNMU)
upstream="${version%%-*}"
src="$deps/src/imgui-${upstream%%+*}"
if [[ -f "$src/imgui.cpp" && -f "$src/backends/imgui_impl_opengl3.cpp" ]]; then echo "$src"; exit 0; fi

rm -rf "$src"
bash "$root/scripts/debian_source.sh" "$deps" imgui "$version" "$src"
[[ -f "$src/imgui.cpp" ]] || { echo "imgui_sources.sh: imgui.cpp missing after unpacking imgui_${version}" >&2; exit 1; }
echo "$src"
