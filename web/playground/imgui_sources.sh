#!/usr/bin/env bash
# Fetches Dear ImGui's sources from Debian's `imgui` source package (the version of the installed
# libimgui-dev, which ships headers and a static library but no .cpp files) into
# build/web-deps/src/imgui-<version>/ (git-ignored; nothing is copied into the repo).
# Debian's apt configuration is left alone: a private deb-src sources.list and private state and
# cache folders (shared with web/protobuf_wasm.sh). Idempotent: prints the source folder on its
# last line. Needs dpkg-dev (dpkg-source).
# Usage: web/playground/imgui_sources.sh [DEPS_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
deps="${1:-$root/build/web-deps}"
version="$(dpkg-query -W -f='${source:Version}' libimgui-dev)"   # e.g. 1.86+ds-1 (not the +bN binNMU)
upstream="${version%%-*}"
src="$deps/src/imgui-${upstream%%+*}"
if [[ -f "$src/imgui.cpp" && -f "$src/backends/imgui_impl_opengl3.cpp" ]]; then echo "$src"; exit 0; fi

mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial" "$deps/src"
{
  echo "deb-src http://deb.debian.org/debian bookworm main"
  echo "deb-src http://deb.debian.org/debian bookworm-updates main"
  echo "deb-src http://deb.debian.org/debian-security bookworm-security main"
} >"$deps/apt/sources.list"
aptopts=(-o "Dir::Etc::sourcelist=$deps/apt/sources.list" -o Dir::Etc::sourceparts=-
         -o "Dir::State::Lists=$deps/apt/lists" -o "Dir::Cache=$deps/apt/cache"
         -o APT::Get::List-Cleanup=0)
apt-get "${aptopts[@]}" update -q >/dev/null
(cd "$deps/src" && apt-get "${aptopts[@]}" source --download-only "imgui=$version" -q >/dev/null 2>&1)
rm -rf "$src"
(cd "$deps/src" && dpkg-source -x "imgui_${version}.dsc" "$src" >/dev/null 2>&1)
[[ -f "$src/imgui.cpp" ]] || { echo "imgui_sources.sh: imgui.cpp missing after unpacking imgui_${version}" >&2; exit 1; }
echo "$src"
