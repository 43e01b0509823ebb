#!/usr/bin/python3
"""Attention input forms beyond gen_attention.py, against onnxruntime-node: com.microsoft
GroupQueryAttention with packed QKV (key and value absent, the onnxruntime-genai export form) with
and without rotary, at prefill and decode, and its later inputs and output_qk; com.microsoft
MultiHeadAttention with bias and a past, bias with 4-D key / value, output_qk;
float16 ONNX Attention and RotaryEmbedding, com.microsoft MultiHeadAttention, GroupQueryAttention,
Attention and RotaryEmbedding (Cast around the op).

Forms onnxruntime 1.30's CPU EP rejects, so not checked here: MultiHeadAttention packed QKV / KV,
com.microsoft Attention with do_rotary = 1 or past_present_share_buffer = 1, and
GroupQueryAttention rotary with a head size not a multiple of 16."""
import numpy as np

from cases import MS, Case, helper, main, rng
from gen_attention import OPS23, randn, rotary_tables

F = np.float32
OUT3 = [("Y", F, None), ("PK", F, None), ("PV", F, None)]


def gqa_packed(name, g, b, s, n, kvn, h, past, rotary=False, attrs=None, seqlens=None, total=None):
    total = past + s if total is None else total
    ins = {"qkv": randn(g, b, s, (n + 2 * kvn) * h), "pk": randn(g, b, kvn, past, h), "pv": randn(g, b, kvn, past, h),
           "seqlens_k": np.array(seqlens if seqlens is not None else [total - 1] * b, np.int32),
           "total": np.array(total, np.int32)}
    order = ["qkv", "", "", "pk", "pv", "seqlens_k", "total"]
    a = dict(attrs or {}, num_heads=n, kv_num_heads=kvn)
    if rotary:
        ins["cos"], ins["sin"] = rotary_tables(g, 64, h // 2)
        order += ["cos", "sin"]
        a["do_rotary"] = 1
    node = helper.make_node("GroupQueryAttention", order, ["Y", "PK", "PV"], domain=MS, **a)
    return Case("gqa_packed_" + name, [node], ins, OUT3, opsets=OPS23)


def gqa_cases():
    g = rng(21)
    return [
        gqa_packed("prefill", g, 2, 6, 8, 2, 16, 0),
        gqa_packed("decode", g, 2, 1, 8, 2, 16, 7),
        gqa_packed("rotary_prefill", g, 1, 5, 4, 2, 16, 0, rotary=True),
        gqa_packed("rotary_decode", g, 2, 1, 4, 2, 16, 9, rotary=True),
        gqa_packed("rotary_interleaved_decode", g, 1, 1, 4, 1, 16, 4, rotary=True, attrs={"rotary_interleaved": 1}),
        gqa_packed("rotary_continue", g, 1, 3, 6, 2, 32, 5, rotary=True),
        gqa_packed("rotary_ragged_decode", g, 2, 1, 4, 2, 16, 7, rotary=True, total=8, seqlens=[5, 7]),
    ]


def gqa_extra(name, g, b, s, past, extra, attrs=None, rotary=False, n=4, kvn=2, h=16):
    """GroupQueryAttention with its later optional inputs: `extra` = [(node input index, name, array)]
    (9 position_ids, 10 attention_bias, 11 head_sink)."""
    total = past + s
    ins = {"q": randn(g, b, s, n * h), "k": randn(g, b, s, kvn * h), "v": randn(g, b, s, kvn * h),
           "pk": randn(g, b, kvn, past, h), "pv": randn(g, b, kvn, past, h),
           "seqlens_k": np.array([total - 1] * b, np.int32), "total": np.array(total, np.int32)}
    order = list(ins) + ["", ""]
    a = dict(attrs or {}, num_heads=n, kv_num_heads=kvn)
    if rotary:
        ins["cos"], ins["sin"] = rotary_tables(g, 64, h // 2)
        order[7:9] = ["cos", "sin"]
        a["do_rotary"] = 1
    for pos, nm, arr in extra:
        order += [""] * (pos + 1 - len(order))
        ins[nm] = arr
        order[pos] = nm
    node = helper.make_node("GroupQueryAttention", order, ["Y", "PK", "PV"], domain=MS, **a)
    return Case("gqa_" + name, [node], ins, OUT3, opsets=OPS23)


def gqa_extra_cases():
    g = rng(25)
    return [
        gqa_extra("smooth_softmax_prefill", g, 2, 5, 0, [], {"smooth_softmax": 1}),
        gqa_extra("smooth_softmax_decode", g, 2, 1, 6, [], {"smooth_softmax": 1}),
        gqa_extra("head_sink_prefill", g, 2, 5, 0, [(11, "sink", randn(g, 4))]),
        gqa_extra("head_sink_decode_window", g, 2, 1, 6, [(11, "sink", randn(g, 4, scale=3.0))],
                  {"local_window_size": 4}),
        gqa_extra("attention_bias", g, 2, 5, 0, [(10, "ab", randn(g, 2, 4, 5, 5))]),
        gqa_extra("attention_bias_bcast_decode", g, 2, 1, 4, [(10, "ab", randn(g, 1, 4, 1, 5))]),
        gqa_extra("position_ids_continue", g, 1, 3, 4, [(9, "pos", np.array([[9, 10, 11]], np.int64))],
                  rotary=True),
        # onnxruntime ignores position_ids on the first prompt (positions 0..S-1): so does Tessera.
        gqa_extra("position_ids_prefill", g, 2, 4, 0, [(9, "pos", np.array([[0, 1, 2, 3], [5, 6, 7, 8]], np.int64))],
                  rotary=True),
        gqa_extra("position_ids_decode", g, 2, 1, 5, [(9, "pos", np.array([[3], [20]], np.int64))], rotary=True),
    ]


def gqa_qk(name, g, mode, s, past, attrs=None, bias=False):
    """GroupQueryAttention's output_qk (qk_output 1: scores after softcap and attention_bias, 2: softmax)."""
    b, n, kvn, h = 2, 2, 1, 16
    extra = [(10, "ab", randn(g, 1, n, s, past + s))] if bias else []
    c = gqa_extra(name, g, b, s, past, extra, dict(attrs or {}, qk_output=mode), n=n, kvn=kvn, h=h)
    c.nodes[0].output.append("QK")
    c.outputs = OUT3 + [("QK", F, None)]
    return c


def gqa_qk_cases():
    g = rng(26)
    return [
        gqa_qk("qk_scores_prefill", g, 1, 5, 0),
        gqa_qk("qk_scores_softcap_bias", g, 1, 4, 0, {"softcap": 1.5}, bias=True),
        gqa_qk("qk_softmax_decode", g, 2, 1, 6),
        gqa_qk("qk_softmax_window_sink", g, 2, 6, 0, {"local_window_size": 3, "smooth_softmax": 1}),
    ]


def mha_bias_past(name, g, b, n, s, h, past, attrs=None):
    """MultiHeadAttention with bias (added to the new key / value rows only) and a past KV cache."""
    d = n * h
    ins = {"q": randn(g, b, s, d), "k": randn(g, b, s, d), "v": randn(g, b, s, d), "bias": randn(g, 3 * d),
           "pk": randn(g, b, n, past, h), "pv": randn(g, b, n, past, h)}
    node = helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "", "", "pk", "pv"], ["Y", "PK", "PV"],
                            domain=MS, num_heads=n, **(attrs or {}))
    return Case("mha_" + name, [node], ins, OUT3, opsets=OPS23)


