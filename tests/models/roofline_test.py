#!/usr/bin/env python3
"""bench/zoo/roofline.py counts multiply-adds as the definitions of the ops give them.

A model of one Conv (groups 2, stride 2, padding 1), one Gemm (transB) and one batched MatMul of
two activations (attention's Q.K^T form), at shapes the count must resolve through Reshape with
data propagation; the expected FLOPs are worked out by hand from the ops' definitions. The timing
JSON is made up: the test checks the arithmetic of the rates, not a speed.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]


def model():
    conv_w = numpy_helper.from_array(np.zeros((8, 2, 3, 3), np.float32), "conv_w")  # Cout 8, Cin/group 2
    gemm_w = numpy_helper.from_array(np.zeros((5, 8 * 4 * 4), np.float32), "gemm_w")  # N 5, K 128 (transB)
    shape = numpy_helper.from_array(np.array([1, -1], np.int64), "flat")
    qk_shape = numpy_helper.from_array(np.array([1, 2, 4, 8], np.int64), "qk_shape")
    nodes = [
        helper.make_node("Conv", ["x", "conv_w"], ["c"], group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["c", "flat"], ["f"]),
        helper.make_node("Gemm", ["f", "gemm_w"], ["g"], transB=1),
        helper.make_node("Reshape", ["c", "qk_shape"], ["q"]),  # [1,2,4,8]
        helper.make_node("Transpose", ["q"], ["kt"], perm=[0, 1, 3, 2]),  # [1,2,8,4]
        helper.make_node("MatMul", ["q", "kt"], ["s"]),  # [1,2,4,4], K = 8
    ]
    graph = helper.make_graph(
        nodes, "roofline", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [helper.make_tensor_value_info("g", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [conv_w, gemm_w, shape, qk_shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    # Conv: output [1,8,4,4] = 128 elements, each 2 x 3 x 3 = 18 multiply-adds.
    # Gemm: 1 x 5 x 128. MatMul: 2 heads x 4 rows x 4 columns x K 8.
    expected = 2 * (128 * 18 + 5 * 128 + 2 * 4 * 4 * 8)
    weight_bytes = (8 * 2 * 3 * 3 + 5 * 128) * 4
    ms = expected / 1e9  # so that Tessera's rate prints as 1000 GFLOP/s when the count is right
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        onnx.save(model(), tmp / "m.onnx")
        (tmp / "manifest.json").write_text(json.dumps(
            [{"name": "m", "file": "m.onnx", "inputs": [{"name": "x", "shape": [1, 4, 8, 8]}]}]))
        (tmp / "r.json").write_text(json.dumps(
            {"models": [{"name": "m", "threads": {"1": {"ort_ms": 2 * ms, "tessera_ms": ms}}}]}))
        out = subprocess.run(
            [sys.executable, str(ROOT / "bench/zoo/roofline.py"), "--zoo", str(tmp), "--json", str(tmp / "r.json"),
             "--peak", "10", "--bandwidth", "10,20"], capture_output=True, text=True, check=True).stdout
    row = next(line for line in out.splitlines() if line.startswith("| m |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    ort_rate, tsr_rate, weight_rate = float(cells[6]), float(cells[7]), float(cells[11])
    assert not cells[1].startswith("~"), row  # every shape resolved
    assert tsr_rate == 1000 and ort_rate == 500, (row, expected)
    assert abs(weight_rate - weight_bytes / (ms * 1e6)) < 0.1, (row, weight_bytes)
    print(f"roofline: {expected} FLOPs counted as expected")


if __name__ == "__main__":
    main()
