#!/usr/bin/python3
"""Decode-step int4 GEMV: MatMulNBits M=1, K=N=4096 (block 32, symmetric, as int4 LLM exports)
against onnxruntime-node on the same file and against an f32 MatMul of the same shape in Tessera.

Usage: bench/int4_gemv.py --tessera build/release/bin/tessera [--work DIR] [--threads 1]
       [--repeat 50] [--warmup 5] [--rounds 5]
       [--block 32] [--zero-points]
Writes DIR/int4.onnx, DIR/int4_level4.onnx (accuracy_level 4), DIR/f32.onnx and DIR/a.npy, then runs
    tessera run MODEL --threads T --repeat R --warmup W --input A=a.npy   (its median latency)
    node bench/ort_child.js int4.onnx T W R A=a.npy                      (median of R session.run)
ROUNDS times, alternating, and prints the median (and min) over rounds with the weight bytes read
per run in GB/s (codes + scales for int4, the f32 matrix for MatMul). Needs /usr/bin/python3 with numpy and onnx, and tests/models/node_modules.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "transformers"))
import numpy as np  # noqa: E402
from cases import Case, helper  # noqa: E402
from gen_int4 import matmul_nbits  # noqa: E402


def tessera_median(args, model, a_file):
    cmd = [args.tessera, "run", model, "--threads", str(args.threads), "--repeat", str(args.repeat),
           "--warmup", str(args.warmup), "--input", f"A={a_file}"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError("no latency in: " + out)
    return float(m.group(1))


def ort_median(args, model, a_file):
    cmd = ["/usr/bin/node", os.path.join(HERE, "ort_child.js"), model, str(args.threads), str(args.warmup),
           str(args.repeat), f"A={a_file}"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=True).stdout
    return statistics.median(json.loads(out.strip().splitlines()[-1])["times_ms"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tessera", required=True)
    p.add_argument("--work", default="/tmp/int4_gemv")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--block", type=int, default=32)
    p.add_argument("--zero-points", action="store_true", help="asymmetric, packed u8 zero points")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    k = n = 4096
    case = matmul_nbits("int4", [1, k], n, args.block, zp="packed" if args.zero_points else "none", seed=7)
    a = case.inputs["A"]
    a_file = os.path.join(args.work, "a.npy")
    np.save(a_file, a)
    int4 = os.path.join(args.work, "int4.onnx")
    with open(int4, "wb") as f:
        f.write(case.model().SerializeToString())
    # The same weights with accuracy_level 4: onnxruntime then quantizes A to int8 (its fastest
    # path, different results); Tessera computes in f32 at every level.
    case.nodes[0].attribute.append(helper.make_attribute("accuracy_level", 4))
    int4_l4 = os.path.join(args.work, "int4_level4.onnx")
    with open(int4_l4, "wb") as f:
        f.write(case.model().SerializeToString())
    w = (np.random.default_rng(8).standard_normal((k, n)) * 0.02).astype(np.float32)
    f32 = os.path.join(args.work, "f32.onnx")
    dense = Case("f32", [helper.make_node("MatMul", ["A", "W"], ["Y"])], {"A": a}, [("Y", np.float32, [1, n])],
                 initializers={"W": w}, opsets={"": 17})
    with open(f32, "wb") as f:
        f.write(dense.model().SerializeToString())
    int4_bytes = sum(v.nbytes for v in case.initializers.values())
    runs = [("tessera MatMulNBits int4", lambda: tessera_median(args, int4, a_file), int4_bytes),
            ("onnxruntime MatMulNBits int4", lambda: ort_median(args, int4, a_file), int4_bytes),
            ("onnxruntime, accuracy_level 4", lambda: ort_median(args, int4_l4, a_file), int4_bytes),
            ("tessera MatMul f32", lambda: tessera_median(args, f32, a_file), w.nbytes)]
    # Rounds alternate the four measurements, so a busy machine's load falls on all of them.
    times = [[] for _ in runs]
    for _ in range(args.rounds):
        for i, (_, fn, _) in enumerate(runs):
            times[i].append(fn())
    print(f"M=1 K={k} N={n} block {args.block}, {'packed zero points' if args.zero_points else 'symmetric'}; "
          f"threads {args.threads}; per round the median of {args.repeat} runs after {args.warmup} warm-up; "
          f"median (min) over {args.rounds} rounds")
    for (name, _, nbytes), t in zip(runs, times):
        ms, best = statistics.median(t), min(t)
        print(f"  {name:30s} {ms:8.3f} ms ({best:.3f})  {nbytes / 2**20:5.1f} MiB weights  "
              f"{nbytes / ms / 1e6:6.1f} GB/s ({nbytes / best / 1e6:.1f})")


if __name__ == "__main__":
    main()