def mha_qk(name, g, b, n, s, l, h, kpm=None, ab=False, attrs=None):
    """MultiHeadAttention's 4th output, output_qk [B, N, S, L]."""
    d = n * h
    ins = {"q": randn(g, b, s, d), "k": randn(g, b, l, d), "v": randn(g, b, l, d)}
    order = ["q", "k", "v"]
    if kpm is not None or ab:
        order += ["", "", ""]
    if kpm is not None:
        ins["kpm"] = kpm
        order[4] = "kpm"
    if ab:
        ins["ab"] = randn(g, 1, n, s, l)
        order[5] = "ab"
    node = helper.make_node("MultiHeadAttention", order, ["Y", "", "", "QK"], domain=MS, num_heads=n, **(attrs or {}))
    return Case("mha_" + name, [node], ins, [("Y", F, None), ("QK", F, None)], opsets=OPS23)


def mha_cases():
    # Packed QKV ([B, S, N, 3, H] query) and packed KV ([B, L, N, 2, H] key) are not here:
    # onnxruntime's CPU EP rejects both ("not implemented for CPU").
    g = rng(22)
    d = 16
    kv4 = {"q": randn(g, 2, 3, d), "k": randn(g, 2, 2, 5, 8), "v": randn(g, 2, 2, 5, 8), "bias": randn(g, 3 * d)}
    return [
        mha_bias_past("bias_past", g, 2, 2, 1, 8, 6),
        mha_bias_past("bias_past_causal", g, 1, 4, 3, 8, 2, attrs={"unidirectional": 1}),
        # 4-D key / value with bias: onnxruntime adds the bias to the query only.
        Case("mha_kv_bnsh_bias", [helper.make_node("MultiHeadAttention", list(kv4), ["Y"], domain=MS, num_heads=2)],
             kv4, [("Y", F, None)], opsets=OPS23),
        mha_qk("qk", g, 2, 2, 3, 4, 8),
        mha_qk("qk_masks_causal", g, 2, 2, 4, 4, 8, kpm=np.array([[1, 1, 1, 0], [1, 1, 1, 1]], np.int32), ab=True,
               attrs={"unidirectional": 1}),
    ]


