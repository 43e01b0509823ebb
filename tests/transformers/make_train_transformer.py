"""A small 2-layer transformer encoder/classifier for gradient and training tests, seeded weights.

Opset 23 (ONNX Attention, RMSNormalization) plus com.microsoft contrib ops, the ops onnxruntime's
transformer optimizer leaves in training-relevant graphs:

    x [N, SEQ, FEAT] -> MatMul+Add (W_in, b_in) + position table        h0 [N, SEQ, HIDDEN]
    layer 1 (GQA, not causal): RMSNormalization -> Q (4 heads), K/V (2 kv heads) projections
        -> Attention(q_num_heads=4, kv_num_heads=2) -> out proj; h1 = h0 + attn
        RMSNormalization -> MatMul -> com.microsoft FastGelu (with bias) -> MatMul = f
    layer 2 (causal, 4 heads): com.microsoft SkipSimplifiedLayerNormalization(h1, f) gives the
        normalized n2 and the residual sum h2 (output 3); Attention(is_causal=1) -> out proj o2;
        com.microsoft SkipLayerNormalization(h2, o2, gamma, beta, bias) gives n3 and h3 = h2 + o2 + b;
        MatMul -> com.microsoft BiasGelu -> MatMul; h4 = h3 + mlp
    head: LayerNormalization -> ReduceMean over the sequence -> MatMul+Add -> logits [N, CLASSES]

With --loss the graph also takes `labels` (int64 [N]) and its first output is
loss = SoftmaxCrossEntropyLoss(logits, labels) (mean), then the logits: the model `tessera grad`
differentiates. Without it the only output is the logits (the `tessera train` form: first input
the images, first output the logits). N is dynamic ("N").

    make_train_transformer.py OUT.onnx [--loss] [--seq 8 --feat 16 --hidden 32 --classes 4 --seed 0]
"""
import argparse

import numpy as np
from onnx import TensorProto, helper

from cases import Parts

MS = "com.microsoft"


def train_transformer(seq=8, feat=16, hidden=32, classes=4, heads=4, kv_heads=2, ffn=64, seed=0, loss=False):
    assert hidden % heads == 0 and heads % kv_heads == 0
    hd = hidden // heads
    parts = Parts(seed)
    r, inits, nodes, w, node = parts.r, parts.inits, parts.nodes, parts.w, parts.node

    def gain(name):  # a norm scale near 1
        return parts.c(name, (1 + 0.1 * r.standard_normal(hidden)).astype(np.float32))

    def linear(x, prefix, n_in, n_out, bias=True):
        y = node("MatMul", [x, w(prefix + ".weight", [n_in, n_out], n_in ** -0.5)], [prefix + ".mm"])
        return node("Add", [y, w(prefix + ".bias", [n_out], 0.05)], [prefix + ".out"]) if bias else y

    # Embedding: a linear map of each token's features plus a learned position table.
    h0 = node("Add", [linear("x", "embed", feat, hidden), w("pos", [seq, hidden], 0.1)], ["h0"])

    # Layer 1: pre-RMSNorm, grouped-query attention (no mask), FastGelu MLP.
    a1 = node("RMSNormalization", [h0, gain("l1.attn_norm.gamma")], ["l1.attn_norm"], axis=-1, epsilon=1e-5)
    q1 = linear(a1, "l1.q", hidden, hidden)
    k1 = linear(a1, "l1.k", hidden, kv_heads * hd)
    v1 = linear(a1, "l1.v", hidden, kv_heads * hd)
    att1 = node("Attention", [q1, k1, v1], ["l1.attn"], q_num_heads=heads, kv_num_heads=kv_heads)
    h1 = node("Add", [h0, linear(att1, "l1.o", hidden, hidden)], ["h1"])
    m1 = node("RMSNormalization", [h1, gain("l1.mlp_norm.gamma")], ["l1.mlp_norm"], axis=-1, epsilon=1e-5)
    u1 = node("FastGelu", [linear(m1, "l1.up", hidden, ffn, bias=False), w("l1.up.bias", [ffn], 0.05)],
              ["l1.gelu"], domain=MS)
    f1 = linear(u1, "l1.down", ffn, hidden, bias=False)

    # Layer 2: the residual add fused into the norms, causal multi-head attention, BiasGelu MLP.
    nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [h1, f1, gain("l2.attn_norm.gamma")],
                                  ["l2.attn_norm", "", "", "h2"], name="l2.attn_norm", domain=MS, epsilon=1e-5))
    q2 = linear("l2.attn_norm", "l2.q", hidden, hidden)
    k2 = linear("l2.attn_norm", "l2.k", hidden, hidden)
    v2 = linear("l2.attn_norm", "l2.v", hidden, hidden)
    att2 = node("Attention", [q2, k2, v2], ["l2.attn"], q_num_heads=heads, kv_num_heads=heads, is_causal=1)
    o2 = linear(att2, "l2.o", hidden, hidden, bias=False)
    nodes.append(helper.make_node(
        "SkipLayerNormalization",
        ["h2", o2, gain("l2.mlp_norm.gamma"), w("l2.mlp_norm.beta", [hidden], 0.1), w("l2.o.bias", [hidden], 0.05)],
        ["l2.mlp_norm", "", "", "h3"], name="l2.mlp_norm", domain=MS, epsilon=1e-5))
    u2 = node("BiasGelu", [linear("l2.mlp_norm", "l2.up", hidden, ffn, bias=False), w("l2.up.bias", [ffn], 0.05)],
              ["l2.gelu"], domain=MS)
    h4 = node("Add", ["h3", linear(u2, "l2.down", ffn, hidden, bias=False)], ["h4"])

    # Head: final LayerNorm, mean over the sequence, classifier.
    fn = node("LayerNormalization", [h4, gain("final_norm.gamma"), w("final_norm.beta", [hidden], 0.1)],
              ["final_norm"], axis=-1, epsilon=1e-5)
    pooled = node("ReduceMean", [fn, parts.c("seq_axis", np.array([1], np.int64))], ["pooled"], keepdims=0)
    logits = linear(pooled, "classifier", hidden, classes)
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits_Identity"))

    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", seq, feat])]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])]
    if loss:
        ins.append(helper.make_tensor_value_info("labels", TensorProto.INT64, ["N"]))
        nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"], name="loss",
                                      reduction="mean"))
        outs.insert(0, helper.make_tensor_value_info("loss", TensorProto.FLOAT, []))
    g = helper.make_graph(nodes, "train_transformer", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid(MS, 1)],
                          producer_name="tessera-tests")
    m.ir_version = 10
    return m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--loss", action="store_true")
    p.add_argument("--seq", type=int, default=8)
    p.add_argument("--feat", type=int, default=16)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--classes", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    m = train_transformer(a.seq, a.feat, a.hidden, a.classes, seed=a.seed, loss=a.loss)
    with open(a.out, "wb") as f:
        f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
