#!/usr/bin/python3
"""QLinearAdd against onnxruntime: DequantizeLinear(a) + DequantizeLinear(b) -> Add ->
QuantizeLinear, which both runtimes fuse (Tessera's quantize_fusion into com.microsoft::QLinearAdd,
onnxruntime's QDQ selectors into its QLinearAdd), run on every (a, b) pair of codes (u8 and s8,
256 x 256, so whole vectors and no tail) and on a single-element B with an odd length (the tail
and the folded-input formula), with seeded random scales and zero points. Tessera's outputs must
equal onnxruntime-node's bit for bit (on x86 with FMA: the formula of backends/cpu/kernels/qadd.cpp).

Usage: qlinear_add_test.py --tessera PATH/tessera --work-dir DIR
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.environ.get("TSR_NODE", "/usr/bin/node")


def model(path, dt, a_shape, b_shape, rng):
    tp = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
    params = {"sa": np.float32(rng.uniform(0.01, 0.2)), "sb": np.float32(rng.uniform(0.01, 0.2)),
              "sc": np.float32(rng.uniform(0.02, 0.3))}
    for z in ("za", "zb", "zc"):
        params[z] = np.array(rng.integers(lo, hi + 1), dt)
    inits = [numpy_helper.from_array(np.array(v), k) for k, v in params.items()]
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["fa"]),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["fb"]),
             helper.make_node("Add", ["fa", "fb"], ["s"]),
             helper.make_node("QuantizeLinear", ["s", "sc", "zc"], ["c"])]
    g = helper.make_graph(nodes, "qadd", [helper.make_tensor_value_info("a", tp, a_shape),
                                          helper.make_tensor_value_info("b", tp, b_shape)],
                          [helper.make_tensor_value_info("c", tp, None)], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work-dir", required=True)
    a = p.parse_args()
    rng = np.random.default_rng(25)
    failures = 0
    for dt in (np.uint8, np.int8):
        lo = int(np.iinfo(dt).min)
        codes = np.arange(lo, lo + 256).astype(dt)
        cases = {"pairs": (np.repeat(codes, 256).reshape(256, 256), np.tile(codes, 256).reshape(256, 256)),
                 "single_b": (rng.integers(lo, lo + 256, (3, 67)).astype(dt), np.array([codes[77]], dt))}
        for name, (av, bv) in cases.items():
            for seed in range(3):
                d = os.path.join(a.work_dir, f"qadd_{np.dtype(dt).name}_{name}_{seed}")
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, "model.onnx")
                model(path, dt, list(av.shape), list(bv.shape), rng)
                np.save(os.path.join(d, "a.npy"), av)
                np.save(os.path.join(d, "b.npy"), bv)
                feeds = [f"a={d}/a.npy", f"b={d}/b.npy"]
                subprocess.run([NODE, os.path.join(HERE, "ort_run.js"), path, os.path.join(d, "ort")] + feeds, check=True)
                cmd = [a.tessera, "run", path, "--output-dir", os.path.join(d, "tsr")]
                for f in feeds:
                    cmd += ["--input", f]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                want = np.load(os.path.join(d, "ort", "output_0.npy"))
                got = np.load(os.path.join(d, "tsr", "output_0.npy"))
                bad = int((want.astype(np.int32) != got.astype(np.int32)).sum()) if want.shape == got.shape else -1
                print(f"{np.dtype(dt).name} {name} seed {seed}: {bad} of {want.size} codes differ")
                failures += bad != 0
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
