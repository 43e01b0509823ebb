#!/bin/bash
# tests/fuzz/run.sh SECONDS [HARNESS...] : long fuzzing runs of the libFuzzer harnesses built by
# the asan preset (build/asan/fuzz/), one after the other, SECONDS each (default: all harnesses).
# Corpora grow in build/fuzz-run/corpus/<harness>/ (seeded from tests/fuzz/corpus and the
# regression reproducers); crash/timeout/leak/oom reproducers land in build/fuzz-run/artifacts/
# <harness>/. A harness that stops on a finding is restarted until its time is spent, so one bug
# does not end the run. Prints per harness: executions, crashes, timeouts (hangs, > 10 s per
# input), leaks, out-of-memory (> 2 GiB); exits 1 when anything was found.
# Runs under `nice -n 19` so long runs leave the machine to builds. Environment: TSR_FUZZ_BUILD
# (default build/asan), TSR_FUZZ_JOBS (parallel harnesses, default 1).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds=${1:?usage: run.sh SECONDS [HARNESS...]}
shift
bin="${TSR_FUZZ_BUILD:-$root/build/asan}/fuzz"
out="$root/build/fuzz-run"
if (($#)); then harnesses=("$@"); else
  harnesses=()
  for f in "$bin"/fuzz_*; do [ -x "$f" ] && harnesses+=("$(basename "$f")"); done
fi
if ((${#harnesses[@]} == 0)); then
  echo "run.sh: no harnesses in $bin (cmake --preset asan && cmake --build build/asan --target tsr_fuzzers)"; exit 1
fi

fuzz_one() {
  local h=$1 corpus="$out/corpus/$1" art="$out/artifacts/$1" log="$out/logs/$1.log"
  mkdir -p "$corpus" "$art" "$out/logs"
  : >"$log"
  local seeds=("$root/tests/fuzz/corpus/$h")
  [ -d "$root/tests/fuzz/regressions/$h" ] && seeds+=("$root/tests/fuzz/regressions/$h")
  local end=$((SECONDS + seconds)) execs=0 restarts=0
  while ((SECONDS < end && restarts < 50)); do
    nice -n 19 "$bin/$h" -max_total_time=$((end - SECONDS)) -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$art/" "$corpus" "${seeds[@]}" >"$log.cur" 2>&1
    cat "$log.cur" >>"$log"
    local n
    # Each libFuzzer process prints its own final count (also when it stops on a finding).
    n=$(grep -a -o 'stat::number_of_executed_units: [0-9]*' "$log.cur" | tail -1 | awk '{print $2}')
    # A timeout ends the process without final stats: take its last progress line instead.
    [ -n "$n" ] || n=$(grep -a -oE '^#[0-9]+' "$log.cur" | tail -1 | tr -d '#')
    execs=$((execs + ${n:-0}))
    restarts=$((restarts + 1))
  done
  printf '%-16s %12d %8d %8d %8d %8d\n' "$h" "$execs" \
    "$(find "$art" -name 'crash-*' | wc -l)" "$(find "$art" -name 'timeout-*' | wc -l)" \
    "$(find "$art" -name 'leak-*' | wc -l)" "$(find "$art" -name 'oom-*' | wc -l)"
}

mkdir -p "$out"
printf '%-16s %12s %8s %8s %8s %8s\n' harness executions crashes hangs leaks ooms
export -f fuzz_one
export out root bin seconds
printf '%s\n' "${harnesses[@]}" | xargs -P "${TSR_FUZZ_JOBS:-1}" -I{} bash -c 'fuzz_one {}' | tee "$out/summary.txt"
awk '{e += $2; c += $3 + $4 + $5 + $6} END {printf "total: %d executions, %d findings\n", e, c; exit c > 0}' "$out/summary.txt"
