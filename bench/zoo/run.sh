#!/usr/bin/env bash
# Times the model zoo (bench/zoo/export.py) with bench/latency.js: tessera against onnxruntime-node
# in alternating rounds, each runtime in its own process, peak RSS, at the given thread counts.
# Exports the zoo first when ZOO_DIR/manifest.json is missing; prints the machine's core-to-core latency
# (bench/zoo/core_latency.cpp) first, since the two-thread ratios depend on it, and the memory read
# bandwidth (bench/zoo/mem_bandwidth.cpp), which bounds the decode step; bench/zoo/roofline.py sets a
# --json result against the machine's peak.
# Usage: bench/zoo/run.sh [latency.js options: --threads 1,2 --rounds 3 --models a,b
#                          --baseline OTHER_TESSERA --json OUT.json ...]
# Environment: ZOO_DIR (default build/zoo), ZOO_SMALL=1 (export the reduced-size zoo),
# ZOO_Q8=1 (time the q8 zoo instead: bench/zoo/quantize.py writes ZOO_Q8_DIR, default build/zoo_q8,
# with every model in f32 and as <name>_q8, quantized by `tessera quantize`; TESSERA names the CLI).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
zoo="${ZOO_DIR:-$root/build/zoo}"
if [[ ! -f "$zoo/manifest.json" ]]; then
  /usr/bin/python3 "$root/bench/zoo/export.py" --out "$zoo" ${ZOO_SMALL:+--small}
fi
if [[ -n "${ZOO_Q8:-}" ]]; then
  q8="${ZOO_Q8_DIR:-$root/build/zoo_q8}"
  if [[ ! -f "$q8/manifest.json" ]]; then
    /usr/bin/python3 "$root/bench/zoo/quantize.py" --tessera "${TESSERA:-$root/build/release/bin/tessera}" \
      --zoo "$zoo" --out "$q8" --no-accuracy
  fi
  zoo="$q8"
fi
# The two vCPUs' core-to-core latency, printed with the figures: two-thread ratios depend on it.
mkdir -p "$root/build/bench"
c++ -O2 -pthread "$root/bench/zoo/core_latency.cpp" -o "$root/build/bench/core_latency"
# Memory read bandwidth at a decode step's weight size and far past the caches (bench/zoo/roofline.py).
c++ -O3 -march=native -pthread "$root/bench/zoo/mem_bandwidth.cpp" -o "$root/build/bench/mem_bandwidth"
"$root/build/bench/mem_bandwidth" 64
"$root/build/bench/mem_bandwidth" 512
"$root/build/bench/core_latency"
# Memory read bandwidth at a decode step's weight size and far past the caches (bench/zoo/roofline.py).
c++ -O3 -march=native -pthread "$root/bench/zoo/mem_bandwidth.cpp" -o "$root/build/bench/mem_bandwidth"
"$root/build/bench/mem_bandwidth" 64
"$root/build/bench/mem_bandwidth" 512
exec /usr/bin/node "$root/bench/latency.js" --manifest "$zoo/manifest.json" --model-dir "$zoo" \
  --work-dir "$root/build/bench/zoo" "$@"
