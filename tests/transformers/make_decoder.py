"""A small GPT-like decoder with a KV cache, in plain ONNX opset 17 ops, with seeded random weights.

The test model of tsr::generate (core/include/tessera/generate.h), tessera-web's model.generate()
and bench/generate.js. Inputs and outputs follow the transformers.js / Optimum naming of
decoder-with-past exports:

    input_ids                    int64 [1, S]
    past_key_values.{i}.key      float [1, HEADS, P, HEAD_DIM]   (P may be 0: the prefill step)
    past_key_values.{i}.value    float [1, HEADS, P, HEAD_DIM]
 -> logits                       float [1, S, VOCAB]
    present.{i}.key / .value     float [1, HEADS, P + S, HEAD_DIM]  (Concat(past, new) on axis 2)

Per layer (pre-LayerNorm, GPT-2 style): LayerNormalization, Q/K/V MatMul+Add, Reshape and
Transpose into heads, Concat with the past, scaled Q.K^T plus a causal mask built from the shapes
(query row r sits at position P + r and sees keys 0..P+r), Softmax, Reshape back, output
projection, residual; LayerNormalization, MLP with Gelu written as x * 0.5 * (1 + Erf(x/sqrt 2)),
residual. Token and position embeddings are Gathers (positions P .. P+S-1 come from the past's
shape); the final LayerNormalization feeds lm_head (a MatMul).

With int4=True (--int4) every linear layer (Q, K, V, output projection, fc1, fc2, lm_head) is a
com.microsoft MatMulNBits instead, its 4-bit weights quantized block-wise along K from the same
seeded f32 weights (quant4.py; asymmetric with packed u8 zero points, the default of onnxruntime's
MatMul4BitsQuantizer); biases stay separate Adds and the embeddings stay f32, as in int4 exports.

    make_decoder.py OUT.onnx [--layers 2 --hidden 128 --heads 4 --vocab 1000 --seed 0]
                             [--int4 [--block-size 32]]
"""
import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

from cases import Parts

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quant4 import pack_zero_points, quantize  # noqa: E402


