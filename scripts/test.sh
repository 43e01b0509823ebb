#!/usr/bin/env bash
# The test command (.ci/run calls exactly `bash scripts/test.sh`):
#   1. installs dependencies (scripts/install_deps.sh) and fetches the pinned models;
#   2. release: configure + build everything (tools on) + ctest: unit, tool and real-model tests;
#   3. asan:    clang Debug + ASan/UBSan with libFuzzer coverage; builds tessera_unit_tests, the
#               C API test and the fuzz harnesses (tests/fuzz) in that one build; runs the unit
#               and C API tests and each harness's smoke test (its corpora, then
#               TSR_FUZZ_SMOKE_SECONDS of fuzzing). The minimal runtimes are not built here: their
#               kernels and C API are the library's, already under ASan, and they run on their
#               models in the release, aarch64 and armv7 stages (building them here cost ~250 s
#               of CPU);
#   4. tsan:    clang + ThreadSanitizer (-O1, line tables: a third less compile time than -O2 -g): the stress test, and the unit tests of what runs on
#               several threads (thread pool, re-entrant Plan, inter-op, threaded Conv, SIMD
#               dispatch), built as their own executable (tessera_thread_tests);
#   5. wasm:    Emscripten build of tessera_unit_tests (its target-dependent half: kernels, I/O,
#               executor; tests/CMakeLists.txt), run under node through ctest.
#   6. web:     the browser package (web/: tessera_web in the same build/wasm, so core objects
#               are shared; tessera_web_threads, the pthreads build, in build/wasm-threads, which
#               compiles core again with -pthread), its node suites (web/test/) and the headless
#               Chromium test (tests/web/), counted from node --test's TAP summary.
#   7. playground: the Dear ImGui playground for the browser (tessera_playground in build/wasm,
#               sharing the web stage's objects) driven in headless Chromium
#               (tests/web/playground.browser.mjs; the Models panel's WebGPU switch on
#               SwiftShader's WebGPU adapter too), and the native tessera-playground (in
#               build/release, -DTSR_PLAYGROUND_NATIVE=ON) smoke-run under xvfb-run.
#   8. aarch64: cross build (g++-aarch64-linux-gnu) of the unit tests (the wasm stage's half), the C API test and the
#               selective minimal runtimes; runs them under qemu-aarch64-static on real models
#               against onnxruntime's x86 outputs (needs the release stage's tessera CLI); prints
#               the stripped sizes of the minimal and full runtimes on x86-64 and aarch64.
#   9. armv7:   cross build (g++-arm-linux-gnueabihf) of the minimal runtimes alone, run under
#               qemu-arm-static on their models against onnxruntime's outputs; their sizes.
# Prints per-stage timings and a final line "N passed, N failed" over the three ctest runs (a
# stage that fails to configure or build counts as one failure). Exit status: 0 when nothing
# failed, 1 otherwise.
#
# Environment: TSR_JOBS (default 2), TSR_STAGES (default: every stage above),
#              TSR_SKIP_DEPS=1 to skip install_deps.sh and fetch.sh.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${TSR_JOBS:-2}"
stages="${TSR_STAGES:-release asan tsan wasm web playground aarch64 armv7}"
logdir="$root/build/test-logs"
mkdir -p "$logdir"

total_pass=0
total_fail=0
total_skip=0
summary=()
t_start=$SECONDS

stage_time() { echo "$(( SECONDS - $1 ))s"; }

if [[ "${TSR_SKIP_DEPS:-0}" != 1 ]]; then
  t=$SECONDS
  bash scripts/install_deps.sh || { echo "test.sh: install_deps.sh failed"; echo "0 passed, 1 failed"; exit 1; }
  bash third_party/models/fetch.sh || { echo "test.sh: fetch.sh failed"; echo "0 passed, 1 failed"; exit 1; }
  summary+=("deps+models: $(stage_time $t)")
fi

# Counts passed/failed/skipped tests from a CTest JUnit file; prints "P F S".
count_junit() {
  /usr/bin/python3 - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
except Exception:
    print("0 1 0"); sys.exit()
p = f = s = 0
for c in cases:
    st = c.get("status", "")
    if st == "run" and c.find("failure") is None and c.find("error") is None:
        p += 1
    elif st in ("notrun", "disabled") or c.find("skipped") is not None:
        s += 1
    else:
        f += 1
print(p, f, s)
PY
}

