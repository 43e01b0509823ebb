#!/usr/bin/python3
"""Writes three one-node models that the default minimal runtimes (mobile/selective/*.ops) cannot
run, for the `selective: NAME rejects ...` tests: OUT/unselected_op.tsr (Erf, an op neither op
list has), OUT/unselected_dtype.tsr (Add on f64: an op both lists have, a dtype neither has) and
OUT/unselected_input_dtype.tsr (Pow of f32 by an i64 exponent: both lists have Pow for f32 only).
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
    f32, f64, i64 = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64
    models = {  # name: (op, [(input, dtype)], output dtype)
        "unselected_op": ("Erf", [("x", f32)], f32),
        "unselected_dtype": ("Add", [("x", f64), ("y", f64)], f64),
        "unselected_input_dtype": ("Pow", [("x", f32), ("y", i64)], f32),
    }
    for name, (op, inputs, out_dtype) in models.items():
        graph = helper.make_graph(
            [helper.make_node(op, [i for i, _ in inputs], ["z"], name=op.lower())], name,
            [helper.make_tensor_value_info(i, dtype, [1, 4]) for i, dtype in inputs],
            [helper.make_tensor_value_info("z", out_dtype, [1, 4])])
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
