#!/usr/bin/env bash
# Unpacks a Debian source package into DIR, leaving Debian's apt configuration alone: a private
# deb-src sources.list (bookworm, -updates, -security: the +debNuM versions live in the latter two)
# and private state and cache folders under DEPS_DIR/apt. Used for the sources a build needs that
# Debian ships only as source (Dear ImGui's .cpp files, protobuf for wasm); nothing goes into the
# repo. Idempotent: an existing DIR is kept. Needs dpkg-dev (dpkg-source).
# Usage: scripts/debian_source.sh DEPS_DIR PACKAGE VERSION DIR
set -euo pipefail
deps="$1" package="$2" version="$3" dir="$4"
[[ -d "$dir" ]] && exit 0
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
(cd "$deps/src" && apt-get "${aptopts[@]}" source --download-only "$package=$version" -q >/dev/null 2>&1)
(cd "$deps/src" && dpkg-source -x "${package}_${version#*:}.dsc" "$dir" >/dev/null 2>&1)
[[ -d "$dir" ]] || { echo "debian_source.sh: unpacking $package $version into $dir failed" >&2; exit 1; }
