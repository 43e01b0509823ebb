#!/usr/bin/python3
"""Transformer normalizations and the Gelu family against onnxruntime-node (tests/transformers/README.md).

Each op in isolation with its attribute / optional-input / optional-output variants on
[batch, seq, hidden] inputs with odd (37) and BERT-sized (768) hidden sizes: RMSNormalization
(opset 23), SimplifiedLayerNormalization (onnxruntime's, ONNX domain), com.microsoft
SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization, BiasGelu,
FastGelu, QuickGelu, Gelu. Then one 2-layer BERT-like block body (no attention) written twice
with the same weights: plain ops (MatMul, Add, LayerNormalization, Erf-form Gelu) and the fused
contrib ops onnxruntime's optimizer emits (SkipLayerNormalization with bias, BiasGelu).
"""
import numpy as np

from cases import MS, Case, helper, main, rng

F = np.float32
OP23 = {"": 23}
OPMS = {"": 17, MS: 1}


def node(op, ins, outs, ms=True, **attrs):
    return helper.make_node(op, ins, outs, domain=MS if ms else "", **attrs)


def normal(r, shape, scale=1.0, dtype=F):
    return (r.standard_normal(shape) * scale).astype(dtype)


def out(names, dtype=F):
    return [(n, dtype, None) for n in names]


def rms_cases():
    cs = []
    for i, (shape, axis, sshape, eps) in enumerate([((2, 3, 37), -1, (37,), None), ((2, 4, 768), -1, (768,), None),
                                                    ((2, 3, 5), 1, (3, 5), 1e-3), ((2, 3, 5), 1, (5,), None),
                                                    ((2, 3, 6), -2, (1, 6), 1e-2), ((3, 37), 0, (3, 37), None)]):
        r = rng(100 + i)
        attrs = {"axis": axis} if axis != -1 else {}
        if eps is not None:
            attrs["epsilon"] = eps
        name = f"rms_norm_{'x'.join(map(str, shape))}_axis{axis}_scale{'x'.join(map(str, sshape))}"
        cs.append(Case(name, [node("RMSNormalization", ["x", "scale"], ["y"], ms=False, **attrs)],
                       {"x": normal(r, shape)}, out(["y"]), {"scale": normal(r, sshape)}, opsets=OP23))
    for i, (shape, axis, want_inv) in enumerate([((2, 3, 37), -1, True), ((2, 4, 768), -1, False),
                                                 ((2, 3, 5), 1, True)]):
        r = rng(120 + i)
        outs = ["y", "inv_std_var"] if want_inv else ["y"]
        attrs = {"axis": axis} if axis != -1 else {}
        cs.append(Case(f"simplified_ln_{'x'.join(map(str, shape))}_axis{axis}{'_inv' if want_inv else ''}",
                       [node("SimplifiedLayerNormalization", ["x", "scale"], outs, ms=False, epsilon=1e-6, **attrs)],
                       {"x": normal(r, shape)}, out(outs), {"scale": normal(r, shape[axis:])}))
    return cs


def skip_cases():
    cs = []
    # (name, input shape, skip shape, beta, bias, outputs, epsilon)
    variants = [
        ("h37_all_outputs", (2, 3, 37), (2, 3, 37), True, True, ["y", "mean", "inv", "sum"], None),
        ("h768_plain", (2, 4, 768), (2, 4, 768), False, False, ["y"], None),
        ("h768_beta_bias_sum", (2, 4, 768), (2, 4, 768), True, True, ["y", "", "", "sum"], 1e-5),
        ("skip_2d", (2, 3, 37), (3, 37), True, False, ["y", "mean"], None),
        ("skip_1xseq", (2, 3, 37), (1, 3, 37), False, True, ["y", "", "inv"], None),
        ("tokens_2d", (5, 37), (5, 37), True, True, ["y", "mean", "inv", "sum"], 1e-3),
        ("bias_no_beta", (1, 7, 37), (1, 7, 37), False, True, ["y", "", "", "sum"], None),
        # 213 = 3 x 64 + 16 + 5: the row reductions' four-vector steps, a single vector and a scalar tail.
        ("h213_odd", (1, 5, 213), (1, 5, 213), True, False, ["y", "mean", "inv"], None),
    ]
    for i, (name, xs, ss, beta, bias, outs, eps) in enumerate(variants):
        r = rng(200 + i)
        h = xs[-1]
        inits = {"gamma": normal(r, (h,))}
        ins = ["x", "skip", "gamma", "", ""]
        if beta:
            inits["beta"] = normal(r, (h,))
            ins[3] = "beta"
        if bias:
            inits["bias"] = normal(r, (h,))
            ins[4] = "bias"
        while ins[-1] == "":
            ins.pop()
        attrs = {} if eps is None else {"epsilon": eps}
        cs.append(Case(f"skip_ln_{name}", [node("SkipLayerNormalization", ins, outs, **attrs)],
                       {"x": normal(r, xs), "skip": normal(r, ss)}, out([o for o in outs if o]), inits))
        # The simplified (RMS) form: no beta, no mean output.
        sins = ["x", "skip", "gamma"] + (["bias"] if bias else [])
        souts = ["" if o == "mean" else o for o in outs]
        while souts[-1] == "":
            souts.pop()
        sinits = {k: v for k, v in inits.items() if k != "beta"}
        cs.append(Case(f"skip_simplified_ln_{name}", [node("SkipSimplifiedLayerNormalization", sins, souts, **attrs)],
                       {"x": normal(r, xs), "skip": normal(r, ss)}, out([o for o in souts if o]), sinits))
    return cs


