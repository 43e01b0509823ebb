#!/bin/bash
# smoke.sh HARNESS SECONDS WORKDIR CORPUS_DIR... : runs a libFuzzer harness over the committed
# corpora (seeds and bug reproducers) and then fuzzes for SECONDS. Fails on any crash, sanitizer
# report, leak, timeout (10 s per input) or out-of-memory (2 GiB). The mutation seed is fixed
# (TSR_FUZZ_SEED, default 1) so that a CI run explores the same inputs each time: a finding is a
# bug to fix and keep as a reproducer, not a flaky test; tests/fuzz/run.sh fuzzes with fresh seeds.
harness=$1; seconds=$2; work=$3; shift 3
rm -rf "$work" && mkdir -p "$work/new" "$work/artifacts" || exit 1
"$harness" -seed="${TSR_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$work/artifacts/" "$work/new" "$@" 2>"$work/log"
rc=$?
grep -E "^(INFO: seed corpus|#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" "$work/log"
if [ $rc -ne 0 ]; then
  tail -60 "$work/log"
  echo "FAIL: $(basename "$harness") exit $rc; reproducer(s): $(ls "$work/artifacts")"
  exit 1
fi
