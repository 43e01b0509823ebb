#!/usr/bin/python3
"""Latency of the selective minimal runtimes (mobile/selective/) against the full runtime, on the
models they were built for, side by side in alternating rounds.

    python3 bench/minimal.py [--build build/release] [--speed-build build/min-speed]
                             [--runs 100] [--rounds 5] [--threads 1] [--models a,b]

Runtimes, each the C API test program's --time mode (tests/c_api/c_api_test.c) on the model
directory the `c_api: prepare NAME` test wrote (model.tsr and onnxruntime's inputs):
  full   BUILD/tests/c_api/tessera_c_api_test: every kernel, SIMD dispatch (AVX-512 where the
         CPU has it; the minimal runtimes on x86-64 are AVX2 only);
  size   BUILD/tessera_min_NAME over libtessera_min_NAME.so as BUILD configured it
         (TSR_MIN_OPTIMIZE, default size: -Os and the size-first kernel set);
  speed  the same built with TSR_MIN_OPTIMIZE=speed in SPEED_BUILD, which this script configures
         (the release preset's settings, tools off) and builds, only those targets.
Each round runs every runtime once (RUNS timed runs after 3 untimed ones; the figure is their
median), in an order rotated per round; the table gives the median over rounds, and ratios.
Needs BUILD built and its `c_api: prepare` tests run (ctest -R c_api), cmake and ninja.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def configure_speed(build, speed_build):
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    launcher = re.search(r"^CMAKE_CXX_COMPILER_LAUNCHER:\w+=(.+)$", cache, re.M)
    args = ["cmake", "-S", ROOT, "-B", speed_build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_POSITION_INDEPENDENT_CODE=ON", "-DTSR_MIN_OPTIMIZE=speed", "-DTSR_BUILD_TOOLS=OFF",
            "-DTSR_BUILD_TESTS=OFF", "-DTSR_VULKAN=OFF", "-DTSR_CUDA=OFF"]
    if launcher:
        args += [f"-DCMAKE_C_COMPILER_LAUNCHER={launcher.group(1)}",
                 f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher.group(1)}"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def time_once(exe, model_dir, runs, threads):
    out = subprocess.run([exe, "--time", str(runs), str(threads), model_dir], check=True, capture_output=True,
                         text=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"minimal.py: no timing from {exe}: {out}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build/release"))
    ap.add_argument("--speed-build", default=os.path.join(ROOT, "build/min-speed"))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default="ppocr_v4_rec,silero_vad_legacy")
    a = ap.parse_args()
    models = a.models.split(",")
    configure_speed(a.build, a.speed_build)
    subprocess.run(["cmake", "--build", a.speed_build, "--target"] + [f"tessera_min_{m}" for m in models],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"| model | full (ms) | minimal size (ms) | minimal speed (ms) | size / speed | size / full |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for m in models:
        model_dir = os.path.join(a.build, "tests/c_api/models", m)
        if not os.path.exists(os.path.join(model_dir, "manifest.txt")):
            sys.exit(f"minimal.py: {model_dir} is not prepared (ctest -R 'c_api: prepare' in {a.build})")
        exes = {"full": os.path.join(a.build, "tests/c_api/tessera_c_api_test"),
                "size": os.path.join(a.build, f"tessera_min_{m}"),
                "speed": os.path.join(a.speed_build, f"tessera_min_{m}")}
        names = list(exes)
        figs = {k: [] for k in names}
        for r in range(a.rounds):
            for k in names[r % 3:] + names[:r % 3]:
                figs[k].append(time_once(exes[k], model_dir, a.runs, a.threads))
        med = {k: statistics.median(v) for k, v in figs.items()}
        print(f"| {m} | {med['full']:.4g} | {med['size']:.4g} | {med['speed']:.4g} | "
              f"{med['size'] / med['speed']:.2f} | {med['size'] / med['full']:.2f} |")


if __name__ == "__main__":
    main()