def embed_cases():
    cs = []
    # (name, batch, seq, hidden, segment, mask, position_ids shape (None: absent), embedding_sum)
    variants = [("h37_all", 2, 5, 37, True, True, None, True), ("h768_ids_only", 2, 4, 768, False, False, None, False),
                ("pos_ids_1xseq", 2, 5, 37, False, True, (1, 5), True), ("pos_ids_full", 3, 4, 37, True, False, (3, 4), False)]
    for i, (name, b, s, h, seg, mask, pid, want_sum) in enumerate(variants):
        r = rng(300 + i)
        ins = {"input_ids": r.integers(0, 11, (b, s)).astype(np.int32)}
        inits = {"word": normal(r, (11, h)), "pos": normal(r, (8, h))}
        names = ["input_ids", "", "word", "pos", "", "gamma", "beta", "", ""]
        if seg:
            ins["segment_ids"] = r.integers(0, 2, (b, s)).astype(np.int32)
            inits["segemb"] = normal(r, (2, h))
            names[1], names[4] = "segment_ids", "segemb"
        inits["gamma"] = normal(r, (h,))
        inits["beta"] = normal(r, (h,))
        if mask:
            # Rows with zeros first, ones in the middle and a 2: onnxruntime counts the ones.
            m = np.ones((b, s), np.int32)
            m[0, -2:] = 0
            m[-1, 0] = 0
            m[-1, 1] = 2
            ins["mask"] = m
            names[7] = "mask"
        if pid is not None:
            ins["position_ids"] = r.integers(0, 8, pid).astype(np.int32)
            names[8] = "position_ids"
        while names[-1] == "":
            names.pop()
        outs = ["output", "mask_index"] + (["embedding_sum"] if want_sum else [])
        outv = [("output", F, None), ("mask_index", np.int32, None)] + ([("embedding_sum", F, None)] if want_sum else [])
        cs.append(Case(f"embed_ln_{name}", [node("EmbedLayerNormalization", names, outs, epsilon=1e-5)],
                       ins, outv, inits))
    return cs


def gelu_cases():
    cs = []
    for h in (37, 768):
        r = rng(400 + h)
        x = normal(r, (2, 3, h), 2.0)
        cs.append(Case(f"bias_gelu_h{h}", [node("BiasGelu", ["x", "b"], ["y"])], {"x": x}, out(["y"]),
                       {"b": normal(r, (h,))}))
        cs.append(Case(f"fast_gelu_bias_h{h}", [node("FastGelu", ["x", "b"], ["y"])], {"x": x}, out(["y"]),
                       {"b": normal(r, (h,))}))
        cs.append(Case(f"fast_gelu_h{h}", [node("FastGelu", ["x"], ["y"])], {"x": x}, out(["y"]), {}))
        cs.append(Case(f"ms_gelu_h{h}", [node("Gelu", ["x"], ["y"])], {"x": x}, out(["y"]), {}))
        cs.append(Case(f"quick_gelu_h{h}", [node("QuickGelu", ["x"], ["y"])], {"x": x}, out(["y"]), {}))
    r = rng(450)
    wide = np.concatenate([np.linspace(-60, 60, 37, dtype=F), normal(r, (3,), 3.0)]).reshape(2, 20)
    cs.append(Case("quick_gelu_alpha1_wide_range", [node("QuickGelu", ["x"], ["y"], alpha=1.0)], {"x": wide},
                   out(["y"]), {}))
    cs.append(Case("fast_gelu_wide_range", [node("FastGelu", ["x"], ["y"])], {"x": wide}, out(["y"]), {}))
    return cs


