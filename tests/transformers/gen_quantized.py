#!/usr/bin/python3
"""The quantized ops on the int8 GEMM (backends/cpu/kernels/qlinear.cpp) and the quantize_fusion
pass, against onnxruntime-node (tests/transformers/README.md).

- `dyn_mlp*`: onnxruntime quantize_dynamic's pattern (DynamicQuantizeLinear -> MatMulInteger ->
  Cast -> Mul(x_scale * w_scale) [-> Add bias]) in a MiniLM-like block: one DynamicQuantizeLinear
  feeding Q/K/V MatMulIntegers, s8 and u8 weights, per-tensor and per-column weight scales and
  zero points; `tessera run` fuses it into com.microsoft DynamicQuantizeMatMul. Near-misses the
  pass must leave alone (bias of shape [1, N] broadcast, a Cast output read twice).
- DynamicQuantizeMatMul / MatMulIntegerToFloat nodes directly (as onnxruntime-optimized files).
- MatMulInteger / QLinearMatMul: 3-D A, batched non-constant B, per-column zero points and scales.
- ConvInteger / QLinearConv: padding with a non-zero input zero point, stride 2, groups, depthwise,
  1x1, per-channel weights, s8 and u8.
- `qdq_*`: static-quantization QDQ around MatMul / Conv (fused into QLinearMatMul / QLinearConv, as
  onnxruntime does; compared to within one code, the f32 and integer products may round a tie
  apart), an f32 Conv bias and no bias (left unfused / fused).
Every case matched onnxruntime bit for bit on an AVX-512 VNNI host (2026-11-28). The dynamic
cases still allow 2e-2 and the QDQ ones one code: onnxruntime's fused kernels differ per host
(its AVX2 u8 x s8 path saturates pairs of products), and a f32 quotient within an ulp of .5 can
then round to the neighbouring code; the integer and requantized ops must match exactly.
"""
import numpy as np

from cases import MS, Case, helper, main, rng

F = np.float32


def q(r, shape, dtype):
    lo, hi = (-128, 128) if dtype == np.int8 else (0, 256)
    return r.integers(lo, hi, size=shape).astype(dtype)


def linear(nodes, inits, x, xq, xs, xz, name, k, n, r, wdtype=np.int8, per_col=False, zp=False, bias=True):
    """Appends MatMulInteger(xq, W) -> Cast -> Mul(xs * ws) [-> Add b]; returns the output name."""
    inits[name + "_w"] = q(r, (k, n), wdtype)
    ws = (r.uniform(0.002, 0.02, size=(n,) if per_col else ()).astype(F))
    inits[name + "_ws"] = np.asarray(ws, F)
    mm_in = [xq, name + "_w", xz]
    if zp:
        inits[name + "_wz"] = q(r, (n,) if per_col else (), wdtype)
        mm_in.append(name + "_wz")
    nodes.append(helper.make_node("MatMulInteger", mm_in, [name + "_acc"], name=name + "_mm"))
    nodes.append(helper.make_node("Cast", [name + "_acc"], [name + "_accf"], to=1))
    nodes.append(helper.make_node("Mul", [xs, name + "_ws"], [name + "_s"]))
    nodes.append(helper.make_node("Mul", [name + "_accf", name + "_s"], [name + "_y"]))
    if not bias:
        return name + "_y"
    inits[name + "_b"] = r.standard_normal((n,)).astype(F)
    nodes.append(helper.make_node("Add", [name + "_y", name + "_b"], [name + "_out"]))
    return name + "_out"


def dyn_cases():
    cs = []
    for variant, (wdtype, per_col, zp) in {"s8": (np.int8, False, False), "s8_percol_zp": (np.int8, True, True),
                                           "u8_zp": (np.uint8, False, True)}.items():
        r = rng(len(cs) + 10)
        s, h, ff = 16, 32, 64
        nodes, inits = [], {}
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]))
        qkv = [linear(nodes, inits, "x", "xq", "xs", "xz", nm, h, h, r, wdtype, per_col, zp) for nm in ("q", "k", "v")]
        nodes.append(helper.make_node("Add", qkv[:2], ["qk"]))
        nodes.append(helper.make_node("Add", ["qk", qkv[2]], ["qkv"]))
        nodes.append(helper.make_node("Relu", ["qkv"], ["hid"]))
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["hid"], ["hq", "hs", "hz"]))
        up = linear(nodes, inits, "hid", "hq", "hs", "hz", "up", h, ff, r, wdtype, per_col, zp, bias=False)
        nodes.append(helper.make_node("Relu", [up], ["act"]))
        nodes.append(helper.make_node("DynamicQuantizeLinear", ["act"], ["aq", "as", "az"]))
        down = linear(nodes, inits, "act", "aq", "as", "az", "down", ff, h, r, wdtype, per_col, zp)
        nodes.append(helper.make_node("Identity", [down], ["y"]))
        x = r.standard_normal((1, s, h)).astype(F)
        dims = {"x": ["batch", "seq", h]} if variant == "u8_zp" else None  # dynamic dims: still fused
        cs.append(Case(f"dyn_mlp_{variant}", nodes, {"x": x}, [("y", F, None)], inits, rtol=2e-2, atol=2e-2,
                       input_shapes=dims))
    # Near-misses: a [1, N] bias (broadcast, not [N]); the Cast output read twice.
    r = rng(30)
    nodes, inits = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])], {}
    y1 = linear(nodes, inits, "x", "xq", "xs", "xz", "a", 24, 8, r, bias=False)
    inits["bias2d"] = r.standard_normal((1, 8)).astype(F)
    nodes.append(helper.make_node("Add", [y1, "bias2d"], ["y"]))
    linear(nodes, inits, "x", "xq", "xs", "xz", "b", 24, 8, r, bias=False)
    nodes.append(helper.make_node("Add", ["b_accf", "b_y"], ["y2"]))
    cs.append(Case("dyn_near_misses", nodes, {"x": r.standard_normal((5, 24)).astype(F)},
                   [("y", F, None), ("y2", F, None)], inits, rtol=2e-2, atol=2e-2))
    return cs