# run_stage NAME PRESET BUILD_ARGS CTEST_ARGS
run_stage() {
  local name="$1" preset="$2" build_args="$3" ctest_args="$4"
  local bdir="$root/build/$preset" t=$SECONDS t1 t2
  echo "==== [$name] configure"
  if ! cmake --preset "$preset" >"$logdir/$name-configure.log" 2>&1; then
    tail -40 "$logdir/$name-configure.log"
    echo "==== [$name] configure FAILED (log: $logdir/$name-configure.log)"
    total_fail=$((total_fail + 1)); summary+=("$name: configure failed after $(stage_time $t)"); return
  fi
  echo "==== [$name] build $build_args"
  t1=$SECONDS
  # CPU seconds (user + sys) show the cost of the build independently of machine load.
  local tf="$logdir/$name-build.time"
  # shellcheck disable=SC2086
  if ! { TIMEFORMAT='%U %S'; time cmake --build "$bdir" -j"$jobs" $build_args >"$logdir/$name-build.log" 2>&1; } 2>"$tf"; then
    grep -E -A12 "error|FAILED" "$logdir/$name-build.log" | head -80
    echo "==== [$name] build FAILED (log: $logdir/$name-build.log)"
    total_fail=$((total_fail + 1)); summary+=("$name: build failed after $(stage_time $t)"); return
  fi
  local build_s=$((SECONDS - t1)) build_cpu
  build_cpu="$(awk '{ printf "%d", $1 + $2 }' "$tf" 2>/dev/null)"
  echo "==== [$name] ctest $ctest_args"
  t2=$SECONDS
  local junit="$logdir/$name-junit.xml"
  rm -f "$bdir"/tests/models/*/compare.txt
  rm -f "$junit"
  # shellcheck disable=SC2086
  ctest --test-dir "$bdir" -j"$jobs" --output-on-failure --output-junit "$junit" $ctest_args 2>&1 |
    tee "$logdir/$name-ctest.log" | grep -vE "^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed" || true
  local p f s
  if [[ -f "$junit" ]]; then read -r p f s < <(count_junit "$junit"); else p=0; f=1; s=0; fi
  if ((p + f + s == 0)); then echo "==== [$name] no tests ran: counted as a failure"; f=1; fi
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
  summary+=("$name: $p passed, $f failed, $s skipped; configure $((t1 - t))s, build ${build_s}s (cpu ${build_cpu:-?}s), ctest $((SECONDS - t2))s")
}

# web: builds web/dist (tessera_web in build/wasm, tessera_web_threads in build/wasm-threads)
# and runs `node --test` over the package's suites.
run_web_stage() {
  local t=$SECONDS t1 t2 tt log="$logdir/web.log" tf="$logdir/web-build.time" tft="$logdir/web-threads-build.time"
  export NODE_PATH=/usr/share/nodejs
  echo "==== [web] configure + build tessera_web, then tessera_web_threads (wasm-threads)"
  if ! { cmake --preset wasm >"$logdir/web-configure.log" 2>&1 &&
         { TIMEFORMAT='%U %S'; time cmake --build "$root/build/wasm" -j"$jobs" --target tessera_web >"$logdir/web-build.log" 2>&1; } 2>"$tf" &&
         tt=$SECONDS &&
         { TIMEFORMAT='%U %S'; time { cmake --preset wasm-threads >>"$logdir/web-configure.log" 2>&1 &&
             cmake --build "$root/build/wasm-threads" -j"$jobs" --target tessera_web_threads >>"$logdir/web-build.log" 2>&1; }; } 2>"$tft"; }; then
    tail -n 40 "$logdir/web-configure.log" "$logdir/web-build.log"
    echo "==== [web] build FAILED (logs: $logdir/web-*.log)"
    total_fail=$((total_fail + 1)); summary+=("web: build failed after $(stage_time $t)"); return
  fi
  t1=$SECONDS
  local cpu cpu_threads
  cpu="$(awk '{ printf "%d", $1 + $2 }' "$tf" 2>/dev/null)"; cpu_threads="$(awk '{ printf "%d", $1 + $2 }' "$tft" 2>/dev/null)"
  echo "==== [web] node --test web/test/*.test.mjs tests/web/*.test.mjs"
  node --test --test-reporter=tap web/test/*.test.mjs tests/web/*.test.mjs >"$log" 2>&1
  grep -E "^not ok|^# (tests|pass|fail|skipped)" "$log" | sed 's/^/  /'
  t2=$SECONDS
  local p f s
  p=$(awk '/^# pass /{print $3}' "$log"); f=$(awk '/^# fail /{print $3}' "$log"); s=$(awk '/^# skipped /{print $3}' "$log")
  p=${p:-0}; f=${f:-1}; s=${s:-0}
  if ((p + f + s == 0)); then echo "==== [web] no tests ran: counted as a failure"; f=1; fi
  if ((f)); then grep -B2 -A30 "^not ok" "$log" | head -120; fi
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
  summary+=("web: $p passed, $f failed, $s skipped; build $((t1 - t))s (tessera_web cpu ${cpu:-?}s; then the threads build: $((t1 - tt))s, cpu ${cpu_threads:-?}s, protobuf's -pthread flavor at its configure included), node tests $((t2 - t1))s")
}

# playground: builds tessera_playground (build/wasm) and the native one + the CLI (build/release),
# smoke-runs the native one for 3 frames under Xvfb, then the Chromium test (its native-CLI check
# is a subtest, so node's counts include it).
run_playground_stage() {
  local t=$SECONDS t1 t2 log="$logdir/playground.log" p=0 f=0 s=0
  export NODE_PATH=/usr/share/nodejs
  echo "==== [playground] build tessera_playground (wasm) and tessera-playground + tessera (release)"
  if ! { cmake --preset wasm >"$logdir/playground-configure.log" 2>&1 &&
         cmake --build "$root/build/wasm" -j"$jobs" --target tessera_playground >"$logdir/playground-build.log" 2>&1 &&
         cmake --preset release -DTSR_PLAYGROUND_NATIVE=ON >>"$logdir/playground-configure.log" 2>&1 &&
         cmake --build "$root/build/release" -j"$jobs" --target tessera_playground tessera_cli >>"$logdir/playground-build.log" 2>&1; }; then
    tail -n 40 "$logdir/playground-configure.log" "$logdir/playground-build.log"
    echo "==== [playground] build FAILED (logs: $logdir/playground-*.log)"
    total_fail=$((total_fail + 1)); summary+=("playground: build failed after $(stage_time $t)"); return
  fi
  t1=$SECONDS
  echo "==== [playground] native smoke run (xvfb-run, 3 frames)"
  if xvfb-run -a -s "-screen 0 1400x900x24" "$root/build/release/bin/tessera-playground" --frames 3 \
       >"$logdir/playground-native.log" 2>&1 && grep -q '"frame":3,' "$logdir/playground-native.log"; then
    p=$((p + 1))
  else
    tail -n 20 "$logdir/playground-native.log"; echo "==== [playground] native smoke run FAILED"; f=$((f + 1))
  fi
  echo "==== [playground] node --test tests/web/playground.browser.mjs"
  node --test --test-reporter=tap tests/web/playground.browser.mjs >"$log" 2>&1
  grep -E "^not ok|^# (tests|pass|fail|skipped)|playground measured" "$log" | sed 's/^/  /'
  t2=$SECONDS
  local tp tf ts
  tp=$(awk '/^# pass /{print $3}' "$log"); tf=$(awk '/^# fail /{print $3}' "$log"); ts=$(awk '/^# skipped /{print $3}' "$log")
  tp=${tp:-0}; tf=${tf:-1}; ts=${ts:-0}
  if ((tp + tf + ts == 0)); then tf=1; fi
  if ((tf)); then grep -B2 -A30 "^not ok" "$log" | head -80; fi
  p=$((p + tp)); f=$((f + tf)); s=$((s + ts))
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
  summary+=("playground: $p passed, $f failed, $s skipped; build $((t1 - t))s, tests $((t2 - t1))s")
}

# The minimal runtimes (mobile/selective/): size-first in release and aarch64 (sizes reported),
# TSR_MIN_OPTIMIZE=speed under ASan/UBSan (the asan preset).
min_targets="tessera_min_ppocr_v4_rec tessera_min_silero_vad_legacy"
for st in $stages; do
  case "$st" in
    release) run_stage release release "" "" ;;
    asan)
      ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}" \
      UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
        run_stage asan asan "--target tessera_unit_tests tessera_c_api_test tessera_c_train_test tsr_fuzzers" \
          "-R ^(unit|c_api|fuzz):" ;;
    tsan)
      TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}" \
        run_stage tsan tsan "--target tessera_stress_test tessera_thread_tests" \
          "-R ^(stress:|unit:(SIMD.dispatch|Plan::run|Inter-op|ThreadPool|Conv.f32))" ;;
    wasm)
      # Emscripten 3.1.6's linker needs Debian's node modules (acorn).
      NODE_PATH=/usr/share/nodejs run_stage wasm wasm "--target tessera_unit_tests" "" ;;
    web) run_web_stage ;;
    playground) run_playground_stage ;;
    aarch64)
      run_stage aarch64 aarch64 \
        "--target tessera_unit_tests tessera_c_api_test tessera_c_train_test $min_targets" \
        "-R ^(unit|c_api|selective):"
      bash mobile/size_report.sh build/release build/aarch64 | tee "$logdir/sizes.txt" ;;
    armv7)
      # The minimal runtimes only (the C API over libtessera_min_NAME.so, 32-bit), on their models.
      run_stage armv7 armv7 "--target $min_targets" "-R ^selective:.(ppocr_v4_rec|silero_vad_legacy)(.rejects|$)"
      bash mobile/size_report.sh build/armv7 | tee -a "$logdir/sizes.txt" ;;
    *) echo "test.sh: unknown stage $st"; total_fail=$((total_fail + 1)) ;;
  esac
done

# Real-model accuracy lines (tests/models/compare.py), as bench/results/accuracy.md quotes them.
if compgen -G "$root/build/release/tests/models/*/compare.txt" >/dev/null; then
  echo "==== real models vs onnxruntime-node"
  grep -h '^model ' "$root"/build/release/tests/models/*/compare.txt | sed 's/^/  /'
fi
echo "==== summary (total $(stage_time $t_start))"
for line in "${summary[@]}"; do echo "  $line"; done
if ((total_skip)); then echo "  ($total_skip skipped)"; fi
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
