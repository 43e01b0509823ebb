#!/usr/bin/python3
"""Attention ops against onnxruntime-node: ONNX Attention (opset 23 / 24) and RotaryEmbedding (23),
com.microsoft MultiHeadAttention, Attention, GroupQueryAttention and RotaryEmbedding, each alone
with variants (3-D / 4-D, causal, bool / float masks, KV cache with past length > 0 and == 0, GQA,
MQA, scale, odd sizes, decode step, long sequence), plus a 2-layer GPT-like decoder written with
plain ops and with the same weights as MultiHeadAttention and GroupQueryAttention models."""
import numpy as np

from cases import MS, Case, helper, main, rng

F = np.float32
OPS23 = {"": 23, MS: 1}
OPS24 = {"": 24, MS: 1}


def randn(g, *shape, scale=1.0):
    return (g.standard_normal(shape) * scale).astype(F)


def put(ins, order, pos, name, value):
    """Binds an optional node input: graph input `name` = value at node input `pos` (None: omitted)."""
    if value is not None:
        ins[name] = value
        order[pos] = name


def one(name, op, inputs, outputs, attrs=None, domain="", opsets=None, order=None, **kw):
    """A one-node case; `inputs` maps names (graph inputs, in order) to arrays; `order` names the
    node's inputs ("" = omitted) when they differ from the dict's order."""
    node = helper.make_node(op, order if order is not None else list(inputs), [o[0] for o in outputs],
                            domain=domain, **(attrs or {}))
    return Case(name, [node], {k: v for k, v in inputs.items()}, outputs, opsets=opsets or OPS23, **kw)


