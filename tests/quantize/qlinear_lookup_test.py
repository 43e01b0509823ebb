#!/usr/bin/python3
"""quantize_lookup against onnxruntime: DequantizeLinear -> an elementwise activation ->
QuantizeLinear, which Tessera's quantize_lookup turns into one tessera QLinearLookup (a 256-entry
table on the codes, computed by the original f32 kernels), run on every code (u8 and s8 inputs, u8
and s8 outputs, a [3, 87] input: whole vectors and a tail) for Relu, Sigmoid, Tanh, HardSwish,
HardSigmoid, Clip, LeakyRelu and SiLU (Mul(x, Sigmoid(x))). Requires the pass to fire (`tessera
optimize` reports `quantize_lookup: 1`) and Tessera's outputs to equal onnxruntime-node's bit for
bit. The near-misses (a second input, per-channel scales, a shared intermediate) are covered by
tests/unit/quantize_lookup_test.cpp.

Usage: qlinear_lookup_test.py --tessera PATH/tessera --work-dir DIR
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from qgemm_test import run_both  # both runtimes on one input (this folder)

ACTS = ["Relu", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "Clip", "LeakyRelu", "SiLU"]


def activation(act):
    """The nodes computing f = act(y), and extra initializers."""
    if act == "SiLU":
        return [helper.make_node("Sigmoid", ["y"], ["s"]), helper.make_node("Mul", ["y", "s"], ["f"])], []
    if act == "Clip":
        return ([helper.make_node("Clip", ["y", "lo", "hi"], ["f"])],
                [numpy_helper.from_array(np.array(-1.0, np.float32), "lo"),
                 numpy_helper.from_array(np.array(2.5, np.float32), "hi")])
    if act == "LeakyRelu":
        return [helper.make_node("LeakyRelu", ["y"], ["f"], alpha=0.1)], []
    if act == "HardSigmoid":
        return [helper.make_node("HardSigmoid", ["y"], ["f"], alpha=0.25, beta=0.4)], []
    return [helper.make_node(act, ["y"], ["f"])], []


def model(path, act, din, dout, rng):
    tp = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    zi = rng.integers(np.iinfo(din).min, np.iinfo(din).max + 1)
    zo = rng.integers(np.iinfo(dout).min, np.iinfo(dout).max + 1)
    nodes, inits = activation(act)
    inits += [numpy_helper.from_array(np.array(rng.uniform(0.01, 0.08), np.float32), "xs"),
              numpy_helper.from_array(np.array(zi, din), "xz"),
              numpy_helper.from_array(np.array(rng.uniform(0.005, 0.05), np.float32), "ys"),
              numpy_helper.from_array(np.array(zo, dout), "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["y"])] + nodes + \
            [helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["q"])]
    g = helper.make_graph(nodes, "qlookup", [helper.make_tensor_value_info("x", tp[din], [3, 87])],
                          [helper.make_tensor_value_info("q", tp[dout], None)], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), path)


def main():
    p = argparse.ArgumentParser(description="quantize_lookup against onnxruntime-node, bit for bit")
    p.add_argument("--tessera", required=True, help="the tessera CLI")
    p.add_argument("--work-dir", required=True, help="where the models and outputs go")
    a = p.parse_args()
    rng = np.random.default_rng(31)
    failures = 0
    for din in (np.uint8, np.int8):
        codes = (np.arange(3 * 87) * 7 + 3).astype(np.uint8).view(din).reshape(3, 87)  # every code
        for dout in (np.uint8, np.int8):
            for act in ACTS:
                name = f"{act}_{np.dtype(din).name}_{np.dtype(dout).name}"
                d = os.path.join(a.work_dir, name)
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, "model.onnx")
                model(path, act, din, dout, rng)
                opt = subprocess.run([a.tessera, "optimize", path, "-o", os.path.join(d, "model.tsr")], check=True,
                                     capture_output=True, text=True).stdout
                fired = re.search(r"quantize_lookup: (\d+)", opt)
                want, got = run_both(a.tessera, d, path, "x", codes)
                bad = int((want.astype(np.int32) != got.astype(np.int32)).sum()) if want.shape == got.shape else -1
                ok = bad == 0 and fired is not None and fired.group(1) == "1" and got.dtype == dout
                print(f"{name}: quantize_lookup {fired.group(1) if fired else '?'}, {bad} of {want.size} codes differ"
                      f"{'' if ok else '  FAIL'}")
                failures += not ok
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
