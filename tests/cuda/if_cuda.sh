#!/bin/bash
# if_cuda.sh TESSERA PROBE_MODEL COMMAND...: exits 77 (CTest: skipped) when this machine has no
# CUDA device (the tessera CLI, asked to place PROBE_MODEL on cuda, exits 8 with "no CUDA
# device"), else runs COMMAND and exits with its status. Any other probe failure fails the test.
tessera=$1; probe=$2; shift 2
out=$("$tessera" inspect "$probe" --placement cuda 2>&1); rc=$?
if [ "$rc" = 8 ] && grep -qF "no CUDA device" <<<"$out"; then
  echo "SKIP: $out"
  exit 77
fi
if [ "$rc" != 0 ]; then
  echo "FAIL: probe exited $rc: $out" >&2
  exit 1
fi
exec "$@"
