#!/usr/bin/python3
"""com.microsoft FusedMatMul and the MatMul forms fold_matmul_transpose rewrites into it, against
onnxruntime-node (tests/transformers/README.md).

FusedMatMul directly (as onnxruntime-optimized models ship it) over every transA/transB pair, alpha,
and batch broadcasting (3-D x 2-D, 4-D x [1, H, ..], 2-D x 3-D, 1-D operands). Then plain-op
graphs that `tessera run` optimizes: MatMul(Q, Transpose(K, last two axes)) / sqrt(d) (attention
scores), Transpose on A, a scalar Mul on an input, a Mul by a scalar after the product, and
the K-heads Transpose [0, 2, 3, 1] (split into [0, 2, 1, 3] + transB), near-misses the pass must
leave alone (a Transpose over other axes, a Transpose with a second
reader, a non-scalar Mul) - outputs must match either way.
"""
import numpy as np

from cases import MS, Case, helper, main, rng

F = np.float32


def normal(r, shape):
    return r.standard_normal(shape).astype(F)


def fused_cases():
    cs = []
    # (name, A stored shape, B stored shape, transA, transB, alpha)
    shapes = [
        ("3d_x_2d", (2, 5, 7), (7, 6)),
        ("4d_x_4d", (2, 3, 5, 8), (2, 3, 8, 4)),
        ("4d_x_bcast", (2, 3, 5, 8), (1, 3, 8, 4)),
        ("2d_x_3d", (5, 8), (3, 8, 4)),
        ("bcast_x_4d", (3, 1, 5, 8), (1, 2, 8, 4)),
        ("big_3d_x_2d", (2, 33, 70), (70, 65)),
    ]
    for name, sa, sb in shapes:
        for ta in (0, 1):
            for tb in (0, 1):
                r = rng(len(cs) + 1)
                a_shape = sa[:-2] + (sa[-1], sa[-2]) if ta else sa
                b_shape = sb[:-2] + (sb[-1], sb[-2]) if tb else sb
                alpha = 1.0 if (ta + tb) % 2 == 0 else 0.125
                nd = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=alpha, transA=ta, transB=tb)
                cs.append(Case(f"fused_{name}_ta{ta}_tb{tb}", [nd], {"a": normal(r, a_shape), "b": normal(r, b_shape)},
                               [("y", F, None)]))
    r = rng(99)
    nd = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=2.0, transB=1)
    cs.append(Case("fused_1d_a", [nd], {"a": normal(r, (8,)), "b": normal(r, (2, 5, 8))}, [("y", F, None)]))
    # (onnxruntime 1.30 ignores transA when B is 1-D; the pass never makes that combination.)
    nd = helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=0.5)
    cs.append(Case("fused_1d_b", [nd], {"a": normal(r, (2, 5, 8)), "b": normal(r, (8,))}, [("y", F, None)]))
    return cs


def pattern_cases():
    cs = []
    r = rng(200)
    b, h, s, d = 2, 3, 7, 16
    q, k = normal(r, (b, h, s, d)), normal(r, (b, h, s, d))
    sq = np.array(np.sqrt(d), F)
    # Attention scores: MatMul(Q, Transpose(K)) / sqrt(d), then Softmax (not fused by fuse_attention
    # without the second MatMul).
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "sq"], ["sc"]),
             helper.make_node("Softmax", ["sc"], ["y"], axis=-1)]
    cs.append(Case("scores_transpose_div_softmax", nodes, {"q": q, "k": k}, [("y", F, None)], {"sq": sq}))
    # Transpose on A (perm of a rank-3 tensor) and a scalar Mul of B, Mul after the product.
    nodes = [helper.make_node("Transpose", ["a"], ["at"], perm=[0, 2, 1]),
             helper.make_node("Mul", ["c", "b"], ["bs"]),
             helper.make_node("MatMul", ["at", "bs"], ["p"]),
             helper.make_node("Mul", ["p", "c2"], ["y"])]
    cs.append(Case("transpose_a_scaled_b_scaled_out", nodes, {"a": normal(r, (2, 9, 5)), "b": normal(r, (2, 9, 6))},
                   [("y", F, None)], {"c": np.array([0.5], F), "c2": np.array(3.0, F)}))
    # Rank-2 Transpose without perm (reverses = swaps), weight input.
    nodes = [helper.make_node("Transpose", ["w"], ["wt"]), helper.make_node("MatMul", ["x", "wt"], ["y"])]
    cs.append(Case("transpose_default_perm_2d", nodes, {"x": normal(r, (3, 4, 10)), "w": normal(r, (12, 10))},
                   [("y", F, None)]))
    # Near-misses: heads Transpose (0, 2, 1, 3) is not a last-two swap; a Transpose read twice;
    # a per-column (non-scalar) Mul after the product.
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["q", "kt"], ["y"])]
    cs.append(Case("near_miss_other_perm", nodes, {"q": normal(r, (2, 3, 5, 4)), "k": normal(r, (2, 4, 3, 6))},
                   [("y", F, None)]))
    # K heads as PyTorch exports them: Transpose(k, [0, 2, 3, 1]) -> [0, 2, 1, 3] + transB.
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["y"])]
    cs.append(Case("transpose_0231_split", nodes, {"q": normal(r, (2, 3, 5, 4)), "k": normal(r, (2, 6, 3, 4))},
                   [("y", F, None)]))
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["y"]),
             helper.make_node("Relu", ["kt"], ["y2"])]
    cs.append(Case("near_miss_transpose_two_readers", nodes, {"q": normal(r, (2, 5, 4)), "k": normal(r, (2, 6, 4))},
                   [("y", F, None), ("y2", F, None)]))
    nodes = [helper.make_node("MatMul", ["q", "k"], ["p"]), helper.make_node("Mul", ["p", "cv"], ["y"])]
    cs.append(Case("near_miss_vector_mul", nodes, {"q": normal(r, (2, 5, 4)), "k": normal(r, (4, 6))},
                   [("y", F, None)], {"cv": normal(r, (6,))}))
    # Plain batched MatMuls on the folded / strided paths: [B, S, K] x [K, N], [K, N] broadcast as
    # [1, K, N], 2-D A against batched B.
    cs.append(Case("matmul_3d_x_2d", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                   {"a": normal(r, (3, 17, 24)), "b": normal(r, (24, 40))}, [("y", F, None)]))
    cs.append(Case("matmul_3d_x_1kn", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                   {"a": normal(r, (3, 17, 24)), "b": normal(r, (1, 24, 40))}, [("y", F, None)]))
    cs.append(Case("matmul_2d_x_4d", [helper.make_node("MatMul", ["a", "b"], ["y"])],
                   {"a": normal(r, (17, 24)), "b": normal(r, (2, 3, 24, 9))}, [("y", F, None)]))
    return cs


def cases():
    return fused_cases() + pattern_cases()


if __name__ == "__main__":
    main(cases())