def contrib_cases():
    cs = []
    for i, (wdtype, per_col, zp, bias, a_shape) in enumerate([
            (np.int8, False, False, True, (2, 7, 40)), (np.int8, True, True, True, (9, 40)),
            (np.uint8, True, True, False, (3, 1, 40)), (np.uint8, False, False, True, (40,))]):
        r = rng(40 + i)
        n = 24
        inits = {"w": q(r, (40, n), wdtype), "ws": np.asarray(r.uniform(0.002, 0.02, (n,) if per_col else ()), F)}
        ins = ["a", "w", "ws", "", ""]
        if zp:
            inits["wz"] = q(r, (n,) if per_col else (), wdtype)
            ins[3] = "wz"
        if bias:
            inits["b"] = r.standard_normal((n,)).astype(F)
            ins[4] = "b"
        while ins[-1] == "":
            ins.pop()
        nd = helper.make_node("DynamicQuantizeMatMul", ins, ["y"], domain=MS)
        cs.append(Case(f"dqmm_{i}", [nd], {"a": r.standard_normal(a_shape).astype(F)}, [("y", F, None)], inits,
                       rtol=2e-2, atol=2e-2))
    r = rng(50)
    inits = {"w": q(r, (40, 16), np.int8), "as": np.asarray(0.05, F), "ws": r.uniform(0.002, 0.02, (16,)).astype(F),
             "az": np.asarray(130, np.uint8), "wz": q(r, (16,), np.int8), "b": r.standard_normal((16,)).astype(F)}
    nd = helper.make_node("MatMulIntegerToFloat", ["a", "w", "as", "ws", "az", "wz", "b"], ["y"], domain=MS)
    cs.append(Case("mmitf", [nd], {"a": q(r, (2, 5, 40), np.uint8)}, [("y", F, None)], inits))
    return cs


def integer_cases():
    cs = []
    r = rng(60)
    # MatMulInteger: 3-D A, constant B with per-column zero points; batched non-constant B.
    inits = {"w": q(r, (33, 17), np.int8), "az": np.asarray(7, np.uint8), "wz": q(r, (17,), np.int8)}
    nd = helper.make_node("MatMulInteger", ["a", "w", "az", "wz"], ["y"])
    cs.append(Case("mmi_const", [nd], {"a": q(r, (2, 9, 33), np.uint8)}, [("y", np.int32, None)], inits))
    nd = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    cs.append(Case("mmi_batched", [nd], {"a": q(r, (3, 4, 20), np.int8), "b": q(r, (3, 20, 6), np.int8)},
                   [("y", np.int32, None)], {"az": np.asarray(-3, np.int8), "bz": np.asarray(5, np.int8)}))
    # QLinearMatMul: per-column B scale and zero point, u8 output; s8 everything.
    for i, (adt, bdt, ydt) in enumerate([(np.uint8, np.int8, np.uint8), (np.int8, np.int8, np.int8)]):
        r = rng(70 + i)
        inits = {"as": np.asarray(0.03, F), "az": q(r, (), adt), "b": q(r, (48, 12), bdt),
                 "bs": r.uniform(0.002, 0.02, (12,)).astype(F), "bz": q(r, (12,), bdt),
                 "ys": np.asarray(0.4, F), "yz": q(r, (), ydt)}
        nd = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
        cs.append(Case(f"qlmm_{i}", [nd], {"a": q(r, (2, 6, 48), adt)}, [("y", ydt, None)], inits, opsets={"": 13}))
    return cs


