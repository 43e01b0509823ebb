#!/usr/bin/python3
"""Writes loop_add.onnx: a Loop whose body adds 1 to a float scalar, trip count from input M.

Used by bench/loop/run.sh to measure the per-iteration overhead of Loop in Tessera and in
onnxruntime on the same model. Usage: /usr/bin/python3 make_loop_model.py OUT.onnx
"""
import sys

import onnx
from onnx import TensorProto, helper

one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
body = helper.make_graph(
    [helper.make_node("Add", ["x_in", "one"], ["x_out"]),
     helper.make_node("Identity", ["cond_in"], ["cond_out"])],
    "body",
    [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [])],
    initializer=[one])
graph = helper.make_graph(
    [helper.make_node("Loop", ["M", "", "x0"], ["x"], body=body)],
    "loop_add",
    [helper.make_tensor_value_info("M", TensorProto.INT64, []),
     helper.make_tensor_value_info("x0", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], producer_name="tessera-bench")
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
