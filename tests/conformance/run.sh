#!/usr/bin/env bash
# Regenerates tests/conformance/results.md (and, with --update, expected_pass.txt) from a release
# build: bash tests/conformance/run.sh [--update]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
LC_ALL=C.UTF-8 /usr/bin/python3 "$root/tests/conformance/generate.py" "$data" >/dev/null 2>&1
"$root/build/release/tests/conformance/tessera_conformance" "$data" "$root/tests/conformance/results.md" \
  "$root/tests/conformance/expected_pass.txt" "$@"