def onnx_attention_cases():
    cs = []
    g = rng(1)

    def add(name, b, qn, kvn, s, l, h, hv=None, rank=4, past=None, mask=None, attrs=None, outs=("Y",),
            opsets=OPS23, nonpad=None):
        hv = hv or h
        if rank == 4:
            q, k, v = randn(g, b, qn, s, h), randn(g, b, kvn, l, h), randn(g, b, kvn, l, hv)
        else:
            q, k, v = randn(g, b, s, qn * h), randn(g, b, l, kvn * h), randn(g, b, l, kvn * hv)
            attrs = dict(attrs or {}, q_num_heads=qn, kv_num_heads=kvn)
        ins = {"Q": q, "K": k, "V": v}
        order = ["Q", "K", "V", "", "", "", ""]
        put(ins, order, 3, "M", mask)
        if past is not None:
            put(ins, order, 4, "PK", randn(g, b, kvn, past, h))
            put(ins, order, 5, "PV", randn(g, b, kvn, past, hv))
        put(ins, order, 6, "NP", nonpad)
        while order and order[-1] == "":
            order.pop()
        names = ["Y", "present_key", "present_value", "qk"]
        node_outs = [n if n in outs else "" for n in names]
        while node_outs[-1] == "":
            node_outs.pop()
        node = helper.make_node("Attention", order, node_outs, **(attrs or {}))
        cs.append(Case("onnx_" + name, [node], ins, [(n, F, None) for n in names if n in outs], opsets=opsets))

    add("4d", 2, 4, 4, 5, 5, 8)
    add("3d", 2, 4, 4, 5, 7, 8, hv=6, rank=3)
    add("4d_causal", 1, 2, 2, 9, 9, 16, attrs={"is_causal": 1})
    add("3d_causal_cross", 2, 3, 3, 4, 6, 8, rank=3, attrs={"is_causal": 1})
    add("bool_mask_2d", 2, 2, 2, 6, 6, 8, mask=(g.random((6, 6)) > 0.3) | np.eye(6, dtype=bool))
    add("float_mask_4d", 2, 3, 3, 5, 7, 8, mask=randn(g, 2, 1, 5, 7))
    add("float_mask_3d_bcast", 2, 3, 3, 5, 7, 8, mask=randn(g, 3, 5, 7))
    add("bool_mask_causal", 1, 2, 2, 6, 6, 8, mask=np.tile(np.arange(6) != 2, (6, 1)), attrs={"is_causal": 1})
    add("past3", 2, 4, 4, 3, 3, 8, past=3, outs=("Y", "present_key", "present_value"))
    add("past3_causal_3d", 2, 4, 4, 3, 3, 8, rank=3, past=3, attrs={"is_causal": 1},
        outs=("Y", "present_key", "present_value"))
    add("past0", 2, 4, 4, 3, 3, 8, past=0, outs=("Y", "present_key", "present_value"))
    add("present_no_past", 1, 2, 2, 3, 3, 8, outs=("Y", "present_key", "present_value"))
    add("gqa_8_2", 2, 8, 2, 5, 5, 16, rank=3, attrs={"is_causal": 1})
    add("gqa_8_2_4d_past", 1, 8, 2, 2, 2, 16, past=4, attrs={"is_causal": 1}, outs=("Y", "present_key", "present_value"))
    add("mqa", 2, 4, 1, 5, 5, 8, rank=3)
    add("scale", 1, 2, 2, 4, 4, 8, attrs={"scale": 0.37})
    add("head24", 1, 3, 3, 7, 7, 24, rank=3, attrs={"is_causal": 1})
    add("decode_s1", 2, 4, 4, 1, 1, 16, past=7, attrs={"is_causal": 1}, outs=("Y", "present_key", "present_value"))
    add("long_300", 1, 2, 2, 300, 300, 32, attrs={"is_causal": 1})
    add("long_300_mask", 1, 2, 2, 300, 300, 16, rank=3, mask=randn(g, 300, 300))
    # ViT-tiny's heads: 197 keys, 5 past the last whole vector of a score row (its masked tail).
    add("vit_197", 1, 3, 3, 197, 197, 64, rank=3)
    add("qk_mode0", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"), mask=randn(g, 4, 5))
    add("qk_mode3", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"),
        attrs={"qk_matmul_output_mode": 3, "is_causal": 1})
    add("softcap", 1, 2, 2, 5, 5, 8, attrs={"softcap": 2.0, "is_causal": 1})
    add("opset24", 1, 2, 2, 4, 4, 8, opsets=OPS24)
    add("opset24_nonpad", 2, 2, 2, 3, 6, 8, opsets=OPS24, nonpad=np.array([4, 6], np.int64))
    add("opset24_nonpad_causal", 2, 4, 2, 2, 6, 8, rank=3, opsets=OPS24, nonpad=np.array([3, 6], np.int64),
        attrs={"is_causal": 1})
    add("qk_mode1", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"), mask=randn(g, 4, 5),
        attrs={"qk_matmul_output_mode": 1})
    add("softcap_mask", 1, 2, 2, 5, 5, 8, attrs={"softcap": 2.0}, mask=randn(g, 5, 5, scale=3.0))
    add("softcap_qk_mode0", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"), mask=randn(g, 4, 5),
        attrs={"softcap": 1.5})
    add("softcap_qk_mode1", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"), mask=randn(g, 4, 5),
        attrs={"qk_matmul_output_mode": 1, "softcap": 1.5})
    add("softcap_qk_mode2", 1, 2, 2, 4, 5, 8, outs=("Y", "present_key", "present_value", "qk"), mask=randn(g, 4, 5),
        attrs={"qk_matmul_output_mode": 2, "softcap": 1.5})
    return cs


def rotary_tables(g, max_pos, half):
    ang = g.random((max_pos, half)).astype(F) * 3
    return np.cos(ang).astype(F), np.sin(ang).astype(F)


def rotary_cases():
    cs = []
    g = rng(2)
    cos, sin = rotary_tables(g, 32, 8)
    pos = g.integers(0, 32, (2, 5)).astype(np.int64)
    y = [("Y", F, None)]
    cs.append(one("onnx_rotary_4d_pos", "RotaryEmbedding", {"X": randn(g, 2, 3, 5, 16), "cos": cos, "sin": sin,
                                                             "pos": pos}, y))
    cs.append(one("onnx_rotary_3d_interleaved", "RotaryEmbedding",
                  {"X": randn(g, 2, 5, 48), "cos": cos, "sin": sin, "pos": pos}, y,
                  attrs={"num_heads": 3, "interleaved": 1}))
    cs.append(one("onnx_rotary_partial", "RotaryEmbedding",
                  {"X": randn(g, 2, 5, 48), "cos": cos[:, :4].copy(), "sin": sin[:, :4].copy(), "pos": pos}, y,
                  attrs={"num_heads": 2, "rotary_embedding_dim": 8}))
    c3, s3 = rotary_tables(g, 10, 8)
    cs.append(one("onnx_rotary_no_pos", "RotaryEmbedding",
                  {"X": randn(g, 2, 2, 5, 16), "cos": c3.reshape(2, 5, 8), "sin": s3.reshape(2, 5, 8)}, y))
    cs.append(one("ms_rotary_3d", "RotaryEmbedding",
                  {"X": randn(g, 2, 5, 48), "pos": pos, "cos": cos, "sin": sin}, y, domain=MS,
                  attrs={"num_heads": 3}))
    cs.append(one("ms_rotary_offset_interleaved", "RotaryEmbedding",
                  {"X": randn(g, 1, 5, 32), "pos": np.array([7], np.int64), "cos": cos, "sin": sin}, y,
                  domain=MS, attrs={"interleaved": 1}))
    cs.append(one("ms_rotary_4d", "RotaryEmbedding",
                  {"X": randn(g, 2, 3, 5, 16), "pos": pos, "cos": cos, "sin": sin}, y, domain=MS))
    return cs


def mha_cases():
    cs = []
    g = rng(3)
    out3 = [("Y", F, None), ("PK", F, None), ("PV", F, None)]

    def add(name, b, n, s, l, h, bias=False, kpm=None, ab=None, past=None, attrs=None, outs=1, kv4=False):
        d = n * h
        ins = {"q": randn(g, b, s, d)}
        if kv4:
            ins["k"], ins["v"] = randn(g, b, n, l, h), randn(g, b, n, l, h)
        else:
            ins["k"], ins["v"] = randn(g, b, l, d), randn(g, b, l, d)
        order = ["q", "k", "v", "", "", "", "", ""]
        put(ins, order, 3, "bias", randn(g, 3 * d) if bias else None)
        put(ins, order, 4, "kpm", kpm)
        put(ins, order, 5, "ab", ab)
        if past is not None:
            put(ins, order, 6, "pk", randn(g, b, n, past, h))
            put(ins, order, 7, "pv", randn(g, b, n, past, h))
        while order[-1] == "":
            order.pop()
        node = helper.make_node("MultiHeadAttention", order, ["Y", "PK", "PV"][:outs], domain=MS,
                                num_heads=n, **(attrs or {}))
        cs.append(Case("ms_mha_" + name, [node], ins, out3[:outs], opsets=OPS23))

    add("basic", 2, 4, 5, 6, 8)
    add("bias", 2, 4, 5, 5, 8, bias=True)
    add("kpm_2d", 2, 2, 4, 6, 8, kpm=np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], np.int32))
    add("kpm_1d", 2, 2, 4, 6, 8, kpm=np.array([3, 6], np.int32))
    add("attn_bias", 2, 3, 4, 6, 8, ab=randn(g, 1, 3, 4, 6))
    add("past_causal", 2, 2, 3, 3, 8, bias=True, past=4, attrs={"unidirectional": 1}, outs=3)
    add("past0", 1, 2, 3, 3, 8, past=0, outs=3)
    add("kv_bnsh", 2, 2, 4, 7, 8, kv4=True)
    add("scale_h24", 1, 3, 5, 5, 24, attrs={"scale": 0.2, "unidirectional": 1})
    return cs