def conv_cases():
    cs = []
    shapes = [  # (name, x shape, w shape, attrs)
        ("pad_s2", (1, 6, 11, 9), (8, 6, 3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
        ("group", (2, 8, 7, 7), (6, 4, 3, 3), dict(pads=[1, 0, 1, 2], group=2)),
        ("dw", (1, 5, 9, 9), (5, 1, 3, 3), dict(pads=[1, 1, 1, 1], group=5)),
        ("dw_s2", (2, 4, 10, 9), (4, 1, 3, 3), dict(pads=[0, 1, 2, 1], strides=[2, 2], group=4)),
        ("dw_dil", (1, 3, 8, 8), (3, 1, 3, 2), dict(pads=[2, 1, 2, 0], dilations=[2, 1], group=3)),
        ("1x1", (1, 16, 5, 6), (12, 16, 1, 1), {}),
        ("dil", (1, 3, 10, 10), (4, 3, 3, 3), dict(dilations=[2, 2], pads=[2, 2, 2, 2])),
    ]
    for i, (name, xs, wsh, attrs) in enumerate(shapes):
        r = rng(80 + i)
        inits = {"w": q(r, wsh, np.uint8), "xz": np.asarray(r.integers(1, 255), np.uint8),
                 "wz": np.asarray(r.integers(0, 255), np.uint8)}
        nd = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)
        cs.append(Case(f"convi_{name}", [nd], {"x": q(r, xs, np.uint8)}, [("y", np.int32, None)], inits))
        m = wsh[0]
        for xdt in (np.uint8, np.int8):
            inits = {"xs": np.asarray(0.02, F), "xz": q(r, (), xdt), "w": q(r, wsh, np.int8),
                     "ws": r.uniform(0.002, 0.01, (m,)).astype(F), "wz": np.zeros((m,), np.int8),
                     "ys": np.asarray(0.05, F), "yz": q(r, (), xdt), "b": r.integers(-2000, 2000, (m,)).astype(np.int32)}
            nd = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], **attrs)
            cs.append(Case(f"qlconv_{name}_{np.dtype(xdt).name}", [nd], {"x": q(r, xs, xdt)}, [("y", xdt, None)], inits,
                           opsets={"": 13}))
    return cs


def qdq_cases():
    """Static-quantization QDQ around MatMul and Conv (fused into QLinearMatMul / QLinearConv by
    quantize_fusion, as onnxruntime fuses them), and near-misses that stay f32: an f32 bias, a
    weight scale on the wrong axis."""
    cs = []
    for i, (xdt, per_axis) in enumerate([(np.uint8, False), (np.int8, True)]):
        r = rng(90 + i)
        n = 12
        inits = {"xs": np.asarray(0.05, F), "xz": q(r, (), xdt), "w": q(r, (20, n), np.int8),
                 "ws": np.asarray(r.uniform(0.005, 0.02, (n,) if per_axis else ()), F),
                 "wz": np.zeros((n,) if per_axis else (), np.int8), "ys": np.asarray(0.3, F), "yz": q(r, (), xdt)}
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
                 helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
                 helper.make_node("MatMul", ["xf", "wf"], ["yf"]),
                 helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
        cs.append(Case(f"qdq_matmul_{i}", nodes, {"x": q(r, (2, 7, 20), xdt)}, [("y", xdt, None)], inits,
                       opsets={"": 13}, rtol=0, atol=1))
    for i, (xdt, bias) in enumerate([(np.uint8, "i32"), (np.int8, "i32"), (np.uint8, "f32"), (np.uint8, None)]):
        r = rng(95 + i)
        m = 6
        xs = np.float32(0.04)
        ws = r.uniform(0.005, 0.02, (m,)).astype(F)
        inits = {"xs": np.asarray(xs, F), "xz": q(r, (), xdt), "w": q(r, (m, 4, 3, 3), np.int8), "ws": ws,
                 "wz": np.zeros((m,), np.int8), "ys": np.asarray(0.25, F), "yz": q(r, (), xdt)}
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
                 helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0)]
        conv_in = ["xf", "wf"]
        if bias == "i32":
            inits["b"] = r.integers(-3000, 3000, (m,)).astype(np.int32)
            inits["bs"] = (xs * ws).astype(F)
            inits["bz"] = np.zeros((m,), np.int32)
            nodes.append(helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0))
            conv_in.append("bf")
        elif bias == "f32":
            inits["bf"] = r.standard_normal((m,)).astype(F)
            conv_in.append("bf")
        nodes += [helper.make_node("Conv", conv_in, ["yf"], pads=[1, 1, 1, 1], strides=[1, 2]),
                  helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
        cs.append(Case(f"qdq_conv_{i}_{bias}", nodes, {"x": q(r, (1, 4, 9, 8), xdt)}, [("y", xdt, None)], inits,
                       opsets={"": 13}, rtol=0, atol=1))
    return cs


if __name__ == "__main__":
    main(dyn_cases() + contrib_cases() + integer_cases() + conv_cases() + qdq_cases())