def f16_cases():
    """float16 kernels. The graph inputs and outputs stay float32 (ort_refs.js reads no float16
    .npy): Cast to float16 in front of the op, and back after it. Both sides compute in float32
    and round once to float16, so results may differ by one float16 ulp (2^-10 relative): 2e-3."""
    H = np.float16
    cs = []
    r = rng(600)
    x, sk = normal(r, (2, 3, 37)), normal(r, (2, 3, 37))
    g, b, bi = normal(r, (37,), dtype=H), normal(r, (37,), dtype=H), normal(r, (37,), dtype=H)
    tol = {"rtol": 2e-3, "atol": 2e-3}

    def f16_case(name, op, ins, outs, inits, ms=True, opsets=None):
        feeds = {k: v for k, v in (("x", x), ("skip", sk)) if k in ins}
        nodes = [helper.make_node("Cast", [k], [k + "16"], to=10) for k in feeds]
        nodes.append(node(op, [i + "16" if i in feeds else i for i in ins], [o + "16" if o else "" for o in outs], ms=ms))
        nodes += [helper.make_node("Cast", [o + "16"], [o], to=1) for o in outs if o]
        return Case(name, nodes, feeds, out([o for o in outs if o]), inits, opsets=opsets, **tol)

    cs.append(f16_case("f16_skip_ln", "SkipLayerNormalization", ["x", "skip", "g", "b", "bi"], ["y", "", "", "sum"],
                       {"g": g, "b": b, "bi": bi}))
    cs.append(f16_case("f16_skip_simplified_ln", "SkipSimplifiedLayerNormalization", ["x", "skip", "g", "bi"], ["y"],
                       {"g": g, "bi": bi}))
    cs.append(f16_case("f16_simplified_ln", "SimplifiedLayerNormalization", ["x", "g"], ["y"], {"g": g}, ms=False))
    cs.append(f16_case("f16_rms_norm", "RMSNormalization", ["x", "g"], ["y"], {"g": g}, ms=False, opsets=OP23))
    for op, ins in [("FastGelu", ["x", "bi"]), ("BiasGelu", ["x", "bi"]), ("QuickGelu", ["x"]), ("Gelu", ["x"])]:
        cs.append(f16_case(f"f16_{op}", op, ins, ["y"], {"bi": bi} if "bi" in ins else {}))
    return cs


def bert_block(fused, layers=2, b=2, s=5, h=48, inter=96):
    """A 2-layer BERT-like block body: x -> LN(x + x W1 + b1) -> LN(h1 + Gelu(h1 Wi + bi) Wo + bo)."""
    r = rng(500)
    inits, nodes = {}, []
    cur = "x"
    for layer in range(layers):
        p = f"l{layer}_"
        for k, shape in [("w1", (h, h)), ("b1", (h,)), ("g1", (h,)), ("be1", (h,)), ("wi", (h, inter)), ("bi", (inter,)),
                         ("wo", (inter, h)), ("bo", (h,)), ("g2", (h,)), ("be2", (h,))]:
            scale = 0.2 if k.startswith("w") else 0.5
            inits[p + k] = normal(r, shape, scale) + (1.0 if k.startswith("g") else 0.0)
        nodes.append(helper.make_node("MatMul", [cur, p + "w1"], [p + "a"]))
        if fused:
            nodes.append(node("SkipLayerNormalization", [p + "a", cur, p + "g1", p + "be1", p + "b1"], [p + "h1"]))
        else:
            nodes += [helper.make_node("Add", [p + "a", p + "b1"], [p + "ab"]),
                      helper.make_node("Add", [p + "ab", cur], [p + "res1"]),
                      helper.make_node("LayerNormalization", [p + "res1", p + "g1", p + "be1"], [p + "h1"], epsilon=1e-12)]
        nodes.append(helper.make_node("MatMul", [p + "h1", p + "wi"], [p + "f"]))
        if fused:
            nodes.append(node("BiasGelu", [p + "f", p + "bi"], [p + "gl"]))
        else:
            inits[p + "sqrt2"] = np.array(np.sqrt(2.0), F)
            inits[p + "one"] = np.array(1.0, F)
            inits[p + "half"] = np.array(0.5, F)
            nodes += [helper.make_node("Add", [p + "f", p + "bi"], [p + "fb"]),
                      helper.make_node("Div", [p + "fb", p + "sqrt2"], [p + "fd"]),
                      helper.make_node("Erf", [p + "fd"], [p + "fe"]),
                      helper.make_node("Add", [p + "fe", p + "one"], [p + "f1"]),
                      helper.make_node("Mul", [p + "fb", p + "f1"], [p + "fm"]),
                      helper.make_node("Mul", [p + "fm", p + "half"], [p + "gl"])]
        nodes.append(helper.make_node("MatMul", [p + "gl", p + "wo"], [p + "o"]))
        nxt = p + "out" if layer < layers - 1 else "y"
        if fused:
            nodes.append(node("SkipLayerNormalization", [p + "o", p + "h1", p + "g2", p + "be2", p + "bo"], [nxt]))
        else:
            nodes += [helper.make_node("Add", [p + "o", p + "bo"], [p + "ob"]),
                      helper.make_node("Add", [p + "ob", p + "h1"], [p + "res2"]),
                      helper.make_node("LayerNormalization", [p + "res2", p + "g2", p + "be2"], [nxt], epsilon=1e-12)]
        cur = nxt
    x = normal(rng(501), (b, s, h))
    return Case(f"bert_block_2layer_{'fused' if fused else 'plain'}", nodes, {"x": x}, out(["y"]), inits)


def cases():
    return rms_cases() + skip_cases() + embed_cases() + gelu_cases() + f16_cases() + [bert_block(False), bert_block(True)]


if __name__ == "__main__":
    main(cases())