def f16(name, op, feeds, order, outs, attrs, domain="", f32_inputs=(), tol=2e-3):
    """The op in float16 between Cast nodes: graph inputs and outputs stay float32 (ort_refs.js
    reads no float16 .npy). Tessera converts the float16 inputs to float32, computes in float32
    and rounds the outputs once; onnxruntime's float16 CPU kernels round intermediates (scores,
    probabilities, partial sums) to float16 as well, so outputs of magnitude ~1-3 differ by up to a
    few float16 epsilons (2^-10 ~ 1e-3; at most 2e-3 seen here, 1/3 of the bound): 2e-3."""
    cast = [k for k in feeds if k not in f32_inputs and feeds[k].dtype == F]
    nodes = [helper.make_node("Cast", [k], [k + "16"], to=10) for k in cast]
    nodes.append(helper.make_node(op, [i + "16" if i in cast else i for i in order], [o + "16" for o, _, _ in outs],
                                  domain=domain, **attrs))
    nodes += [helper.make_node("Cast", [o + "16"], [o], to=1) for o, _, _ in outs]
    return Case("f16_" + name, nodes, feeds, outs, opsets=OPS23, rtol=tol, atol=tol)


def f16_cases():
    g = rng(24)
    cs = []
    q, k, v = randn(g, 2, 5, 32), randn(g, 2, 7, 16), randn(g, 2, 7, 16)
    cs.append(f16("onnx_attention_gqa_3d", "Attention", {"Q": q, "K": k, "V": v}, ["Q", "K", "V"], [("Y", F, None)],
                  {"q_num_heads": 4, "kv_num_heads": 2}))
    ins = {"Q": randn(g, 1, 2, 3, 8), "K": randn(g, 1, 2, 3, 8), "V": randn(g, 1, 2, 3, 8),
           "pastk": randn(g, 1, 2, 4, 8), "pastv": randn(g, 1, 2, 4, 8)}
    cs.append(f16("onnx_attention_past_causal", "Attention", ins, ["Q", "K", "V", "", "pastk", "pastv"], OUT3,
                  {"is_causal": 1}))
    ins = {"q": randn(g, 2, 4, 16), "k": randn(g, 2, 4, 16), "v": randn(g, 2, 4, 16), "bias": randn(g, 48)}
    cs.append(f16("mha_bias", "MultiHeadAttention", ins, list(ins), [("Y", F, None)], {"num_heads": 2}, MS))
    ins = {"q": randn(g, 1, 6, 32), "k": randn(g, 1, 6, 16), "v": randn(g, 1, 6, 16),
           "pk": randn(g, 1, 2, 0, 8), "pv": randn(g, 1, 2, 0, 8),
           "seqlens_k": np.array([5], np.int32), "total": np.array(6, np.int32)}
    cs.append(f16("gqa_prefill", "GroupQueryAttention", ins, list(ins), OUT3, {"num_heads": 4, "kv_num_heads": 2}, MS))
    cos, sin = rotary_tables(g, 32, 8)
    ins = {"qkv": randn(g, 2, 1, 128), "pk": randn(g, 2, 2, 5, 16), "pv": randn(g, 2, 2, 5, 16),
           "seqlens_k": np.array([5, 5], np.int32), "total": np.array(6, np.int32), "cos": cos, "sin": sin}
    cs.append(f16("gqa_packed_rotary_decode", "GroupQueryAttention", ins,
                  ["qkv", "", "", "pk", "pv", "seqlens_k", "total", "cos", "sin"], OUT3,
                  {"num_heads": 4, "kv_num_heads": 2, "do_rotary": 1}, MS))
    ins = {"x": randn(g, 2, 5, 32), "w": randn(g, 32, 48, scale=0.3), "bias": randn(g, 48)}
    # Tessera's output equals a float32 numpy evaluation of the same float16 inputs rounded once to
    # float16 (checked by hand: max difference 0); onnxruntime's float16 com.microsoft Attention
    # keeps the QKV projection and more intermediates in float16 and lands up to 6.2e-3 from it
    # (values up to ~3): 1e-2.
    cs.append(f16("ms_attention_causal", "Attention", ins, list(ins), [("Y", F, None)],
                  {"num_heads": 2, "unidirectional": 1}, MS, tol=1e-2))
    cos, sin = rotary_tables(g, 16, 8)
    pos = g.integers(0, 16, (2, 5)).astype(np.int64)
    ins = {"X": randn(g, 2, 5, 32), "cos": cos, "sin": sin, "pos": pos}
    cs.append(f16("onnx_rotary_3d", "RotaryEmbedding", ins, list(ins), [("Y", F, None)], {"num_heads": 2}))
    ins = {"X": randn(g, 2, 5, 32), "pos": pos, "cos": cos, "sin": sin}
    cs.append(f16("ms_rotary_interleaved", "RotaryEmbedding", ins, list(ins), [("Y", F, None)],
                  {"num_heads": 2, "interleaved": 1}, MS))
    return cs


if __name__ == "__main__":
    main(gqa_cases() + gqa_extra_cases() + gqa_qk_cases() + mha_cases() + f16_cases())
