"""Writes small ONNX models, one per kernel family of the WebGPU layer (web/js/webgpu_ops.mjs), for
tests/web/webgpu.test.mjs: /usr/bin/python3 make_webgpu_models.py OUT_DIR. Weights are seeded
random constants; every model's inputs are float32 and listed in OUT_DIR/models.json with their
shapes ({file: {inputs: {name: shape (null: unknown rank)}, feed: {name: shape} where the feed's
shape differs, gpu: nodes expected on WebGPU (null: all)}}).

- binary.onnx:   Add/Sub/Mul/Div/Max/Min/Pow with ONNX broadcasting
- unary.onnx:    the activations, one output each
- gelu.onnx:     Gelu, exact and tanh (opset 20)
- matmul.onnx:   batched MatMul with broadcast batch dims (64-row tiles, few rows) and a 1-D operand, Gemm
                 (transA/transB, bias; 32-row tiles)
- norm.onnx:     Softmax, LogSoftmax, LayerNormalization, ReduceMean/Sum/Max
- layout.onnx:   Transpose, Reshape, Flatten, Squeeze/Unsqueeze, Concat, Slice, Expand, Pad, Split,
                 Gather, ConstantOfShape (after a Shape, which runs on the host)
- conv.onnx:     Conv (pads, strides, dilations, groups, bias; 1-D), ConvTranspose, BatchNormalization,
                 pooling
- convfuse.onnx: Conv + activation pairs fused on WebGPU (each conv kernel path), residual Adds, and
                 pairs that are not
- fallback.onnx: Relu -> CumSum (no GPU kernel: wasm) -> Sigmoid, so the run crosses twice
- resize.onnx:   Resize nearest / linear under four coordinate transformations, up and down
- pool3d.onnx:   MaxPool over an input of unknown rank, fed 5-D: falls back to wasm at run time
- lstm.onnx:     a forward LSTM over three steps with initial states, a float32 -> float32 Cast
- if.onnx:       nested Ifs whose conditions depend on the input, branches reading outer values
- loop.onnx:     a Loop whose iteration count depends on the input, with a scan output
- scan.onnx:     a Scan over rows and (reversed) columns, a captured weight, outputs stacked on two axes
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def const(name, shape, lo=-1.0, hi=1.0):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(out, file, nodes, inputs, outputs, inits, table, gpu=None, opset=17, feed=None):
    graph = helper.make_graph(nodes, file[:-5],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, file))
    if gpu is None and any(node.op_type == "Shape" for node in nodes):  # Shape runs on the host
        gpu = [k for k, node in enumerate(nodes) if node.op_type != "Shape"]
    table[file] = {"inputs": {**inputs, **(feed or {})}, "gpu": gpu}


def main(out):
    os.makedirs(out, exist_ok=True)
    t = {}
    n = helper.make_node
    save(out, "binary.onnx", [
        n("Add", ["x", "c4"], ["a"]), n("Sub", ["a", "y"], ["b"]), n("Mul", ["b", "x"], ["c"]),
        n("Div", ["c", "pos"], ["d"]), n("Max", ["d", "x"], ["e"]), n("Min", ["e", "half"], ["f"]),
        n("Pow", ["f", "two"], ["g"]), n("Pow", ["pos", "x"], ["h"]),
    ], {"x": [2, 3, 4], "y": [3, 1]}, ["f", "g", "h"],
        [const("c4", [4]), const("pos", [1, 4], 0.5, 2.0), numpy_helper.from_array(np.float32(0.5), "half"),
         numpy_helper.from_array(np.float32(2.0), "two")], t)

    acts = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Erf", {}), ("Exp", {}), ("Neg", {}), ("Abs", {}),
            ("LeakyRelu", {"alpha": 0.2}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}),
            ("Elu", {"alpha": 0.7}), ("Softplus", {})]
    nodes = [n(op, ["x"], [f"y_{op}"], **kw) for op, kw in acts]
    nodes += [n("Abs", ["x"], ["ax"]), n("Sqrt", ["ax"], ["y_Sqrt"]), n("Clip", ["x", "lo", "hi"], ["y_Clip"])]
    save(out, "unary.onnx", nodes, {"x": [3, 5, 7]}, [f"y_{op}" for op, _ in acts] + ["y_Sqrt", "y_Clip"],
         [numpy_helper.from_array(np.float32(-0.5), "lo"), numpy_helper.from_array(np.float32(0.6), "hi")], t)

    # Gelu is opset 20 (Debian's onnx 1.12 writes it without knowing it: nothing here checks models).
    save(out, "gelu.onnx", [n("Gelu", ["x"], ["g"]), n("Gelu", ["x"], ["gt"], approximate="tanh")],
         {"x": [4, 33]}, ["g", "gt"], [], t, opset=20)

    save(out, "matmul.onnx", [
        n("MatMul", ["a", "w"], ["y1"]), n("MatMul", ["b", "w3"], ["y2"]), n("MatMul", ["v", "w"], ["y3"]),
        n("Gemm", ["m", "gw", "gb"], ["y4"], transB=1, alpha=0.5, beta=2.0),
        n("Gemm", ["mt", "gw2", "gc"], ["y5"], transA=1),
    ], {"a": [2, 3, 70, 17], "b": [3, 5, 17], "v": [17], "m": [20, 17], "mt": [17, 20]},
        ["y1", "y2", "y3", "y4", "y5"],
        [const("w", [17, 6]), const("w3", [1, 17, 18]), const("gw", [9, 17]), const("gb", [9]),
         const("gw2", [17, 9]), const("gc", [20, 1])], t)

    save(out, "norm.onnx", [
        n("Softmax", ["x"], ["s1"], axis=1), n("LogSoftmax", ["x"], ["s2"], axis=-1),
        n("LayerNormalization", ["x", "ls", "lb"], ["ln"], axis=-1, epsilon=1e-5),
        n("LayerNormalization", ["x", "ls2"], ["ln2"], axis=1),
        n("ReduceMean", ["x"], ["rm"], axes=[-1], keepdims=1), n("ReduceSum", ["x", "ax"], ["rs"], keepdims=0),
        n("ReduceMax", ["x"], ["rx"], axes=[0, 2], keepdims=0),
    ], {"x": [2, 5, 6]}, ["s1", "s2", "ln", "ln2", "rm", "rs", "rx"],
        [const("ls", [6]), const("lb", [6]), const("ls2", [5, 6]), ints("ax", [1])], t)

    save(out, "layout.onnx", [
        n("Transpose", ["x"], ["t"], perm=[2, 0, 1]), n("Reshape", ["t", "shp"], ["r"]), n("Flatten", ["x"], ["f"], axis=2),
        n("Unsqueeze", ["f", "ax0"], ["u"]), n("Squeeze", ["u", "ax0"], ["q"]),
        n("Concat", ["x", "x2"], ["c"], axis=1), n("Slice", ["c", "st", "en", "axs", "stp"], ["sl"]),
        n("Expand", ["e", "eshp"], ["ex"]), n("Relu", ["r"], ["rr"]),
        n("Split", ["x", "spl"], ["s0", "s1"], axis=2), n("Split", ["x"], ["s2", "s3", "s4"], axis=1),
        n("Gather", ["x", "gi"], ["ga"], axis=1), n("Gather", ["x", "gi0"], ["gb"]),
        n("Shape", ["x"], ["xs"]), n("ConstantOfShape", ["xs"], ["k1"], value=numpy_helper.from_array(np.array([1.5], np.float32))),
        n("Add", ["k1", "x"], ["k2"]),
        n("Pad", ["x", "pads", "pv"], ["p1"]), n("Pad", ["x", "pads2"], ["p2"], mode="reflect"),
        n("Pad", ["x", "pads2"], ["p3"], mode="edge"),
    ], {"x": [2, 3, 4], "x2": [2, 2, 4], "e": [3, 1]}, ["rr", "q", "c", "sl", "ex", "p1", "p2", "p3", "s0", "s1", "s2", "s3", "s4", "ga", "gb", "k2"],
        [ints("shp", [4, -1]), ints("ax0", [0]), ints("st", [0, 4, 1]), ints("en", [2, -6, 100]), ints("axs", [0, 1, 2]),
         ints("stp", [1, -2, 2]), ints("eshp", [2, 3, 5]), ints("pads", [0, 1, -1, 1, 2, 2]),
         numpy_helper.from_array(np.float32(0.25), "pv"), ints("pads2", [0, 2, 3, 1, 1, 2]),
         ints("spl", [1, 3]), ints("gi", [[2, -1], [0, 0]]), ints("gi0", 1)], t)

    save(out, "conv.onnx", [
        n("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 1]),
        n("Conv", ["c1", "wd"], ["c2"], group=4, pads=[2, 2, 2, 2], dilations=[2, 2]),
        n("BatchNormalization", ["c2", "bs", "bb", "bm", "bv"], ["bn"]), n("Relu", ["bn"], ["r"]),
        n("MaxPool", ["r"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        n("AveragePool", ["r"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["r"], ["gp"]),
        n("Conv", ["s", "w1d"], ["c1d"], auto_pad="SAME_UPPER", strides=[2]),
        n("ConvTranspose", ["r", "wt", "bt"], ["ct"], strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 0]),
        n("ConvTranspose", ["r", "wt2"], ["ct2"], group=2, dilations=[2, 1]),
    ], {"x": [1, 3, 9, 8], "s": [2, 2, 11]}, ["mp", "ap", "gp", "c1d", "ct", "ct2"],
        [const("w1", [4, 3, 3, 3]), const("b1", [4]), const("wd", [4, 1, 3, 3]), const("bs", [4]), const("bb", [4]),
         const("bm", [4]), const("bv", [4], 0.5, 1.5), const("w1d", [3, 2, 3]), const("wt", [4, 3, 3, 2]), const("bt", [3]),
         const("wt2", [4, 2, 2, 3])], t)

    # Convs with their activation fused into the kernel's epilogue (web/js/webgpu_fuse.mjs): the
    # pointwise GEMM (12 rows; 3 rows: the few-rows kernel), the implicit GEMM (70 rows, stride 2),
    # the grouped and depthwise (4 outputs per invocation; multiplier 2, stride 2) kernels; Clip
    # with constant bounds, one bound, none; an activation then a Max / Min with a one-element
    # constant; not fused: a Conv with two consumers, a Conv that is also a graph output.
    save(out, "convfuse.onnx", [
        n("Conv", ["x", "pw", "pb"], ["c1"]), n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", "w3", "b3"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]), n("Clip", ["c2", "zero", "six"], ["r2"]),
        n("Conv", ["r2", "wdw", "bdw"], ["c3"], group=70, pads=[1, 1, 1, 1]), n("HardSwish", ["c3"], ["r3"]),
        n("Conv", ["r3", "pw3"], ["c4"]), n("Sigmoid", ["c4"], ["y_sig"]),
        n("Conv", ["r3", "wg", "bg"], ["c5"], group=5, strides=[1, 2], pads=[0, 1, 0, 1]), n("LeakyRelu", ["c5"], ["y_lrelu"], alpha=0.1),
        n("Conv", ["x", "pw2"], ["c6"]), n("HardSigmoid", ["c6"], ["r6"], alpha=0.3, beta=0.4), n("Clip", ["r6", "half"], ["y_clip1"]),
        n("Conv", ["x", "pw2"], ["c7"]), n("Tanh", ["c7"], ["t7"]), n("Add", ["c7", "t7"], ["y_two"]),
        n("Conv", ["x", "pw2"], ["y_conv"]), n("Relu", ["y_conv"], ["y_relu"]),
        n("Conv", ["x", "pw2"], ["c8"]), n("Clip", ["c8"], ["y_clip0"]),
        n("Conv", ["r1", "wdm"], ["c9"], group=12, strides=[2, 2], pads=[0, 1, 1, 0]), n("Relu", ["c9"], ["y_dwm"]),
        n("Conv", ["x", "pw2"], ["c10"]), n("LeakyRelu", ["c10"], ["l10"], alpha=0.2), n("Max", ["l10", "floor"], ["y_max"]),
        n("Conv", ["x", "pw2"], ["c11"]), n("Relu", ["c11"], ["r11"]), n("Min", ["ceil", "r11"], ["y_min"]),
        # Residual Adds (28-37): 1x1 Conv + r1 then Relu; r1 + 3x3 Conv (no activation); not fused: a
        # broadcast bias Add, an Add whose other operand comes after the Conv (that one's Conv fuses).
        n("Conv", ["x", "pw"], ["c12"]), n("Add", ["c12", "r1"], ["a12"]), n("Relu", ["a12"], ["y_res"]),
        n("Conv", ["r1", "w3r", "b3r"], ["c13"], pads=[1, 1, 1, 1]), n("Add", ["r1", "c13"], ["y_res2"]),
        n("Conv", ["x", "pw"], ["c14"]), n("Add", ["c14", "rb"], ["y_bias"]),
        n("Conv", ["x", "pw"], ["c15"]), n("Conv", ["x", "pw", "pb"], ["c16"]), n("Add", ["c15", "c16"], ["y_late"]),
    ], {"x": [1, 5, 9, 7]}, ["y_sig", "y_lrelu", "y_clip1", "y_two", "y_conv", "y_relu", "y_clip0", "y_dwm", "y_max", "y_min",
                             "y_res", "y_res2", "y_bias", "y_late"],
        [const("pw", [12, 5, 1, 1]), const("pb", [12]), const("w3", [70, 12, 3, 3]), const("b3", [70]),
         numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(0.6), "six"),
         const("wdw", [70, 1, 3, 3]), const("bdw", [70]), const("pw3", [3, 70, 1, 1]), const("wg", [10, 14, 1, 3]), const("bg", [10]),
         const("pw2", [6, 5, 1, 1]), numpy_helper.from_array(np.float32(0.5), "half"), const("wdm", [24, 1, 3, 3]),
         numpy_helper.from_array(np.full([1, 1, 1, 1], -0.1, np.float32), "floor"), numpy_helper.from_array(np.float32(0.3), "ceil"),
         const("w3r", [12, 12, 3, 3]), const("b3r", [12]), const("rb", [12, 1, 1])], t)

    save(out, "fallback.onnx", [
        n("Relu", ["x"], ["r"]), n("CumSum", ["r", "axis"], ["c"]), n("Sigmoid", ["c"], ["y"]),
    ], {"x": [4, 5]}, ["y"], [numpy_helper.from_array(np.array(1, dtype=np.int64), "axis")], t, gpu=[0, 2])

    save(out, "resize.onnx", [
        n("Resize", ["x", "", "s2"], ["up"], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        n("Resize", ["x", "", "", "sz"], ["bl"], mode="linear"),
        n("Resize", ["x", "", "", "sz"], ["ac"], mode="linear", coordinate_transformation_mode="align_corners"),
        n("Resize", ["x", "", "s15"], ["ph"], mode="nearest", coordinate_transformation_mode="pytorch_half_pixel"),
        n("Resize", ["x", "", "", "sz2"], ["dn"], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
    ], {"x": [1, 2, 5, 6]}, ["up", "bl", "ac", "ph", "dn"],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "s2"), ints("sz", [1, 2, 9, 13]),
         numpy_helper.from_array(np.array([1, 1, 1.5, 1.5], dtype=np.float32), "s15"), ints("sz2", [1, 2, 3, 1])], t)

    # LSTM over 3 steps (the state ping-pongs between two buffers), batch 2, hidden 4; a Cast of
    # float32 to float32 (a view).
    save(out, "lstm.onnx", [n("LSTM", ["x", "w", "r", "bias", "", "h0", "c0"], ["y", "yh", "yc"], hidden_size=4),
                            n("Cast", ["y"], ["yf"], to=TensorProto.FLOAT)],
         {"x": [3, 2, 5], "h0": [1, 2, 4]}, ["yf", "yh", "yc"],
         [const("w", [1, 16, 5]), const("r", [1, 16, 4]), const("bias", [1, 32]), const("c0", [1, 2, 4])], t)

    # x of unknown rank: placed on WebGPU, where 3-D pooling is not, so it runs on wasm at run time.
    save(out, "pool3d.onnx", [n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2])], {"x": None}, ["y"], [], t, feed={"x": [1, 2, 4, 4, 4]})

    # If on the input's sum, its else branch an If on the input's max (nested), both reading the
    # outer x and two (captures): y = sigmoid(branch) + x, with branch = 2 * relu(x) (sum > 0),
    # -x (sum <= 0, max > 0.5) or x itself (else: an Identity of the captured input).
    out_info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
    inner = n("If", ["q"], ["e_y"],
              then_branch=helper.make_graph([n("Neg", ["x"], ["t2_y"])], "then2", [], [out_info("t2_y")]),
              else_branch=helper.make_graph([n("Identity", ["x"], ["e2_y"])], "else2", [], [out_info("e2_y")]))
    save(out, "if.onnx", [
        n("ReduceSum", ["x"], ["s"], keepdims=0), n("Greater", ["s", "zero"], ["p"]),
        n("If", ["p"], ["b"],
          then_branch=helper.make_graph([n("Relu", ["x"], ["r"]), n("Mul", ["r", "two"], ["t_y"])], "then", [], [out_info("t_y")]),
          else_branch=helper.make_graph([n("ReduceMax", ["x"], ["m"], keepdims=0), n("Greater", ["m", "half"], ["q"]), inner],
                                        "else", [], [out_info("e_y")])),
        n("Sigmoid", ["b"], ["z"]), n("Add", ["z", "x"], ["y"]),
    ], {"x": [2, 4]}, ["y"], [numpy_helper.from_array(np.float32(v), k) for k, v in (("zero", 0), ("half", 0.5), ("two", 2))], t)
    t["if.onnx"]["controlFlow"] = True  # tests/web/webgpu.test.mjs runs it on its own, each branch

    # Loop (M = 5, stops early when sum(acc) >= 6): acc += i * sigmoid(x) (x and lim captured),
    # its values stacked as a scan output; iterations depend on x.
    vi = helper.make_tensor_value_info
    body = helper.make_graph([
        n("Cast", ["i"], ["fi"], to=TensorProto.FLOAT), n("Sigmoid", ["x"], ["sg"]), n("Mul", ["sg", "fi"], ["inc"]),
        n("Add", ["acc", "inc"], ["acc2"]), n("ReduceSum", ["acc2"], ["r"], keepdims=0), n("Less", ["r", "lim"], ["c2"]),
        n("Identity", ["acc2"], ["sc"]),
    ], "body", [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 4])],
        [vi("c2", TensorProto.BOOL, []), vi("acc2", TensorProto.FLOAT, [2, 4]), vi("sc", TensorProto.FLOAT, [2, 4])])
    save(out, "loop.onnx", [n("Loop", ["m", "yes", "x"], ["acc_final", "steps"], body=body), n("Relu", ["acc_final"], ["y"])],
         {"x": [2, 4]}, ["y", "steps"],
         [ints("m", 5), numpy_helper.from_array(np.array(True), "yes"), numpy_helper.from_array(np.float32(6), "lim")], t)
    t["loop.onnx"]["controlFlow"] = True

    # Scan over x [4, 4] by rows (forward) and by columns (reversed), carrying s [4]:
    # s' = s + sigmoid(row) * col * w (w captured from the outer graph); outputs: the final s, each
    # step's s stacked on axis 0 and tanh(col) stacked on axis 1 in reverse order.
    scan_body = helper.make_graph([
        n("Sigmoid", ["row"], ["sg"]), n("Mul", ["sg", "col"], ["m"]), n("Mul", ["m", "w"], ["mw"]),
        n("Add", ["s", "mw"], ["s2"]), n("Identity", ["s2"], ["o"]), n("Tanh", ["col"], ["o2"]),
    ], "scan_body", [vi("s", TensorProto.FLOAT, [4]), vi("row", TensorProto.FLOAT, [4]), vi("col", TensorProto.FLOAT, [4])],
        [vi("s2", TensorProto.FLOAT, [4]), vi("o", TensorProto.FLOAT, [4]), vi("o2", TensorProto.FLOAT, [4])])
    save(out, "scan.onnx", [n("Scan", ["s0", "x", "x"], ["total", "sums", "cols"], body=scan_body, num_scan_inputs=2,
                              scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[0, 1],
                              scan_output_directions=[0, 1])],
         {"x": [4, 4]}, ["total", "sums", "cols"],
         [numpy_helper.from_array(np.zeros(4, np.float32), "s0"), numpy_helper.from_array(np.float32([1, -2, 0.5, 3]), "w")], t)
    t["scan.onnx"]["controlFlow"] = True

    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump(t, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