def ms_attention_cases():
    cs = []
    g = rng(4)

    def add(name, b, s, din, n, h, mask=None, past=None, attrs=None, sizes=None):
        dq = n * h
        dtot = 3 * dq if sizes is None else sum(sizes)
        ins = {"x": randn(g, b, s, din), "w": randn(g, din, dtot, scale=0.3), "bias": randn(g, dtot)}
        order = ["x", "w", "bias"]
        if mask is not None:
            ins["mask"] = mask
            order.append("mask")
        outs = [("Y", F, None)]
        if past is not None:
            while len(order) < 4:
                order.append("")
            ins["past"] = randn(g, 2, b, n, past, h)
            order.append("past")
            outs.append(("present", F, None))
        a = dict(attrs or {}, num_heads=n)
        if sizes is not None:
            a["qkv_hidden_sizes"] = sizes
        node = helper.make_node("Attention", order, [o[0] for o in outs], domain=MS, **a)
        cs.append(Case("ms_attention_" + name, [node], ins, outs, opsets=OPS23, rtol=1e-4, atol=2e-4))

    add("bert", 2, 6, 16, 4, 4)
    add("raw_mask", 2, 6, 16, 2, 8, mask=np.array([[1] * 6, [1] * 4 + [0] * 2], np.int32))
    add("lens_mask", 2, 6, 16, 2, 8, mask=np.array([6, 3], np.int32))
    add("end_start_mask", 2, 6, 16, 2, 8, mask=np.array([6, 5, 0, 2], np.int32))
    add("mask_3d", 1, 4, 16, 2, 8, mask=np.tril(np.ones((4, 4), np.int32))[None])
    add("gpt2_past", 2, 3, 16, 2, 8, past=5, attrs={"unidirectional": 1})
    add("gpt2_past0", 1, 4, 16, 2, 8, past=0, attrs={"unidirectional": 1})
    add("qkv_sizes", 1, 5, 12, 2, 8, sizes=[16, 16, 12])
    return cs


