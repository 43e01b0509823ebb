"""Writes three small ONNX models whose outputs are not plain numeric tensors, for
web/test/values.test.mjs: python3 make_value_models.py OUT_DIR

- strings.onnx:  x: string[N] -> y = StringNormalizer(x, case_change_action=LOWER)
- sequence.onnx: x: float32[6] -> s = SplitToSequence(x, split=[1, 2, 3])   (seq(tensor(float)))
- optional.onnx: x: float32[2] -> o = Optional() of tensor(float) (an empty optional), y = x + x
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main(out):
    os.makedirs(out, exist_ok=True)
    save(helper.make_graph(
        [helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER")], "strings",
        [helper.make_tensor_value_info("x", TensorProto.STRING, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, ["N"])]), os.path.join(out, "strings.onnx"))

    split = helper.make_tensor("split", TensorProto.INT64, [3], [1, 2, 3])
    save(helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "split"], ["s"])], "sequence",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_value_info("s", helper.make_sequence_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, [None])))],
        initializer=[split]), os.path.join(out, "sequence.onnx"))

    elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    save(helper.make_graph(
        [helper.make_node("Optional", [], ["o"], type=elem), helper.make_node("Add", ["x", "x"], ["y"])],
        "optional",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_value_info("o", helper.make_optional_type_proto(elem)),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]), os.path.join(out, "optional.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