def decoder_model(layers=2, hidden=128, heads=4, vocab=1000, max_pos=512, seed=0, int4=False, block_size=32):
    assert hidden % heads == 0
    hd = hidden // heads
    parts = Parts(seed)
    r, inits, nodes, w, c, node = parts.r, parts.inits, parts.nodes, parts.w, parts.c, parts.node
    # The padding codes of a partial last block come from their own stream, so that the f32 weights
    # drawn from r are the same with and without int4.
    pad_rng = np.random.default_rng(seed + 1000)

    def matmul(x, name, n_in, n_out, std, out):
        """x @ W with W [n_in, n_out] seeded; int4: MatMulNBits on W^T [N = n_out, K = n_in] quantized."""
        if not int4:
            return node("MatMul", [x, w(name, [n_in, n_out], std)], [out])
        weight = (r.standard_normal([n_in, n_out]) * std).astype(np.float32)
        b, scales, zp, _ = quantize(weight.T, 4, block_size, False, pad_rng)
        c(name + ".q4", b)
        c(name + ".scales", scales)
        c(name + ".zero_points", pack_zero_points(zp, 4))
        nodes.append(helper.make_node("MatMulNBits", [x, name + ".q4", name + ".scales", name + ".zero_points"],
                                      [out], name=out + "_MatMulNBits", domain="com.microsoft",
                                      K=n_in, N=n_out, bits=4, block_size=block_size))
        return out

    def norm_params(prefix):
        return (c(prefix + ".gamma", (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32)),
                c(prefix + ".beta", (0.1 * r.standard_normal(hidden)).astype(np.float32)))

    def layer_norm(x, prefix):
        g, b = norm_params(prefix)
        return node("LayerNormalization", [x, g, b], [prefix + ".out"], axis=-1, epsilon=1e-5)

    def linear(x, prefix, n_in, n_out):
        y = matmul(x, prefix + ".weight", n_in, n_out, n_in ** -0.5, prefix + ".mm")
        return node("Add", [y, w(prefix + ".bias", [n_out], 0.02)], [prefix + ".out"])

    c("shape_heads", np.array([0, 0, heads, hd], np.int64))
    c("shape_hidden", np.array([0, 0, hidden], np.int64))
    c("zero_i64", np.array(0, np.int64))
    c("one_i64", np.array(1, np.int64))
    c("axis0", np.array([0], np.int64))
    c("axis1", np.array([1], np.int64))
    c("idx2", np.array([2], np.int64))
    c("scale", np.array(hd ** -0.5, np.float32))
    c("mask_zero", np.array(0.0, np.float32))
    c("mask_neg", np.array(-1e9, np.float32))
    c("half", np.array(0.5, np.float32))
    c("one_f", np.array(1.0, np.float32))
    c("inv_sqrt2", np.array(2 ** -0.5, np.float32))

    # Sequence lengths from the shapes: S (new tokens), P (past), T = P + S.
    node("Shape", ["input_ids"], ["ids_shape"])
    node("Gather", ["ids_shape", "one_i64"], ["S"], axis=0)
    node("Shape", ["past_key_values.0.key"], ["past_shape"])
    node("Gather", ["past_shape", "idx2"], ["P1"], axis=0)
    node("Squeeze", ["P1", "axis0"], ["P"])
    node("Add", ["P", "S"], ["T"])
    # Positions P .. T-1; causal mask [S, T]: key j visible from query row i iff j <= P + i.
    node("Range", ["P", "T", "one_i64"], ["positions"])
    node("Range", ["zero_i64", "T", "one_i64"], ["key_positions"])
    node("Unsqueeze", ["positions", "axis1"], ["query_col"])
    node("LessOrEqual", ["key_positions", "query_col"], ["visible"])
    node("Where", ["visible", "mask_zero", "mask_neg"], ["mask"])

    tok = node("Gather", [w("wte", [vocab, hidden], 1.0), "input_ids"], ["tok_emb"], axis=0)
    pos = node("Gather", [w("wpe", [max_pos, hidden], 0.3), "positions"], ["pos_emb"], axis=0)
    x = node("Add", [tok, pos], ["h0"])

    for i in range(layers):
        p = f"layer{i}"
        h = layer_norm(x, p + ".ln1")
        heads_of = {}
        for t in ("q", "k", "v"):
            y = linear(h, f"{p}.{t}", hidden, hidden)
            y = node("Reshape", [y, "shape_heads"], [f"{p}.{t}.heads"])
            heads_of[t] = node("Transpose", [y], [f"{p}.{t}.t"], perm=[0, 2, 1, 3])
        k = node("Concat", [f"past_key_values.{i}.key", heads_of["k"]], [f"present.{i}.key"], axis=2)
        v = node("Concat", [f"past_key_values.{i}.value", heads_of["v"]], [f"present.{i}.value"], axis=2)
        kt = node("Transpose", [k], [p + ".kT"], perm=[0, 1, 3, 2])
        s = node("MatMul", [heads_of["q"], kt], [p + ".qk"])
        s = node("Mul", [s, "scale"], [p + ".scaled"])
        s = node("Add", [s, "mask"], [p + ".masked"])
        a = node("Softmax", [s], [p + ".probs"], axis=-1)
        o = node("MatMul", [a, v], [p + ".ctx"])
        o = node("Transpose", [o], [p + ".ctx.t"], perm=[0, 2, 1, 3])
        o = node("Reshape", [o, "shape_hidden"], [p + ".ctx.merged"])
        o = linear(o, p + ".attn_out", hidden, hidden)
        x = node("Add", [x, o], [p + ".res1"])
        h = layer_norm(x, p + ".ln2")
        f = linear(h, p + ".fc1", hidden, 4 * hidden)
        e = node("Mul", [f, "inv_sqrt2"], [p + ".fc1.scaled"])
        e = node("Erf", [e], [p + ".erf"])
        e = node("Add", [e, "one_f"], [p + ".erf1"])
        e = node("Mul", [e, "half"], [p + ".erf_half"])
        f = node("Mul", [f, e], [p + ".gelu"])
        f = linear(f, p + ".fc2", 4 * hidden, hidden)
        x = node("Add", [x, f], [p + ".res2"])

    h = layer_norm(x, "ln_f")
    # Logits with a spread of a few units, so that greedy picks are decided by clear margins.
    matmul(h, "lm_head", hidden, vocab, 3 * hidden ** -0.5, "logits")

    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "sequence_length"])]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, "sequence_length", vocab])]
    for i in range(layers):
        for kv in ("key", "value"):
            ins.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                                     [1, heads, "past_sequence_length", hd]))
            outs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                      [1, heads, "total_sequence_length", hd]))
    g = helper.make_graph(nodes, "tiny_decoder", ins, outs, inits)
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("com.microsoft", 1)] if int4 else [])
    m = helper.make_model(g, opset_imports=opsets, producer_name="tessera-tests")
    m.ir_version = 8
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--int4", action="store_true", help="linear layers as com.microsoft MatMulNBits, 4-bit")
    p.add_argument("--block-size", type=int, default=32, help="the int4 quantization block along K")
    a = p.parse_args()
    m = decoder_model(a.layers, a.hidden, a.heads, a.vocab, seed=a.seed, int4=a.int4, block_size=a.block_size)
    with open(a.out, "wb") as f:
        f.write(m.SerializeToString())
    q = f", int4 MatMulNBits block {a.block_size}" if a.int4 else ""
    print(f"wrote {a.out}: {a.layers} layers, hidden {a.hidden}, {a.heads} heads, vocab {a.vocab}{q}")


if __name__ == "__main__":
    main()
