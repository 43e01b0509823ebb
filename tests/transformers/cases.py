"""Test cases built with onnx.helper, checked against onnxruntime-node (tests/transformers/README.md).

A case is one ONNX model plus seeded inputs. A generator script (gen_<group>.py) builds a list of
cases and hands it to `main(cases)`, which writes, under --out DIR:
    DIR/<case>.onnx, DIR/<case>/input_<k>.npy, DIR/cases.json
cases.json: [{"name", "onnx", "inputs": [{"name", "file"}], "rtol", "atol"}], which ort_refs.js
(references) and check.py (tessera against them) read.
"""
import argparse
import json
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper  # noqa: F401  (re-exported for generators)

MS = "com.microsoft"
_NP = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64,
       np.int32: TensorProto.INT32, np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8,
       np.bool_: TensorProto.BOOL}


def elem_type(dtype):
    """The TensorProto element type of a numpy dtype."""
    return _NP[np.dtype(dtype).type]


class Case:
    """One model and its inputs. `inputs`: name -> np.ndarray, in graph-input order.
    `initializers`: name -> np.ndarray (constant weights). `nodes`: helper.make_node results.
    `outputs`: [(name, np dtype, shape or None)]. `opsets`: {domain: version}."""

    def __init__(self, name, nodes, inputs, outputs, initializers=None, opsets=None,
                 rtol=1e-4, atol=1e-4, input_shapes=None):
        self.name, self.nodes, self.inputs, self.outputs = name, nodes, inputs, outputs
        self.initializers = initializers or {}
        self.opsets = {"": 17, MS: 1} if opsets is None else opsets
        self.rtol, self.atol = rtol, atol
        # Optional per-input declared shapes (None entries or strings = dynamic dims).
        self.input_shapes = input_shapes or {}

    def model(self):
        ins = [helper.make_tensor_value_info(n, elem_type(a.dtype), self.input_shapes.get(n, list(a.shape)))
               for n, a in self.inputs.items()]
        outs = [helper.make_tensor_value_info(n, elem_type(dt), shape) for n, dt, shape in self.outputs]
        inits = [numpy_helper.from_array(a, n) for n, a in self.initializers.items()]
        g = helper.make_graph(self.nodes, self.name, ins, outs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in self.opsets.items()],
                              producer_name="tessera-tests")
        m.ir_version = 8 if max(v for d, v in self.opsets.items() if d == "") <= 17 else 10
        return m


class Parts:
    """The nodes and seeded initializers of a hand-built model (make_decoder.py,
    make_train_transformer.py): w() draws a weight, c() stores a constant, node() appends a node
    named after its first output; each returns the name it defined."""

    def __init__(self, seed):
        self.r, self.inits, self.nodes = rng(seed), [], []

    def w(self, name, shape, std):
        return self.c(name, (self.r.standard_normal(shape) * std).astype(np.float32))

    def c(self, name, arr):
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(self, op, ins, outs, domain=None, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_" + op, domain=domain, **attrs))
        return outs[0]


def rng(seed):
    return np.random.default_rng(seed)


def main(cases, argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--filter", default="")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    index = []
    names = set()
    for c in cases:
        if args.filter and args.filter not in c.name:
            continue
        assert c.name not in names, "duplicate case name " + c.name
        names.add(c.name)
        onnx_file = os.path.join(args.out, c.name + ".onnx")
        with open(onnx_file, "wb") as f:
            f.write(c.model().SerializeToString())
        d = os.path.join(args.out, c.name)
        os.makedirs(d, exist_ok=True)
        ins = []
        for k, (n, a) in enumerate(c.inputs.items()):
            np.save(os.path.join(d, f"input_{k}.npy"), a)
            ins.append({"name": n, "file": f"input_{k}.npy"})
        index.append({"name": c.name, "onnx": c.name + ".onnx", "inputs": ins, "rtol": c.rtol, "atol": c.atol})
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(index, f, indent=1)
    print(f"{len(index)} cases -> {args.out}")
