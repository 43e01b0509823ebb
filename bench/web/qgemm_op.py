#!/usr/bin/env python3
"""Writes one-node com.microsoft::DynamicQuantizeMatMul models (f32 x [M, K] times constant s8
W [K, N] with a per-tensor scale and an f32 bias) for bench/web/qgemm_op.mjs: the int8 GEMM of a q8
transformer's MatMul alone, as tessera-web and onnxruntime-web run it.

Usage: /usr/bin/python3 bench/web/qgemm_op.py OUT_DIR [MxKxN ...]
(default shapes: MiniLM-128's FFN out and in, GPT prefill's 8000-word head). Needs numpy and onnx.
"""
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DEFAULT = ["128x1536x384", "128x384x1536", "64x512x8000"]


def write(out: Path, m: int, k: int, n: int) -> Path:
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "W"),
             numpy_helper.from_array(np.array([0.01], np.float32), "ws"),
             numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "bias")]
    node = helper.make_node("DynamicQuantizeMatMul", ["x", "W", "ws", "", "bias"], ["y"], domain="com.microsoft")
    graph = helper.make_graph([node], "dqmm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    path = out / f"dqmm_{m}x{k}x{n}.onnx"
    onnx.save(model, str(path))
    return path


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for shape in sys.argv[2:] or DEFAULT:
        print(write(out, *(int(v) for v in shape.split("x"))))