def gqa_case(name, g, b, s, n, kvn, h, past, total=None, attrs=None, rotary=False, seqlens=None):
    total = past + s if total is None else total
    ins = {"q": randn(g, b, s, n * h), "k": randn(g, b, s, kvn * h), "v": randn(g, b, s, kvn * h),
           "pk": randn(g, b, kvn, past, h), "pv": randn(g, b, kvn, past, h),
           "seqlens_k": np.array(seqlens if seqlens is not None else [total - 1] * b, np.int32),
           "total": np.array(total, np.int32)}
    if rotary:
        ins["cos"], ins["sin"] = rotary_tables(g, 64, h // 2)
    a = dict(attrs or {}, num_heads=n, kv_num_heads=kvn)
    if rotary:
        a["do_rotary"] = 1
    node = helper.make_node("GroupQueryAttention", list(ins), ["Y", "PK", "PV"], domain=MS, **a)
    return Case("ms_gqa_" + name, [node], ins, [("Y", F, None), ("PK", F, None), ("PV", F, None)], opsets=OPS23)


def gqa_cases():
    g = rng(5)
    return [
        gqa_case("prompt", g, 2, 6, 8, 2, 16, 0),
        gqa_case("decode", g, 2, 1, 8, 2, 16, 7),
        gqa_case("decode_ragged", g, 2, 1, 4, 2, 8, 7, total=8, seqlens=[5, 7]),
        gqa_case("prompt_ragged", g, 2, 6, 4, 2, 8, 0, total=6, seqlens=[3, 5]),
        gqa_case("mqa_continue", g, 1, 3, 4, 1, 8, 5),
        gqa_case("rotary", g, 1, 4, 4, 2, 16, 3, rotary=True),
        gqa_case("rotary_interleaved", g, 2, 1, 4, 2, 16, 6, rotary=True, attrs={"rotary_interleaved": 1}),
        gqa_case("window", g, 1, 8, 2, 2, 8, 0, attrs={"local_window_size": 3}),
        gqa_case("softcap_scale", g, 1, 5, 2, 1, 8, 0, attrs={"softcap": 1.5, "scale": 0.3}),
    ]


def decoder_cases():
    """A 2-layer GPT-like decoder (causal self-attention + ReLU MLP, residuals) with one set of
    weights, as plain ops, as MultiHeadAttention and as GroupQueryAttention."""
    g = rng(6)
    t, d, n, ff = 7, 32, 4, 64
    h = d // n
    x = randn(g, 1, t, d)
    w = {}
    for li in range(2):
        for nm, shp in (("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)), ("w1", (d, ff)), ("w2", (ff, d))):
            w[f"{nm}{li}"] = randn(g, *shp, scale=0.2)
    consts = {"shape_bsnh": np.array([1, t, n, h], np.int64), "shape_bsd": np.array([1, t, d], np.int64),
              "causal": np.tril(np.ones((t, t), bool)), "neg": np.array(-np.inf, F),
              "scale": np.array(1 / np.sqrt(h), F), "seqlens": np.array([t - 1], np.int32),
              "total": np.array(t, np.int32)}

    def mk(kind):
        nodes, cur = [], "x"
        for li in range(2):
            p = f"l{li}_"
            for nm in ("q", "k", "v"):
                nodes.append(helper.make_node("MatMul", [cur, f"w{nm}{li}"], [p + nm]))
            if kind == "plain":
                for nm in ("q", "k", "v"):
                    nodes.append(helper.make_node("Reshape", [p + nm, "shape_bsnh"], [p + nm + "4"]))
                    perm = [0, 2, 3, 1] if nm == "k" else [0, 2, 1, 3]
                    nodes.append(helper.make_node("Transpose", [p + nm + "4"], [p + nm + "t"], perm=perm))
                nodes += [helper.make_node("MatMul", [p + "qt", p + "kt"], [p + "s0"]),
                          helper.make_node("Mul", [p + "s0", "scale"], [p + "s1"]),
                          helper.make_node("Where", ["causal", p + "s1", "neg"], [p + "s2"]),
                          helper.make_node("Softmax", [p + "s2"], [p + "pr"], axis=-1),
                          helper.make_node("MatMul", [p + "pr", p + "vt"], [p + "o4"]),
                          helper.make_node("Transpose", [p + "o4"], [p + "o3"], perm=[0, 2, 1, 3]),
                          helper.make_node("Reshape", [p + "o3", "shape_bsd"], [p + "att"])]
            elif kind == "mha":
                nodes.append(helper.make_node("MultiHeadAttention", [p + "q", p + "k", p + "v"], [p + "att"],
                                              domain=MS, num_heads=n, unidirectional=1))
            else:
                nodes.append(helper.make_node("GroupQueryAttention", [p + "q", p + "k", p + "v", "", "", "seqlens", "total"],
                                              [p + "att", p + "pk", p + "pv"], domain=MS, num_heads=n, kv_num_heads=n))
            nodes += [helper.make_node("MatMul", [p + "att", f"wo{li}"], [p + "proj"]),
                      helper.make_node("Add", [cur, p + "proj"], [p + "r1"]),
                      helper.make_node("MatMul", [p + "r1", f"w1{li}"], [p + "f1"]),
                      helper.make_node("Relu", [p + "f1"], [p + "f2"]),
                      helper.make_node("MatMul", [p + "f2", f"w2{li}"], [p + "f3"]),
                      helper.make_node("Add", [p + "r1", p + "f3"], [p + "out" if li == 0 else "y"])]
            cur = p + "out"
        return Case("decoder_" + kind, nodes, {"x": x}, [("y", F, None)], initializers=dict(w, **consts), opsets=OPS23)

    return [mk("plain"), mk("mha"), mk("gqa")]


if __name__ == "__main__":
    main(onnx_attention_cases() + rotary_cases() + mha_cases() + ms_attention_cases() + gqa_cases() + decoder_cases())
