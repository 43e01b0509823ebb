#!/usr/bin/python3
"""Spelled-out GELU and LayerNorm forms (the optimizer's gelu and layer_norm passes) and
LayerNormalization / Softmax on their row kernels, against onnxruntime-node
(tests/transformers/README.md). `tessera run` optimizes each graph, so a wrong rewrite shows as a
mismatch; near-misses (a wrong constant, an intermediate with a second reader) must stay correct.

GELU (Erf form): the three groupings of 0.5 * x * (1 + erf(x / sqrt 2)) that torch / HF / timm
exports produce, with "/ sqrt 2" as Div or as Mul by 1/sqrt 2; the tanh form of GPT-2's gelu_new.
LayerNorm: ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add (opset 13 axes
attribute and opset 18 axes input), without beta, and LayerNormalization with Mean/InvStdDev;
residual Add + LayerNormalization, post-LN and pre-LN (skip_layer_norm).
"""
import math

import numpy as np

from cases import Case, helper, main, rng

F = np.float32


def n(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def consts(**kw):
    return {k: np.array(v, F) for k, v in kw.items()}


def gelu_cases():
    cs = []
    x = (rng(1).standard_normal((2, 7, 40)) * 2).astype(F)
    c = consts(half=0.5, one=1.0, sqrt2=math.sqrt(2.0), rsqrt2=1 / math.sqrt(2.0), bad=1.5)
    erf_div = [n("Div", ["x", "sqrt2"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["s"])]
    erf_mul = [n("Mul", ["rsqrt2", "x"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["one", "e"], ["s"])]
    forms = {
        # torch.nn.functional.gelu (torch 1.13 export): (x * (1 + erf)) * 0.5
        "torch": [n("Mul", ["x", "s"], ["p"]), n("Mul", ["p", "half"], ["y"])],
        # HF BERT: x * 0.5 * (1 + erf)
        "hf": [n("Mul", ["x", "half"], ["p"]), n("Mul", ["p", "s"], ["y"])],
        # x * ((1 + erf) * 0.5)
        "half_on_s": [n("Mul", ["half", "s"], ["p"]), n("Mul", ["x", "p"], ["y"])],
    }
    for fname, tail in forms.items():
        for sname, head in (("div", erf_div), ("mul", erf_mul)):
            cs.append(Case(f"gelu_erf_{fname}_{sname}", head + tail, {"x": x}, [("y", F, None)], dict(c)))
    # Near-miss: 1.5 instead of 0.5 (still correct, just not rewritten), and the erf read twice.
    cs.append(Case("gelu_near_miss_const", erf_div + [n("Mul", ["x", "bad"], ["p"]), n("Mul", ["p", "s"], ["y"])],
                   {"x": x}, [("y", F, None)], dict(c)))
    cs.append(Case("gelu_near_miss_two_readers", erf_div + [n("Mul", ["x", "half"], ["p"]), n("Mul", ["p", "s"], ["y"])],
                   {"x": x}, [("y", F, None), ("e", F, None)], dict(c)))
    # GPT-2 gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    t = consts(half=0.5, one=1.0, three=3.0, k=0.044715, s2pi=math.sqrt(2 / math.pi))
    tanh = [n("Pow", ["x", "three"], ["x3"]), n("Mul", ["k", "x3"], ["kx3"]), n("Add", ["x", "kx3"], ["inner"]),
            n("Mul", ["s2pi", "inner"], ["arg"]), n("Tanh", ["arg"], ["th"]), n("Add", ["one", "th"], ["s"]),
            n("Mul", ["half", "x"], ["hx"]), n("Mul", ["hx", "s"], ["y"])]
    cs.append(Case("gelu_tanh_gpt2", tanh, {"x": x}, [("y", F, None)], t))
    return cs


def ln_cases():
    cs = []
    r = rng(2)
    for hidden, beta, opset in ((40, True, 17), (384, True, 18), (40, False, 17)):
        x = (r.standard_normal((2, 5, hidden)) * 3 + 1).astype(F)
        inits = {"two": np.array(2.0, F), "eps": np.array(1e-5, F), "gamma": r.standard_normal(hidden).astype(F),
                 "beta": r.standard_normal(hidden).astype(F)}
        if opset >= 18:
            inits["axes"] = np.array([-1], np.int64)
            rm = lambda i, o: n("ReduceMean", [i, "axes"], [o])  # noqa: E731
        else:
            rm = lambda i, o: n("ReduceMean", [i], [o], axes=[-1])  # noqa: E731
        nodes = [rm("x", "m"), n("Sub", ["x", "m"], ["d"]), n("Pow", ["d", "two"], ["d2"]), rm("d2", "v"),
                 n("Add", ["v", "eps"], ["ve"]), n("Sqrt", ["ve"], ["sd"]), n("Div", ["d", "sd"], ["nx"]),
                 n("Mul", ["nx", "gamma"], ["g" if beta else "y"])]
        if beta:
            nodes.append(n("Add", ["g", "beta"], ["y"]))
        else:
            del inits["beta"]
        cs.append(Case(f"ln_decomposed_h{hidden}_opset{opset}{'' if beta else '_nobeta'}", nodes, {"x": x},
                       [("y", F, None)], inits, opsets={"": opset}))
    for shape, axis in (((2, 5, 384), -1), ((3, 4, 6), 1)):
        x = (r.standard_normal(shape) * 2).astype(F)
        nodes = [n("LayerNormalization", ["x", "g", "b"], ["y", "mean", "inv"], axis=axis, epsilon=1e-5)]
        norm = shape[axis:] if axis >= 0 else shape[axis:]
        cs.append(Case(f"layernorm_{'x'.join(map(str, shape))}_axis{axis}", nodes, {"x": x},
                       [("y", F, None), ("mean", F, None), ("inv", F, None)],
                       {"g": r.standard_normal(norm).astype(F), "b": r.standard_normal(norm).astype(F)}))
    # Residual Add + LayerNormalization (the skip_layer_norm pass): post-LN (the sum feeds the norm
    # only) and pre-LN (the sum also continues the residual stream).
    for shape, pre in (((2, 5, 384), False), ((9, 40), True)):
        a, b = (r.standard_normal(shape) * 2).astype(F), r.standard_normal(shape).astype(F)
        h = shape[-1]
        nodes = [n("Add", ["a", "b"], ["s"]), n("LayerNormalization", ["s", "g", "be"], ["ln"], epsilon=1e-12)]
        outs = [("ln", F, None)]
        if pre:
            nodes.append(n("Add", ["s", "ln"], ["y"]))
            outs = [("y", F, None)]
        cs.append(Case(f"skip_ln_{'pre' if pre else 'post'}_{'x'.join(map(str, shape))}", nodes, {"a": a, "b": b}, outs,
                       {"g": r.standard_normal(h).astype(F), "be": r.standard_normal(h).astype(F)}))
    for shape in ((2, 4, 7, 7), (3, 128), (2, 50, 1000)):
        x = (r.standard_normal(shape) * 4).astype(F)
        cs.append(Case(f"softmax_{'x'.join(map(str, shape))}", [n("Softmax", ["x"], ["y"], axis=-1)], {"x": x},
                       [("y", F, None)], rtol=1e-4, atol=1e-6))
    return cs


if __name__ == "__main__":
    main(gelu_cases() + ln_cases())
