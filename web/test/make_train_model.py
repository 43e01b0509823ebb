# The Fashion-MNIST classifier that web/test/train.test.mjs fine-tunes: Flatten -> Gemm(784, 32)
# -> Relu -> Gemm(32, 10) (weights fc1.*, head.*), images f32 [N, 1, 28, 28] -> logits [N, 10],
# seeded random weights, written by Debian's python3-onnx.
#   python3 make_train_model.py OUT.onnx
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(7)
weights = {
    "fc1.weight": (rng.standard_normal((784, 32)) * 0.05).astype(np.float32),
    "fc1.bias": np.zeros(32, np.float32),
    "head.weight": (rng.standard_normal((32, 10)) * 0.1).astype(np.float32),
    "head.bias": np.zeros(10, np.float32),
}
graph = h.make_graph(
    [h.make_node("Flatten", ["image"], ["flat"], axis=1),
     h.make_node("Gemm", ["flat", "fc1.weight", "fc1.bias"], ["hidden"]),
     h.make_node("Relu", ["hidden"], ["act"]),
     h.make_node("Gemm", ["act", "head.weight", "head.bias"], ["logits"])],
    "fmnist_mlp",
    [h.make_tensor_value_info("image", T.FLOAT, ["N", 1, 28, 28])],
    [h.make_tensor_value_info("logits", T.FLOAT, ["N", 10])],
    [nh.from_array(v, k) for k, v in weights.items()])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
