#!/usr/bin/python3
"""com.microsoft::QGemm against onnxruntime-node, bit for bit.

QDQ Gemms (DequantizeLinear(x u8) and DequantizeLinear(W s8, per column or per tensor) [and
DequantizeLinear(C i32)] -> Gemm [-> Relu] -> QuantizeLinear), which both runtimes fuse into QGemm
(Tessera's quantize_fusion, onnxruntime's QDQ selectors): shapes not tuned for (odd K and N, one
row, transB 0 and 1), and a 64 x 512 x 1024 product large enough that computing it in f32 (the
unfused graph) lands some codes one apart from the integer sums. Then a QGemm node as written
(f32 output, no y_scale; a scalar C). Checks that Tessera's optimized graph holds the QGemm.

Usage: qgemm_test.py --tessera PATH/tessera --work-dir DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = os.environ.get("TSR_NODE", "/usr/bin/node")


def qdq_gemm(path, rng, m, k, n, trans_b, per_col, bias, relu):
    """x (f32 input) -> Q -> DQ -> Gemm(DQ(W), DQ(C)) [-> Relu] -> Q -> DQ -> y (y's zero point 0 after
    a Relu, which the QuantizeLinear's saturation then makes redundant)."""
    xs, ys = np.float32(rng.uniform(0.01, 0.05)), np.float32(rng.uniform(0.05, 0.2))
    ws = (rng.uniform(0.002, 0.01, n) if per_col else rng.uniform(0.002, 0.01, ())).astype(np.float32)
    wq = rng.integers(-127, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    inits = [numpy_helper.from_array(np.array(xs), "xs"), numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(np.array(ys), "ys"), numpy_helper.from_array(np.array(0 if relu else 100, np.uint8), "yz"),
             numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(ws.shape, np.int8), "wz")]
    dq_w = helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0 if trans_b else 1)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]), dq_w]
    gemm_in = ["xf", "w"]
    if bias:
        cs = (xs * ws * np.ones(n, np.float32)).astype(np.float32)
        inits += [numpy_helper.from_array(rng.integers(-3000, 3000, n).astype(np.int32), "cq"),
                  numpy_helper.from_array(cs, "cs")]
        nodes.append(helper.make_node("DequantizeLinear", ["cq", "cs"], ["c"], axis=0))
        gemm_in.append("c")
    nodes.append(helper.make_node("Gemm", gemm_in, ["g"], transB=int(trans_b)))
    if relu:
        nodes.append(helper.make_node("Relu", ["g"], ["r"]))
    nodes += [helper.make_node("QuantizeLinear", ["r" if relu else "g", "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "qdq_gemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return rng.uniform(-2.5, 2.5, (m, k)).astype(np.float32)


def qgemm_node(path, rng, m, k, n):
    """A QGemm node with an f32 output (no y_scale), transB = 1, a scalar C, alpha 0.5."""
    inits = [numpy_helper.from_array(np.array(np.float32(0.03)), "as"), numpy_helper.from_array(np.array(7, np.uint8), "az"),
             numpy_helper.from_array(rng.integers(-127, 128, (n, k)).astype(np.int8), "b"),
             numpy_helper.from_array(rng.uniform(0.002, 0.01, n).astype(np.float32), "bs"),
             numpy_helper.from_array(np.zeros(n, np.int8), "bz"), numpy_helper.from_array(np.array(-321, np.int32), "c")]
    node = helper.make_node("QGemm", ["a", "as", "az", "b", "bs", "bz", "c"], ["y"], domain="com.microsoft",
                            transB=1, alpha=0.5)
    g = helper.make_graph([node], "qgemm", [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]),
              path)
    return rng.integers(0, 256, (m, k)).astype(np.uint8)


def run_both(tessera, d, path, name, x):
    np.save(os.path.join(d, "x.npy"), x)
    feed = f"{name}={d}/x.npy"
    subprocess.run([NODE, os.path.join(HERE, "ort_run.js"), path, os.path.join(d, "ort"), feed], check=True)
    subprocess.run([tessera, "run", path, "--output-dir", os.path.join(d, "tsr"), "--input", feed], check=True,
                   stdout=subprocess.DEVNULL)
    return np.load(os.path.join(d, "ort", "output_0.npy")), np.load(os.path.join(d, "tsr", "output_0.npy"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work-dir", required=True)
    a = p.parse_args()
    rng = np.random.default_rng(29)
    failures = 0
    # (m, k, n, transB, per-column W scales, C, Relu)
    cases = [(64, 512, 1024, True, True, True, False), (3, 37, 29, False, False, False, False),
             (1, 1280, 1000, True, True, True, False), (5, 19, 67, True, True, True, True),
             (2, 64, 33, False, True, True, False)]
    for i, (m, k, n, tb, pc, bias, relu) in enumerate(cases):
        d = os.path.join(a.work_dir, f"qdq_gemm_{i}")
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        x = qdq_gemm(path, rng, m, k, n, tb, pc, bias, relu)
        want, got = run_both(a.tessera, d, path, "x", x)
        bad = int((want != got).sum()) if want.shape == got.shape else -1
        opt = os.path.join(d, "model.tsr")
        subprocess.run([a.tessera, "optimize", path, "-o", opt], check=True, stdout=subprocess.DEVNULL)
        ops = json.loads(subprocess.run([a.tessera, "inspect", opt, "--json"], check=True, stdout=subprocess.PIPE,
                                        text=True).stdout)["ops"]
        fused = ops.get("com.microsoft::QGemm", 0) == 1 and "Gemm" not in ops and "Relu" not in ops
        print(f"QDQ Gemm {m}x{k}x{n} transB={int(tb)} per-column={int(pc)} C={int(bias)} Relu={int(relu)}: "
              f"{bad} of {want.size} outputs differ; optimized ops {ops}" + ("" if fused else " (expected one QGemm)"))
        failures += bad != 0 or not fused
    d = os.path.join(a.work_dir, "qgemm_node")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    x = qgemm_node(path, rng, 5, 33, 17)
    want, got = run_both(a.tessera, d, path, "a", x)
    bad = int((want != got).sum()) if want.shape == got.shape else -1
    print(f"QGemm node, f32 output, scalar C: {bad} of {want.size} outputs differ")
    failures += bad != 0
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
