#!/usr/bin/python3
"""Writes two one-node models that the default minimal runtimes (mobile/selective/*.ops) cannot
run, for the `selective: NAME rejects ...` tests: OUT/unselected_op.tsr (Erf, an op neither op
list has) and OUT/unselected_dtype.tsr (Add on f64: an op both lists have, a dtype neither has).
The ONNX models are built with Debian's python3-onnx and converted by the host `tessera convert`.
Usage: make_unselected.py --tessera HOST_TESSERA --out OUT
Exit status: 0 written, 1 error, 77 when the host CLI or python3-onnx is absent.
"""
import argparse
import os
import subprocess
import sys

SKIP = 77


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if not os.access(a.tessera, os.X_OK):
        print(f"SKIP: no host tessera CLI at {a.tessera} (build the release preset's tessera_cli first)")
        return SKIP
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError:
        print("SKIP: python3-onnx is not installed")
        return SKIP
    os.makedirs(a.out, exist_ok=True)
    models = {
        "unselected_op": (["x"], "Erf", TensorProto.FLOAT),
        "unselected_dtype": (["x", "y"], "Add", TensorProto.DOUBLE),
    }
    for name, (inputs, op, dtype) in models.items():
        graph = helper.make_graph(
            [helper.make_node(op, inputs, ["z"], name=op.lower())], name,
            [helper.make_tensor_value_info(i, dtype, [1, 4]) for i in inputs],
            [helper.make_tensor_value_info("z", dtype, [1, 4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        onnx.checker.check_model(model)
        onnx_path = os.path.join(a.out, name + ".onnx")
        onnx.save(model, onnx_path)
        cmd = [a.tessera, "convert", onnx_path, "-o", os.path.join(a.out, name + ".tsr")]
        print("+ " + " ".join(cmd), flush=True)
        if subprocess.run(cmd).returncode != 0:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
