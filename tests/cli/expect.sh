#!/bin/bash
# expect.sh RC PATTERN COMMAND...: runs COMMAND, fails unless it exits with RC and its combined
# stdout+stderr contains PATTERN (a fixed string; empty = no check).
want_rc=$1; pattern=$2; shift 2
out=$("$@" 2>&1); rc=$?
echo "$out"
if [ "$rc" != "$want_rc" ]; then
  echo "FAIL: exit code $rc, expected $want_rc: $*" >&2
  exit 1
fi
if [ -n "$pattern" ] && ! grep -qF -- "$pattern" <<<"$out"; then
  echo "FAIL: output lacks \"$pattern\": $*" >&2
  exit 1
fi
exit 0
