#!/usr/bin/python3
"""Dynamically quantized convs (`tessera quantize --op-types MatMul,Gemm,Conv`: DynamicQuantizeLinear ->
ConvInteger -> Cast -> Mul [-> Add(Reshape(bias))], onnxruntime quantize_dynamic's form) against
onnxruntime-node running the same file, bit for bit.

One model of independent branches on odd shapes: a Whisper-like 1-D stem (k3 pad 1 with bias,
then k3 stride 2 without, reading the first conv's output), a 2-D conv with a 3x2 window, strides
(2, 1), asymmetric pads and batch 2, a 7x7 stride-2 RGB stem, a pointwise conv, and a grouped conv
(left to ConvInteger's own kernel), and two convs reading one input (one shared DynamicQuantizeLinear).
Quantized with s8 (symmetric) and u8 (asymmetric, a weight zero point) weights per tensor, and s8
per output channel (--per-channel: W_scale [M, 1, ...]). ConvInteger's
sums are exact and the f32 epilogue (Cast, Mul by x_scale * w_scale, Add) rounds the same way in
both runtimes, so every output must be equal. Also checks that Tessera's optimized graph fused the
convs (tessera's DynamicQuantizeConv / ConvIntegerToFloat) and left no ConvInteger but the grouped one.

Usage: dynamic_conv_test.py --tessera PATH/tessera --work-dir DIR
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

# name: (input shape, weight shape, Conv attributes, bias, input: "x<k>" or a branch's output)
BRANCHES = {
    "stem1": ([1, 13, 101], [24, 13, 3], dict(pads=[1, 1]), True, None),
    "stem2": (None, [24, 24, 3], dict(pads=[1, 1], strides=[2]), False, "stem1"),
    "conv2d": ([2, 5, 17, 11], [7, 5, 3, 2], dict(pads=[1, 0, 2, 1], strides=[2, 1]), True, None),
    "rgb": ([1, 3, 33, 29], [16, 3, 7, 7], dict(pads=[3, 3, 3, 3], strides=[2, 2]), True, None),
    "pointwise": ([1, 20, 9, 7], [12, 20, 1, 1], {}, True, None),
    "grouped": ([1, 8, 10, 10], [8, 4, 3, 3], dict(pads=[1, 1, 1, 1], group=2), True, None),
    "shared_a": ([1, 16, 12, 12], [32, 16, 3, 3], dict(pads=[1, 1, 1, 1]), True, None),
    "shared_b": ("shared_a", [24, 16, 1, 1], dict(strides=[2, 2]), True, None),
}


def make_model(path, rng):
    inits, nodes, inputs, outputs, feeds = [], [], [], [], {}
    for name, (shape, wshape, attrs, bias, src) in BRANCHES.items():
        if isinstance(shape, str):  # reads another branch's input
            x = "x_" + shape
        elif src:
            x = src
        else:
            x = "x_" + name
            inputs.append(helper.make_tensor_value_info(x, TensorProto.FLOAT, shape))
            # Values of both signs and an offset range, so the zero point is not 0 or 128.
            feeds[x] = (rng.standard_normal(shape) * 1.3 + 0.4).astype(np.float32)
        w = (rng.standard_normal(wshape) * 0.3).astype(np.float32)
        inits.append(numpy_helper.from_array(w, name + "_w"))
        ins = [x, name + "_w"]
        if bias:
            inits.append(numpy_helper.from_array((rng.standard_normal(wshape[0]) * 0.5).astype(np.float32), name + "_b"))
            ins.append(name + "_b")
        nodes.append(helper.make_node("Conv", ins, [name], name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "dynamic_conv", inputs, outputs, inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return feeds


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tessera", required=True)
    p.add_argument("--work-dir", required=True)
    a = p.parse_args()
    os.makedirs(a.work_dir, exist_ok=True)
    f32 = os.path.join(a.work_dir, "convs.onnx")
    feeds = make_model(f32, np.random.default_rng(5))
    feed_args = []
    for n, v in feeds.items():
        f = os.path.join(a.work_dir, n + ".npy")
        np.save(f, v)
        feed_args.append(f"{n}={f}")
    ok = True
    for wtype, extra in (("s8", []), ("u8", []), ("s8pc", ["--per-channel"])):
        q8 = os.path.join(a.work_dir, f"convs_{wtype}.onnx")
        run([a.tessera, "quantize", f32, "-o", q8, "--weight-type", wtype[:2], "--op-types", "MatMul,Gemm,Conv"] + extra)
        ort_dir, tsr_dir = os.path.join(a.work_dir, "ort_" + wtype), os.path.join(a.work_dir, "tsr_" + wtype)
        run([NODE, os.path.join(HERE, "ort_run.js"), q8, ort_dir] + feed_args)
        cmd = [a.tessera, "run", q8, "--output-dir", tsr_dir]
        for f in feed_args:
            cmd += ["--input", f]
        run(cmd, stdout=subprocess.DEVNULL)
        for i, name in enumerate(BRANCHES):
            want = np.load(os.path.join(ort_dir, f"output_{i}.npy"))
            got = np.load(os.path.join(tsr_dir, f"output_{i}.npy"))
            same = want.shape == got.shape and np.array_equal(want.view(np.int32), got.view(np.int32))
            bad = -1 if want.shape != got.shape else int(np.count_nonzero(want != got))
            print(f"{wtype} {name}: {list(got.shape)}: {'equal' if same else f'{bad} of {want.size} differ'}")
            ok = ok and same
        opt = os.path.join(a.work_dir, f"convs_{wtype}.tsr")
        run([a.tessera, "optimize", q8, "-o", opt], stdout=subprocess.DEVNULL)
        ops = json.loads(run([a.tessera, "inspect", opt, "--json"], stdout=subprocess.PIPE, text=True).stdout)["ops"]
        fused = ops.get("DynamicQuantizeConv", 0) + ops.get("ConvIntegerToFloat", 0) == len(BRANCHES) - 1
        fused = fused and ops.get("ConvInteger", 0) == 1 and ops.get("ConvIntegerToFloat", 0) == 2
        print(f"{wtype}: optimized ops {ops}" + ("" if fused else f" (expected {len(BRANCHES) - 1} fused convs)"))
        ok = ok and fused
    print("dynamic_conv: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
