#!/usr/bin/env python3
"""Where the zoo's times sit against the machine's arithmetic peak and memory bandwidth.

Counts each zoo model's multiply-add work (Conv, ConvTranspose, Gemm, MatMul, at the manifest's
input shapes, via ONNX shape inference with data propagation: 2 FLOPs per multiply-add, the
elementwise ops not counted) and the bytes of the products' constant operands (the weights a run
reads at least once). Reads a `bench/latency.js --json` result and prints per model and thread
count: GFLOP/s of onnxruntime and of Tessera, the share of `threads x peak` each reaches, and the
share of peak a run at `--target` x onnxruntime's time would need. With --bandwidth, also the
weight bytes per second and the share of the bandwidth that target would need (a batch-1 decode
step is bound by it). Where a share is near or above 100%, the target asks for more than the
machine can do: the goal is then bound by the hardware, not by the kernels. Winograd convs do
fewer multiplies than counted here, so a conv model can exceed 100% of peak.

Usage:
  /usr/bin/python3 bench/zoo/roofline.py --zoo /work/zooall --json RESULT.json \
      --peak 270.9 [--bandwidth 29.9,56.5] [--target 0.7] [--out FILE.md]
--peak is GFLOP/s per core: the FMA-loop peak `tessera_bench_gemm` prints ("FMA-loop peak ...
GFLOP/s per core"). Models whose shapes inference cannot resolve (a dynamic KV-cache length)
count the rows of an unresolved MatMul input as 1 and are marked "~".

Errors: a missing manifest, model file or result entry stops with a message naming it (exit 1).
"""
import argparse
import json
import math
import sys
from pathlib import Path

import onnx
from onnx import numpy_helper, shape_inference


def fixed_shapes(model, shapes):
    """Sets the graph inputs' dims to the manifest's concrete shapes."""
    for vi in model.graph.input:
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[vi.name]):
                d.Clear()
                d.dim_value = v


def known_shapes(model):
    out = {}
    g = model.graph
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        out[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in g.initializer:
        out[init.name] = list(init.dims)
    return out


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def prod(xs):
    return math.prod(x if x is not None else 1 for x in xs)


def node_flops(node, shapes):
    """2 x multiply-adds of one node; (flops, resolved)."""
    ins = [shapes.get(x) for x in node.input]
    outs = [shapes.get(x) for x in node.output]
    t = node.op_type
    if t in ("Conv", "ConvTranspose"):
        w, y = ins[1], outs[0]
        if w is None or y is None or None in y:
            return 0, False
        if t == "Conv":  # each output element: Cin/group x kernel multiply-adds
            return 2 * prod(y) * prod(w[1:]), True
        x = ins[0]  # ConvTranspose: each input element scatters into Cout/group x kernel outputs
        return 2 * prod(x) * w[1] * prod(w[2:]), x is not None and None not in x
    if t == "Gemm":
        a, b = ins[0], ins[1]
        if a is None or b is None:
            return 0, False
        k = a[0] if attr(node, "transA", 0) else a[1]
        n = b[0] if attr(node, "transB", 0) else b[1]
        m = a[1] if attr(node, "transA", 0) else a[0]
        return 2 * prod([m, n, k]), None not in (m, n, k)
    if t == "MatMul":
        a, b = ins[0], ins[1]
        if b is None or None in b:
            return 0, False
        k, n = (b[-2], b[-1]) if len(b) >= 2 else (b[0], 1)
        resolved = a is not None and None not in a
        rows = prod(a[:-1]) if a is not None and len(a) >= 2 else 1
        # A's leading dims count the batch (attention's heads), so a batched B adds nothing more.
        return 2 * rows * k * n, resolved
    return 0, True


def count(model_path, shapes_by_input):
    model = onnx.load(str(model_path))
    fixed_shapes(model, shapes_by_input)
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    shapes = known_shapes(inferred)
    inits = {i.name: i for i in model.graph.initializer}
    flops, resolved, read = 0, True, set()
    for node in inferred.graph.node:
        f, ok = node_flops(node, shapes)
        flops += f
        resolved = resolved and ok
        if f:  # the products' constant operands: read once per run at least
            read.update(x for x in node.input if x in inits)
    weight_bytes = sum(numpy_helper.to_array(inits[n]).nbytes for n in read)
    return flops, weight_bytes, resolved


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", required=True, type=Path, help="folder with manifest.json and the .onnx files")
    ap.add_argument("--json", required=True, type=Path, help="bench/latency.js --json result")
    ap.add_argument("--peak", required=True, type=float, help="FMA-loop peak, GFLOP/s per core")
    ap.add_argument("--bandwidth", help="memory read bandwidth in GB/s at 1, 2, ... threads, comma-separated (the "
                    "last one holds for more threads; bench/zoo/mem_bandwidth.cpp): adds the products' weight bytes "
                    "per run against it")
    ap.add_argument("--target", type=float, default=0.7, help="ratio to onnxruntime the goal asks for")
    ap.add_argument("--out", type=Path, help="also write the table to this file")
    args = ap.parse_args()
    bandwidth = [float(x) for x in args.bandwidth.split(",")] if args.bandwidth else []
    for p in (args.zoo / "manifest.json", args.json):
        if not p.is_file():
            sys.exit(f"roofline: {p}: not found")
    manifest = {m["name"]: m for m in json.loads((args.zoo / "manifest.json").read_text())}
    result = json.loads(args.json.read_text())
    lines = [
        f"Peak {args.peak:.1f} GFLOP/s per core (FMA loop); 'at {args.target}x' is the share of the "
        f"threads' peak a run at {args.target} x onnxruntime's time would need.",
        "",
        "| model | GFLOP | weights (MB) | threads | ORT (ms) | Tessera (ms) | ORT GFLOP/s | Tessera GFLOP/s "
        f"| ORT % of peak | Tessera % of peak | at {args.target}x, % of peak |"
        + (f" Tessera weight GB/s | at {args.target}x, % of bandwidth |" if args.bandwidth else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        + (" ---: | ---: |" if args.bandwidth else ""),
    ]
    for entry in result["models"]:
        name = entry["name"]
        if name not in manifest:
            sys.exit(f"roofline: {name}: not in {args.zoo / 'manifest.json'}")
        m = manifest[name]
        path = args.zoo / m["file"]
        if not path.is_file():
            sys.exit(f"roofline: {path}: not found")
        flops, wbytes, resolved = count(path, {i["name"]: i["shape"] for i in m["inputs"]})
        mark = "" if resolved else "~"
        for threads, t in sorted(entry["threads"].items(), key=lambda kv: int(kv[0])):
            peak = args.peak * int(threads)
            bw = bandwidth[min(int(threads), len(bandwidth)) - 1] if bandwidth else 0
            ort, tsr = t["ort_ms"], t["tessera_ms"]
            rate = lambda ms: flops / (ms * 1e6)  # noqa: E731 (GFLOP/s from ms)
            need = rate(args.target * ort) / peak * 100
            lines.append(
                f"| {name} | {mark}{flops / 1e9:.3f} | {wbytes / 1e6:.1f} | {threads} | {ort:.3f} | {tsr:.3f} "
                f"| {rate(ort):.0f} | {rate(tsr):.0f} | {rate(ort) / peak * 100:.0f}% "
                f"| {rate(tsr) / peak * 100:.0f}% | {need:.0f}% |"
                + (f" {wbytes / (tsr * 1e6):.1f} | {wbytes / (args.target * ort * 1e6) / bw * 100:.0f}% |"
                   if args.bandwidth else ""))
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
