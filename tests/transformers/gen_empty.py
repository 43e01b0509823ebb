#!/usr/bin/python3
"""Empty tensors: every op family with a 0-sized dimension in an input, against onnxruntime-node.

KV-cache decoders feed tensors with a 0 dim (past_key_values at step 0 have past length 0; an
encoder-cache branch may run with batch 0). Each case below puts a 0-sized dim in an input:
batch 0, a 0-length axis being reduced / concatenated / sliced / gathered / contracted over
(MatMul with K=0 gives zeros), and so on. Most cases come twice: `<name>` declares the input
shapes statically (the 0 is known when the model loads) and `<name>_dyn` declares every input dim
symbolic, so the 0 first appears at run time (as a KV cache's past length does).

Only cases onnxruntime-node 1.30 itself runs are kept. Cases it rejects are listed in REJECTED at
the bottom with ort's message, and cases where its answer is not the ONNX one (or uninitialized
memory) in DIVERGES; neither is generated.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
from cases import Case, TensorProto, helper, main, rng  # noqa: E402

F, I64, B = np.float32, np.int64, np.bool_
R = rng(26)
CASES = []


def rand(shape, dtype=F):
    if dtype == B:
        return R.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return R.integers(-5, 6, size=shape).astype(dtype)
    return R.standard_normal(shape).astype(dtype)


def pos(shape):
    return (R.random(shape) + 0.5).astype(F)


def add(name, nodes, inputs, outputs, inits=None, opset=17, dyn=True, **kw):
    """Adds the case, and (dyn) its copy with every input dim declared symbolic."""
    outs = [(n, dt, None) for n, dt in outputs]
    opsets = {"": opset}
    CASES.append(Case(name, nodes, inputs, outs, initializers=inits, opsets=opsets, **kw))
    if dyn:
        shapes = {n: [f"{n}_d{i}" for i in range(a.ndim)] for n, a in inputs.items()}
        CASES.append(Case(name + "_dyn", nodes, inputs, outs, initializers=inits, opsets=opsets,
                          input_shapes=shapes, **kw))


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def unary(name, op, x, out_dtype=F, opset=17, **attrs):
    add(name, [node(op, ["X"], ["Y"], **attrs)], {"X": x}, [("Y", out_dtype)], opset=opset)


def binary(name, op, a, b, out_dtype=None, opset=17, **attrs):
    add(name, [node(op, ["A", "B"], ["C"], **attrs)], {"A": a, "B": b},
        [("C", out_dtype or a.dtype.type)], opset=opset)


def i64(*v):
    return np.array(v, dtype=I64)


# ---------------------------------------------------------------- elementwise, unary
for op in ["Abs", "Neg", "Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Softplus", "Floor", "Round",
           "Sign", "Reciprocal", "Sin", "HardSwish", "Softsign"]:
    unary(f"unary_{op}_0x4", op, rand((0, 4)))
unary("unary_Log_2x0x3", "Log", pos((2, 0, 3)))
unary("unary_Sqrt_2x0x3", "Sqrt", pos((2, 0, 3)))
unary("unary_LeakyRelu_0", "LeakyRelu", rand((0,)), alpha=0.2)
unary("unary_Elu_3x0", "Elu", rand((3, 0)))
unary("unary_Selu_3x0", "Selu", rand((3, 0)))
unary("unary_HardSigmoid_3x0", "HardSigmoid", rand((3, 0)))
unary("unary_Gelu_0x8", "Gelu", rand((0, 8)), opset=20)
unary("unary_Gelu_tanh_0x8", "Gelu", rand((0, 8)), opset=20, approximate="tanh")
unary("unary_Mish_0x8", "Mish", rand((0, 8)), opset=18)
unary("unary_Cast_f2i_0x3", "Cast", rand((0, 3)), out_dtype=I64, to=TensorProto.INT64)
unary("unary_Cast_i2f_2x0", "Cast", rand((2, 0), I64), out_dtype=F, to=TensorProto.FLOAT)
unary("unary_Not_0x2", "Not", rand((0, 2), B), out_dtype=B)
unary("unary_IsNaN_0x2", "IsNaN", rand((0, 2)), out_dtype=B)
unary("unary_IsInf_0x2", "IsInf", rand((0, 2)), out_dtype=B)
unary("unary_BitwiseNot_i64_0x3", "BitwiseNot", rand((0, 3), I64), out_dtype=I64, opset=18)
unary("unary_Identity_1x0x4", "Identity", rand((1, 0, 4)))
unary("unary_Dropout_0x4", "Dropout", rand((0, 4)))
unary("unary_Shrink_0x4", "Shrink", rand((0, 4)), lambd=0.3)
unary("unary_ThresholdedRelu_0x4", "ThresholdedRelu", rand((0, 4)))
unary("unary_Celu_0x4", "Celu", rand((0, 4)))
add("clip_minmax_0x4", [node("Clip", ["X", "lo", "hi"], ["Y"])], {"X": rand((0, 4))}, [("Y", F)],
    inits={"lo": np.array(-0.5, F), "hi": np.array(0.5, F)})
add("cast_like_0x3", [node("CastLike", ["X", "T"], ["Y"])], {"X": rand((0, 3))}, [("Y", I64)],
    inits={"T": i64(1)})

# ---------------------------------------------------------------- elementwise, binary / variadic
for op in ["Add", "Sub", "Mul", "Div", "Max", "Min"]:
    binary(f"binary_{op}_0x4_4", op, rand((0, 4)), pos((4,)))
binary("binary_Add_0x1_1x5", "Add", rand((0, 1)), rand((1, 5)))
binary("binary_Mul_3x1_1x0", "Mul", rand((3, 1)), rand((1, 0)))
binary("binary_Sub_2x0x3_2x1x3", "Sub", rand((2, 0, 3)), rand((2, 1, 3)))
binary("binary_Add_0_scalar", "Add", rand((0,)), np.array(1.5, F))
binary("binary_Add_both_0x4", "Add", rand((0, 4)), rand((0, 4)))
binary("binary_Pow_0x3_3", "Pow", pos((0, 3)), rand((3,)))
binary("binary_Mod_i64_0x3", "Mod", rand((0, 3), I64), i64(2, 3, 4))
binary("binary_Equal_0x3", "Equal", rand((0, 3)), rand((1, 3)), out_dtype=B)
binary("binary_Greater_2x0", "Greater", rand((2, 0)), rand((2, 1)), out_dtype=B)
binary("binary_LessOrEqual_i64_0", "LessOrEqual", rand((0,), I64), i64(1), out_dtype=B)
binary("binary_And_0x2", "And", rand((0, 2), B), rand((1, 2), B), out_dtype=B)
binary("binary_Xor_0x2", "Xor", rand((0, 2), B), rand((0, 2), B), out_dtype=B)
binary("binary_BitwiseAnd_0x2", "BitwiseAnd", rand((0, 2), I64), rand((2,), I64), opset=18)
binary("binary_PRelu_0x3", "PRelu", rand((0, 3)), rand((3,)))
add("variadic_Sum_0x3", [node("Sum", ["A", "B", "C"], ["Y"])],
    {"A": rand((0, 3)), "B": rand((3,)), "C": rand((0, 1))}, [("Y", F)])
add("variadic_Mean_2x0", [node("Mean", ["A", "B"], ["Y"])], {"A": rand((2, 0)), "B": rand((2, 0))}, [("Y", F)])
add("variadic_Max_0", [node("Max", ["A", "B"], ["Y"])], {"A": rand((0,)), "B": rand((1,))}, [("Y", F)])
add("where_0x3", [node("Where", ["C", "A", "B"], ["Y"])],
    {"C": rand((0, 3), B), "A": rand((0, 3)), "B": rand((3,))}, [("Y", F)])
add("where_cond_1x0", [node("Where", ["C", "A", "B"], ["Y"])],
    {"C": rand((1, 0), B), "A": rand((4, 1)), "B": rand((1,))}, [("Y", F)])

# ---------------------------------------------------------------- reductions
for op in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"]:
    for keep in (1, 0):
        # a non-empty axis reduced while another axis is 0: an empty result
        if op == "ReduceSum":
            add(f"reduce_{op}_other_axis_k{keep}", [node(op, ["X", "axes"], ["Y"], keepdims=keep)],
                {"X": rand((0, 5))}, [("Y", F)], inits={"axes": i64(1)})
        else:
            unary(f"reduce_{op}_other_axis_k{keep}", op, pos((0, 5)), axes=[1], keepdims=keep)
# the empty axis itself reduced: identity values (0 for sums, 1 for products, ...)
for op in ["ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceMean", "ReduceMax", "ReduceMin"]:
    for keep in (1, 0):
        if op == "ReduceSum":
            add(f"reduce_{op}_empty_axis_k{keep}", [node(op, ["X", "axes"], ["Y"], keepdims=keep)],
                {"X": rand((3, 0, 2))}, [("Y", F)], inits={"axes": i64(1)})
        else:
            unary(f"reduce_{op}_empty_axis_k{keep}", op, rand((3, 0, 2)), axes=[1], keepdims=keep)
add("reduce_ReduceSum_all_of_empty", [node("ReduceSum", ["X"], ["Y"], keepdims=0)], {"X": rand((2, 0))}, [("Y", F)])
add("reduce_ReduceSum_i64_empty_axis", [node("ReduceSum", ["X", "axes"], ["Y"], keepdims=1)],
    {"X": rand((0, 3), I64)}, [("Y", I64)], inits={"axes": i64(0)})
add("reduce_ReduceSum_noop_empty_axes", [node("ReduceSum", ["X", "axes"], ["Y"], noop_with_empty_axes=1)],
    {"X": rand((0, 3))}, [("Y", F)], inits={"axes": np.zeros((0,), I64)})
unary("reduce_ReduceMax_i64_empty_axis", "ReduceMax", rand((2, 0), I64), out_dtype=I64, axes=[1], keepdims=1)
unary("reduce_ReduceMin_i64_empty_axis", "ReduceMin", rand((2, 0), I64), out_dtype=I64, axes=[1], keepdims=0)
unary("reduce_ReduceMax_opset18_empty", "ReduceMax", rand((0, 4)), opset=18, keepdims=1)
unary("argmax_other_axis_0x5", "ArgMax", rand((0, 5)), out_dtype=I64, axis=1)
unary("argmin_other_axis_3x0x2", "ArgMin", rand((3, 0, 2)), out_dtype=I64, axis=2, keepdims=0)
add("cumsum_0x4", [node("CumSum", ["X", "ax"], ["Y"])], {"X": rand((0, 4))}, [("Y", F)], inits={"ax": i64(0)})
add("cumsum_3x0_axis1", [node("CumSum", ["X", "ax"], ["Y"], reverse=1)], {"X": rand((3, 0))}, [("Y", F)],
    inits={"ax": i64(1)})

# ---------------------------------------------------------------- softmax family, normalization
unary("softmax_other_axis_0x5", "Softmax", rand((0, 5)), axis=-1)
unary("softmax_1x2x0x5", "Softmax", rand((1, 2, 0, 5)), axis=-1)
unary("softmax_empty_axis_3x0", "Softmax", rand((3, 0)), axis=-1)
unary("logsoftmax_0x5", "LogSoftmax", rand((0, 5)), axis=1)
unary("hardmax_0x5", "Hardmax", rand((0, 5)), axis=1)
add("layernorm_0x8", [node("LayerNormalization", ["X", "S", "Bi"], ["Y"], axis=-1)], {"X": rand((0, 8))},
    [("Y", F)], inits={"S": rand((8,)), "Bi": rand((8,))})
add("layernorm_1x0x8", [node("LayerNormalization", ["X", "S"], ["Y"], axis=-1)], {"X": rand((1, 0, 8))},
    [("Y", F)], inits={"S": rand((8,))})
add("batchnorm_batch0", [node("BatchNormalization", ["X", "s", "b", "m", "v"], ["Y"])],
    {"X": rand((0, 3, 4, 4))}, [("Y", F)],
    inits={"s": rand((3,)), "b": rand((3,)), "m": rand((3,)), "v": pos((3,))})
add("instancenorm_batch0", [node("InstanceNormalization", ["X", "s", "b"], ["Y"])],
    {"X": rand((0, 3, 5))}, [("Y", F)], inits={"s": rand((3,)), "b": rand((3,))})
unary("lrn_batch0", "LRN", rand((0, 4, 3, 3)), size=3)
unary("mvn_batch0", "MeanVarianceNormalization", rand((0, 3, 2, 2)))

# ---------------------------------------------------------------- shape ops
def with_shape(name, op, x, shape, out_dtype=F, **attrs):
    add(name, [node(op, ["X", "S"], ["Y"], **attrs)], {"X": x}, [("Y", out_dtype)], inits={"S": shape})


with_shape("reshape_0x4_to_0x2x2", "Reshape", rand((0, 4)), i64(0, 2, 2))
with_shape("reshape_2x0x3_to_6x0", "Reshape", rand((2, 0, 3)), i64(6, 0), allowzero=1)
with_shape("reshape_allowzero_3x0_to_0x3", "Reshape", rand((3, 0)), i64(0, 3), allowzero=1)
with_shape("reshape_copy0_1x0x8_to_1x0x2x4", "Reshape", rand((1, 0, 8)), i64(0, 0, 2, 4))
with_shape("expand_1x4_to_0x4", "Expand", rand((1, 4)), i64(0, 4))
with_shape("expand_0x1_to_0x5", "Expand", rand((0, 1)), i64(0, 5))
with_shape("expand_3x0_to_2x3x0", "Expand", rand((3, 0)), i64(2, 1, 1))
with_shape("tile_0x3", "Tile", rand((0, 3)), i64(2, 2))
with_shape("tile_repeat0", "Tile", rand((2, 3)), i64(0, 1))
add("constantofshape_3x0", [node("ConstantOfShape", ["S"], ["Y"],
                                 value=helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5]))],
    {"S": i64(3, 0)}, [("Y", F)])
add("flatten_0x2x3", [node("Flatten", ["X"], ["Y"], axis=1)], {"X": rand((0, 2, 3))}, [("Y", F)])
add("flatten_2x0x3_axis2", [node("Flatten", ["X"], ["Y"], axis=2)], {"X": rand((2, 0, 3))}, [("Y", F)])
add("squeeze_1x0x1", [node("Squeeze", ["X", "ax"], ["Y"])], {"X": rand((1, 0, 1))}, [("Y", F)],
    inits={"ax": i64(0, 2)})
add("unsqueeze_0x3", [node("Unsqueeze", ["X", "ax"], ["Y"])], {"X": rand((0, 3))}, [("Y", F)],
    inits={"ax": i64(0, 3)})
unary("transpose_0x3x4", "Transpose", rand((0, 3, 4)), perm=[2, 0, 1])
unary("transpose_1x2x0x4_kv", "Transpose", rand((1, 2, 0, 4)), perm=[0, 2, 1, 3])
add("shape_of_empty", [node("Shape", ["X"], ["Y"])], {"X": rand((2, 0, 3))}, [("Y", I64)])
add("size_of_empty", [node("Size", ["X"], ["Y"])], {"X": rand((2, 0, 3))}, [("Y", I64)])
add("shape_slice_of_empty", [node("Shape", ["X"], ["Y"], start=1)], {"X": rand((1, 0, 3))}, [("Y", I64)])
add("concat_kv_empty_past", [node("Concat", ["P", "K"], ["Y"], axis=2)],
    {"P": rand((1, 2, 0, 4)), "K": rand((1, 2, 1, 4))}, [("Y", F)])
add("concat_all_empty", [node("Concat", ["A", "B"], ["Y"], axis=0)],
    {"A": rand((0, 3)), "B": rand((0, 3))}, [("Y", F)])
add("concat_other_axis_0", [node("Concat", ["A", "B"], ["Y"], axis=1)],
    {"A": rand((0, 3)), "B": rand((0, 2))}, [("Y", F)])
add("concat_three_middle_empty", [node("Concat", ["A", "B", "C"], ["Y"], axis=1)],
    {"A": rand((2, 1)), "B": rand((2, 0)), "C": rand((2, 3))}, [("Y", F)])
add("concat_i64_empty", [node("Concat", ["A", "B"], ["Y"], axis=0)],
    {"A": np.zeros((0,), I64), "B": i64(3, 4)}, [("Y", I64)])
add("split_zero_part", [node("Split", ["X", "s"], ["Y0", "Y1"], axis=1)], {"X": rand((2, 3))},
    [("Y0", F), ("Y1", F)], inits={"s": i64(0, 3)})
add("split_empty_axis", [node("Split", ["X", "s"], ["Y0", "Y1"], axis=0)], {"X": rand((0, 3))},
    [("Y0", F), ("Y1", F)], inits={"s": i64(0, 0)})
add("split_batch0_equal", [node("Split", ["X"], ["Y0", "Y1"], axis=1)], {"X": rand((0, 4))},
    [("Y0", F), ("Y1", F)])


def slice_case(name, x, starts, ends, axes, steps=None):
    ins = ["X", "st", "en", "ax"] + (["sp"] if steps is not None else [])
    inits = {"st": i64(*starts), "en": i64(*ends), "ax": i64(*axes)}
    if steps is not None:
        inits["sp"] = i64(*steps)
    add(name, [node("Slice", ins, ["Y"])], {"X": x}, [("Y", F)], inits=inits)


slice_case("slice_of_empty", rand((0, 5)), [1], [4], [1])
slice_case("slice_to_empty", rand((3, 5)), [2], [2], [1])
slice_case("slice_reverse_empty", rand((3, 0)), [-1], [-100], [1], [-1])
slice_case("slice_kv_last_of_empty", rand((1, 0, 4)), [-1], [100000], [1])
add("pad_constant_of_empty", [node("Pad", ["X", "p", "v"], ["Y"])], {"X": rand((0, 3))}, [("Y", F)],
    inits={"p": i64(1, 0, 1, 0), "v": np.array(7.0, F)})
add("pad_constant_keeps_empty", [node("Pad", ["X", "p"], ["Y"])], {"X": rand((2, 0))}, [("Y", F)],
    inits={"p": i64(1, 0, 0, 0)})
add("pad_edge_nonempty_other", [node("Pad", ["X", "p"], ["Y"], mode="edge")], {"X": rand((0, 3))},
    [("Y", F)], inits={"p": i64(0, 1, 0, 1)})
add("depthtospace_batch0", [node("DepthToSpace", ["X"], ["Y"], blocksize=2)], {"X": rand((0, 8, 2, 2))}, [("Y", F)])
add("spacetodepth_batch0", [node("SpaceToDepth", ["X"], ["Y"], blocksize=2)], {"X": rand((0, 2, 4, 4))}, [("Y", F)])
add("trilu_0x3x3", [node("Trilu", ["X"], ["Y"], upper=0)], {"X": rand((0, 3, 3))}, [("Y", F)])
add("trilu_3x0", [node("Trilu", ["X"], ["Y"])], {"X": rand((3, 0))}, [("Y", F)])
add("eyelike_0x3", [node("EyeLike", ["X"], ["Y"])], {"X": rand((0, 3))}, [("Y", F)])
add("range_empty", [node("Range", ["a", "b", "c"], ["Y"])],
    {"a": np.array(3, I64), "b": np.array(3, I64), "c": np.array(1, I64)}, [("Y", I64)], dyn=False)
add("range_empty_f32", [node("Range", ["a", "b", "c"], ["Y"])],
    {"a": np.array(5, F), "b": np.array(2, F), "c": np.array(1, F)}, [("Y", F)], dyn=False)

# ---------------------------------------------------------------- indexing
add("gather_empty_indices", [node("Gather", ["X", "I"], ["Y"], axis=0)],
    {"X": rand((4, 3)), "I": np.zeros((0,), I64)}, [("Y", F)])
add("gather_empty_indices_2d", [node("Gather", ["X", "I"], ["Y"], axis=1)],
    {"X": rand((4, 3)), "I": np.zeros((2, 0), I64)}, [("Y", F)])
add("gather_from_empty_batch", [node("Gather", ["X", "I"], ["Y"], axis=1)],
    {"X": rand((0, 3)), "I": i64(2, 0)}, [("Y", F)])
add("gather_scalar_index_empty_rest", [node("Gather", ["X", "I"], ["Y"], axis=0)],
    {"X": rand((3, 0, 2)), "I": np.array(1, I64)}, [("Y", F)])
add("gatherelements_empty", [node("GatherElements", ["X", "I"], ["Y"], axis=1)],
    {"X": rand((3, 4)), "I": np.zeros((3, 0), I64)}, [("Y", F)])
add("gathernd_empty_indices", [node("GatherND", ["X", "I"], ["Y"])],
    {"X": rand((4, 3)), "I": np.zeros((0, 1), I64)}, [("Y", F)])
add("gathernd_from_empty_slice", [node("GatherND", ["X", "I"], ["Y"])],
    {"X": rand((4, 0)), "I": i64(1, 3).reshape(2, 1)}, [("Y", F)])
add("scatternd_empty_updates", [node("ScatterND", ["X", "I", "U"], ["Y"])],
    {"X": rand((4, 3)), "I": np.zeros((0, 1), I64), "U": rand((0, 3))}, [("Y", F)])
add("scatterelements_empty", [node("ScatterElements", ["X", "I", "U"], ["Y"], axis=0)],
    {"X": rand((4, 3)), "I": np.zeros((0, 3), I64), "U": rand((0, 3))}, [("Y", F)])
add("nonzero_all_zeros", [node("NonZero", ["X"], ["Y"])], {"X": np.zeros((2, 3), F)}, [("Y", I64)])
add("nonzero_of_empty", [node("NonZero", ["X"], ["Y"])], {"X": rand((0, 3))}, [("Y", I64)])
add("compress_all_false", [node("Compress", ["X", "C"], ["Y"], axis=0)],
    {"X": rand((3, 2)), "C": np.zeros((3,), B)}, [("Y", F)])
add("compress_of_empty", [node("Compress", ["X", "C"], ["Y"], axis=1)],
    {"X": rand((0, 3)), "C": np.array([True, False, True])}, [("Y", F)])
add("onehot_empty_indices", [node("OneHot", ["I", "d", "v"], ["Y"], axis=-1)],
    {"I": np.zeros((0,), I64)}, [("Y", F)], inits={"d": i64(4), "v": np.array([0, 1], F)})
add("topk_k0", [node("TopK", ["X", "K"], ["V", "I"], axis=-1)], {"X": rand((3, 5))}, [("V", F), ("I", I64)],
    inits={"K": i64(0)})
add("topk_empty_axis_k0", [node("TopK", ["X", "K"], ["V", "I"], axis=1, largest=0)], {"X": rand((2, 0))},
    [("V", F), ("I", I64)], inits={"K": i64(0)})
add("unique_of_empty", [node("Unique", ["X"], ["Y", "idx", "inv", "cnt"], sorted=1)], {"X": rand((0,))},
    [("Y", F), ("idx", I64), ("inv", I64), ("cnt", I64)])
add("reversesequence_empty_time", [node("ReverseSequence", ["X", "L"], ["Y"], batch_axis=1, time_axis=0)],
    {"X": rand((0, 2, 3)), "L": i64(0, 0)}, [("Y", F)])

# ---------------------------------------------------------------- matrix
binary("matmul_K0_zeros", "MatMul", rand((2, 0)), rand((0, 3)))
binary("matmul_M0", "MatMul", rand((0, 4)), rand((4, 3)))
binary("matmul_N0", "MatMul", rand((2, 4)), rand((4, 0)))
binary("matmul_batch0", "MatMul", rand((0, 2, 4)), rand((4, 3)))
binary("matmul_batched_K0", "MatMul", rand((2, 3, 0)), rand((2, 0, 5)))
binary("matmul_1d_K0", "MatMul", rand((0,)), rand((0, 3)))
binary("matmul_i64_K0", "MatMul", rand((2, 0), I64), rand((0, 3), I64))
# K=0: Y = beta * C. Only beta 1 and 0 here: for other betas onnxruntime returns C unscaled
# (see DIVERGES below); Tessera follows the ONNX formula.
add("gemm_K0_bias", [node("Gemm", ["A", "B", "C"], ["Y"], alpha=2.0)],
    {"A": rand((2, 0)), "B": rand((0, 3))}, [("Y", F)], inits={"C": rand((3,))})
add("gemm_K0_beta0", [node("Gemm", ["A", "B", "C"], ["Y"], beta=0.0)],
    {"A": rand((2, 0)), "B": rand((0, 3))}, [("Y", F)], inits={"C": rand((2, 3))})
add("gemm_K0_transB", [node("Gemm", ["A", "B"], ["Y"], transB=1)],
    {"A": rand((2, 0)), "B": rand((3, 0))}, [("Y", F)])
add("gemm_M0", [node("Gemm", ["A", "B", "C"], ["Y"])], {"A": rand((0, 4)), "B": rand((4, 3))}, [("Y", F)],
    inits={"C": rand((1, 3))})
add("einsum_K0", [node("Einsum", ["A", "B"], ["Y"], equation="ik,kj->ij")],
    {"A": rand((2, 0)), "B": rand((0, 3))}, [("Y", F)])
add("einsum_batch0", [node("Einsum", ["A", "B"], ["Y"], equation="bik,bkj->bij")],
    {"A": rand((0, 2, 3)), "B": rand((0, 3, 4))}, [("Y", F)])
add("matmulinteger_K0", [node("MatMulInteger", ["A", "B"], ["Y"])],
    {"A": np.zeros((2, 0), np.uint8), "B": np.zeros((0, 3), np.uint8)}, [("Y", np.int32)])
unary("det_batch0", "Det", rand((0, 3, 3)))

# ---------------------------------------------------------------- nn
add("conv_batch0", [node("Conv", ["X", "W", "Bi"], ["Y"], pads=[1, 1, 1, 1])], {"X": rand((0, 2, 5, 5))},
    [("Y", F)], inits={"W": rand((4, 2, 3, 3)), "Bi": rand((4,))})
add("conv1d_batch0", [node("Conv", ["X", "W"], ["Y"])], {"X": rand((0, 3, 8))}, [("Y", F)],
    inits={"W": rand((2, 3, 3))})
add("convtranspose_batch0", [node("ConvTranspose", ["X", "W"], ["Y"], strides=[2, 2])],
    {"X": rand((0, 2, 3, 3))}, [("Y", F)], inits={"W": rand((2, 3, 2, 2))})
unary("maxpool_batch0", "MaxPool", rand((0, 2, 4, 4)), kernel_shape=[2, 2], strides=[2, 2])
unary("averagepool_batch0", "AveragePool", rand((0, 2, 4, 4)), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
unary("globalaveragepool_batch0", "GlobalAveragePool", rand((0, 3, 4, 4)))
unary("globalmaxpool_batch0", "GlobalMaxPool", rand((0, 3, 4, 4)))
add("resize_batch0", [node("Resize", ["X", "", "sc"], ["Y"], mode="linear")], {"X": rand((0, 2, 3, 3))},
    [("Y", F)], inits={"sc": np.array([1, 1, 2, 2], F)})
add("resize_nearest_sizes_batch0", [node("Resize", ["X", "", "", "sz"], ["Y"], mode="nearest")],
    {"X": rand((0, 1, 2, 2))}, [("Y", F)], inits={"sz": i64(0, 1, 4, 4)})
add("quantize_empty", [node("QuantizeLinear", ["X", "s", "z"], ["Y"])], {"X": rand((0, 4))},
    [("Y", np.uint8)], inits={"s": np.array(0.1, F), "z": np.array(128, np.uint8)})
add("dequantize_empty", [node("DequantizeLinear", ["X", "s", "z"], ["Y"])],
    {"X": np.zeros((2, 0), np.uint8)}, [("Y", F)], inits={"s": np.array(0.1, F), "z": np.array(3, np.uint8)})

# ---------------------------------------------------------------- KV-cache attention step 0
# past K/V of length 0 concatenated with the new key, then scores, softmax, weighted sum.
add("kv_attention_step0", [
    node("Concat", ["pk", "k"], ["K"], axis=2),
    node("Concat", ["pv", "v"], ["V"], axis=2),
    node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
    node("MatMul", ["q", "Kt"], ["S"]),
    node("Softmax", ["S"], ["P"], axis=-1),
    node("MatMul", ["P", "V"], ["O"]),
    node("Shape", ["K"], ["Ks"]),
], {"q": rand((1, 2, 1, 4)), "k": rand((1, 2, 1, 4)), "v": rand((1, 2, 1, 4)),
    "pk": rand((1, 2, 0, 4)), "pv": rand((1, 2, 0, 4))},
    [("O", F), ("K", F), ("V", F), ("Ks", I64)])
# encoder-cache branch with batch 0: projections and scores all empty
add("kv_batch0_projection", [
    node("MatMul", ["x", "W"], ["h"]),
    node("Add", ["h", "b"], ["hb"]),
    node("Reshape", ["hb", "shp"], ["r"]),
    node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
    node("MatMul", ["t", "t2"], ["s"]),
    node("Softmax", ["s"], ["p"], axis=-1),
], {"x": rand((0, 3, 8)), "t2": rand((0, 2, 4, 3))}, [("p", F), ("t", F)],
    inits={"W": rand((8, 8)), "b": rand((8,)), "shp": i64(0, 3, 2, 4)})

# ---------------------------------------------------------------- control flow and sequences
def loop_body_cumsum(shape=None):
    # carried x; each iteration x = x + 1; scan output x. `shape`: the body's declared x shapes.
    return helper.make_graph(
        [node("Add", ["x_in", "one"], ["x_out"]), node("Identity", ["cond_in"], ["cond_out"]),
         node("Identity", ["x_out"], ["scan"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, shape)],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])


add("loop_trip0_declared", [node("Loop", ["M", "c", "x0"], ["x", "scan"], body=loop_body_cumsum([2]))],
    {"M": np.array(0, I64), "c": np.array(True), "x0": rand((2,))}, [("x", F), ("scan", F)], dyn=False)
add("loop_trip0_declared_sym", [node("Loop", ["M", "c", "x0"], ["x", "scan"], body=loop_body_cumsum(["n"]))],
    {"M": np.array(0, I64), "c": np.array(True), "x0": rand((2,))}, [("x", F), ("scan", F)], dyn=False)
add("loop_carries_empty", [node("Loop", ["M", "c", "x0"], ["x", "scan"], body=loop_body_cumsum())],
    {"M": np.array(2, I64), "c": np.array(True), "x0": rand((0, 3))}, [("x", F), ("scan", F)], dyn=False)


def branch(name, op):
    return helper.make_graph([node(op, ["X"], [name + "_y"])], name, [],
                             [helper.make_tensor_value_info(name + "_y", TensorProto.FLOAT, None)])


add("if_empty_branch_output", [node("If", ["c"], ["Y"], then_branch=branch("th", "Relu"),
                                    else_branch=branch("el", "Neg"))],
    {"c": np.array(True), "X": rand((0, 4))}, [("Y", F)], dyn=False)
add("split_to_sequence_concat_empty", [
    node("SplitToSequence", ["X"], ["S"], axis=0, keepdims=1),
    node("ConcatFromSequence", ["S"], ["Y"], axis=0)], {"X": rand((2, 0, 3))}, [("Y", F)])
add("sequence_insert_empty", [
    node("SequenceConstruct", ["A"], ["S"]), node("SequenceInsert", ["S", "B"], ["S2"]),
    node("ConcatFromSequence", ["S2"], ["Y"], axis=1)], {"A": rand((2, 0)), "B": rand((2, 3))}, [("Y", F)])

# ---------------------------------------------------------------- what the optimizer fuses
# (tessera run optimizes: MatMul+Add -> Gemm, Conv+BatchNorm folding, Conv/Gemm+activation,
# elementwise chains -> FusedElementwise); each fused form must keep the empty semantics.
add("fused_matmul_add_K0", [node("MatMul", ["A", "W"], ["h"]), node("Add", ["h", "b"], ["Y"])],
    {"A": rand((2, 0))}, [("Y", F)], inits={"W": rand((0, 3)), "b": rand((3,))})
add("fused_matmul_add_relu_M0", [node("MatMul", ["A", "W"], ["h"]), node("Add", ["h", "b"], ["r"]),
                                 node("Relu", ["r"], ["Y"])],
    {"A": rand((0, 4))}, [("Y", F)], inits={"W": rand((4, 3)), "b": rand((3,))})
add("fused_elementwise_chain_0x4", [node("Mul", ["X", "X"], ["a"]), node("Add", ["a", "c"], ["b"]),
                                    node("Sigmoid", ["b"], ["d"]), node("Mul", ["d", "X"], ["Y"])],
    {"X": rand((0, 4))}, [("Y", F)], inits={"c": rand((4,))})
add("fused_conv_bn_relu_batch0", [
    node("Conv", ["X", "W"], ["c"], pads=[1, 1, 1, 1]),
    node("BatchNormalization", ["c", "s", "b", "m", "v"], ["n"]), node("Relu", ["n"], ["Y"])],
    {"X": rand((0, 2, 4, 4))}, [("Y", F)],
    inits={"W": rand((3, 2, 3, 3)), "s": rand((3,)), "b": rand((3,)), "m": rand((3,)), "v": pos((3,))})
add("fused_conv_add_residual_batch0", [node("Conv", ["X", "W"], ["c"]), node("Add", ["c", "Z"], ["Y"])],
    {"X": rand((0, 2, 3, 3)), "Z": rand((0, 2, 3, 3))}, [("Y", F)], inits={"W": rand((2, 2, 1, 1))})
add("fused_depthwise_pointwise_batch0", [
    node("Conv", ["X", "Wd"], ["d"], group=4, pads=[1, 1, 1, 1]), node("Relu", ["d"], ["r"]),
    node("Conv", ["r", "Wp"], ["Y"])],
    {"X": rand((0, 4, 5, 5))}, [("Y", F)], inits={"Wd": rand((4, 1, 3, 3)), "Wp": rand((6, 4, 1, 1))})
add("fused_gemm_relu_K0", [node("Gemm", ["A", "B", "C"], ["g"], transB=1), node("Relu", ["g"], ["Y"])],
    {"A": rand((3, 0))}, [("Y", F)], inits={"B": rand((4, 0)), "C": rand((4,))})
add("softmax_wrapper_empty", [node("Transpose", ["X"], ["t"], perm=[0, 2, 1]),
                              node("Softmax", ["t"], ["s"], axis=-1),
                              node("Transpose", ["s"], ["Y"], perm=[0, 2, 1])],
    {"X": rand((0, 5, 3))}, [("Y", F)])

# ---------------------------------------------------------------- empty constants (folded at load)
add("const_empty_past_initializer", [node("Concat", ["P", "K"], ["Y"], axis=2)], {"K": rand((1, 2, 1, 4))},
    [("Y", F)], inits={"P": np.zeros((1, 2, 0, 4), F)})
add("const_node_empty_relu_concat", [
    node("Constant", [], ["c"], value=helper.make_tensor("c", TensorProto.FLOAT, [0, 3], [])),
    node("Relu", ["c"], ["r"]), node("Concat", ["r", "X"], ["Y"], axis=0)], {"X": rand((2, 3))}, [("Y", F)])
add("const_fold_matmul_K0_plus_input", [node("MatMul", ["A", "W"], ["m"]), node("Add", ["m", "X"], ["Y"])],
    {"X": rand((2, 3))}, [("Y", F)], inits={"A": np.zeros((2, 0), F), "W": np.zeros((0, 3), F)})
add("const_fold_reducesum_empty", [node("ReduceSum", ["A", "ax"], ["r"], keepdims=0),
                                   node("Mul", ["r", "X"], ["Y"])],
    {"X": rand((4,))}, [("Y", F)], inits={"A": np.zeros((0, 4), F), "ax": i64(0)})
add("const_fold_shape_of_empty", [node("Shape", ["A"], ["s"]), node("Add", ["s", "X"], ["Y"])],
    {"X": rand((3,), I64)}, [("Y", I64)], inits={"A": np.zeros((2, 0, 5), F)})

# ---------------------------------------------------------------- more indexing, shape and nn
add("gather_axis1_from_0xN_scalar", [node("Gather", ["X", "I"], ["Y"], axis=1)],
    {"X": rand((0, 4)), "I": np.array(-1, I64)}, [("Y", F)])
add("gatherelements_from_0x3", [node("GatherElements", ["X", "I"], ["Y"], axis=0)],
    {"X": rand((2, 3)), "I": np.zeros((0, 3), I64)}, [("Y", F)])
add("gathernd_batch_dims_empty", [node("GatherND", ["X", "I"], ["Y"], batch_dims=1)],
    {"X": rand((0, 3, 2)), "I": np.zeros((0, 1, 1), I64)}, [("Y", F)])
add("scatternd_into_empty_rows", [node("ScatterND", ["X", "I", "U"], ["Y"])],
    {"X": rand((3, 0)), "I": i64(1, 2).reshape(2, 1), "U": rand((2, 0))}, [("Y", F)])
add("scatterelements_data_0x3", [node("ScatterElements", ["X", "I", "U"], ["Y"], axis=1)],
    {"X": rand((0, 3)), "I": np.zeros((0, 2), I64), "U": rand((0, 2))}, [("Y", F)])
add("slice_steps_2_of_1x0x6", [node("Slice", ["X", "st", "en", "ax", "sp"], ["Y"])], {"X": rand((1, 0, 6))},
    [("Y", F)], inits={"st": i64(0, 1), "en": i64(1, 6), "ax": i64(0, 2), "sp": i64(1, 2)})
add("pad_negative_crop_to_empty", [node("Pad", ["X", "p"], ["Y"])], {"X": rand((2, 3))}, [("Y", F)],
    inits={"p": i64(0, -3, 0, 0)})
add("pad_reflect_nonempty_axis_batch0", [node("Pad", ["X", "p"], ["Y"], mode="reflect")],
    {"X": rand((0, 4))}, [("Y", F)], inits={"p": i64(0, 2, 0, 1)})
add("pad_edge_empty_input_other_axis", [node("Pad", ["X", "p"], ["Y"], mode="edge")],
    {"X": rand((0, 3, 2))}, [("Y", F)], inits={"p": i64(0, 0, 1, 0, 0, 1)})
add("split_three_middle_zero", [node("Split", ["X", "s"], ["Y0", "Y1", "Y2"], axis=0)], {"X": rand((4, 2))},
    [("Y0", F), ("Y1", F), ("Y2", F)], inits={"s": i64(1, 0, 3)})
add("concat_then_slice_kv", [node("Concat", ["P", "K"], ["C"], axis=2),
                             node("Slice", ["C", "st", "en", "ax"], ["Y"])],
    {"P": rand((1, 2, 0, 4)), "K": rand((1, 2, 3, 4))}, [("Y", F)],
    inits={"st": i64(-2), "en": i64(1 << 30), "ax": i64(2)})
add("shape_expand_constantofshape", [node("Shape", ["X"], ["s"]),
                                     node("ConstantOfShape", ["s"], ["Y"],
                                          value=helper.make_tensor("v", TensorProto.INT64, [1], [7]))],
    {"X": rand((0, 5))}, [("Y", I64)])
add("unsqueeze_squeeze_roundtrip_empty", [node("Unsqueeze", ["X", "a"], ["u"]), node("Squeeze", ["u", "a"], ["Y"])],
    {"X": rand((2, 0))}, [("Y", F)], inits={"a": i64(1)})
add("expand_0_broadcast_1", [node("Expand", ["X", "S"], ["Y"])], {"X": rand((0,))}, [("Y", F)],
    inits={"S": i64(3, 1)})
add("mod_fmod_0x3", [node("Mod", ["A", "B"], ["C"], fmod=1)], {"A": rand((0, 3)), "B": pos((3,))}, [("C", F)])
add("bitshift_u8_empty", [node("BitShift", ["A", "B"], ["C"], direction="LEFT")],
    {"A": np.zeros((0, 2), np.uint8), "B": np.ones((2,), np.uint8)}, [("C", np.uint8)])
add("clip_i64_empty", [node("Clip", ["X", "lo"], ["Y"])], {"X": rand((0, 3), I64)}, [("Y", I64)],
    inits={"lo": np.array(0, I64)})
add("sum_single_empty", [node("Sum", ["A"], ["Y"])], {"A": rand((2, 0, 2))}, [("Y", F)])
add("einsum_reduce_empty_axis", [node("Einsum", ["A"], ["Y"], equation="ij->i")], {"A": rand((3, 0))}, [("Y", F)])
add("einsum_sum_all_empty", [node("Einsum", ["A"], ["Y"], equation="ij->")], {"A": rand((0, 4))}, [("Y", F)])
add("einsum_attention_scores_empty_past", [node("Einsum", ["Q", "K"], ["Y"], equation="bhqd,bhkd->bhqk")],
    {"Q": rand((1, 2, 1, 4)), "K": rand((1, 2, 0, 4))}, [("Y", F)])
add("matmul_scores_empty_past", [node("MatMul", ["Q", "Kt"], ["Y"])],
    {"Q": rand((1, 2, 1, 4)), "Kt": rand((1, 2, 4, 0))}, [("Y", F)])
add("matmul_probs_empty_past", [node("MatMul", ["P", "V"], ["Y"])],
    {"P": rand((1, 2, 1, 0)), "V": rand((1, 2, 0, 4))}, [("Y", F)])
add("convinteger_batch0", [node("ConvInteger", ["X", "W"], ["Y"])],
    {"X": np.zeros((0, 1, 3, 3), np.uint8)}, [("Y", np.int32)], inits={"W": np.ones((2, 1, 2, 2), np.uint8)})
add("maxpool_indices_batch0", [node("MaxPool", ["X"], ["Y", "I"], kernel_shape=[2, 2])],
    {"X": rand((0, 2, 3, 3))}, [("Y", F), ("I", I64)])
add("conv_grouped_batch0_strided", [node("Conv", ["X", "W"], ["Y"], group=2, strides=[2, 2])],
    {"X": rand((0, 4, 6, 6))}, [("Y", F)], inits={"W": rand((4, 2, 3, 3))})
add("layernorm_stats_batch0", [node("LayerNormalization", ["X", "S", "Bi"], ["Y", "M", "IS"], axis=1)],
    {"X": rand((0, 6))}, [("Y", F), ("M", F), ("IS", F)], inits={"S": rand((6,)), "Bi": rand((6,))})
add("gridsample_batch0", [node("GridSample", ["X", "G"], ["Y"])],
    {"X": rand((0, 2, 3, 3)), "G": rand((0, 2, 2, 2))}, [("Y", F)], opset=17)
add("roialign_no_rois", [node("RoiAlign", ["X", "R", "Bi"], ["Y"], output_height=2, output_width=2)],
    {"X": rand((1, 2, 4, 4)), "R": np.zeros((0, 4), F), "Bi": np.zeros((0,), I64)}, [("Y", F)])
add("nms_no_boxes", [node("NonMaxSuppression", ["B", "S"], ["Y"])],
    {"B": np.zeros((1, 0, 4), F), "S": np.zeros((1, 1, 0), F)}, [("Y", I64)])
add("maxunpool_batch0", [node("MaxUnpool", ["X", "I"], ["Y"], kernel_shape=[2, 2], strides=[2, 2])],
    {"X": rand((0, 1, 2, 2)), "I": np.zeros((0, 1, 2, 2), I64)}, [("Y", F)])
add("unique_axis_empty_rows", [node("Unique", ["X"], ["Y", "idx", "inv", "cnt"], axis=0)],
    {"X": rand((0, 3))}, [("Y", F), ("idx", I64), ("inv", I64), ("cnt", I64)])
add("nll_loss_none_batch0", [node("NegativeLogLikelihoodLoss", ["X", "T"], ["Y"], reduction="none")],
    {"X": rand((0, 3)), "T": np.zeros((0,), I64)}, [("Y", F)])
add("random_normal_like_empty", [node("RandomNormalLike", ["X"], ["Y"], seed=1.0)],
    {"X": rand((0, 3))}, [("Y", F)])
add("cumsum_exclusive_empty", [node("CumSum", ["X", "ax"], ["Y"], exclusive=1)], {"X": rand((2, 0, 3))},
    [("Y", F)], inits={"ax": i64(1)})
add("hardmax_empty_axis", [node("Hardmax", ["X"], ["Y"], axis=0)], {"X": rand((0, 3))}, [("Y", F)])
add("depthtospace_crd_batch0", [node("DepthToSpace", ["X"], ["Y"], blocksize=2, mode="CRD")],
    {"X": rand((0, 4, 1, 3))}, [("Y", F)])
add("dynamic_quantize_all_zeros", [node("DynamicQuantizeLinear", ["X"], ["Y", "s", "z"])],
    {"X": np.zeros((2, 3), F)}, [("Y", np.uint8), ("s", F), ("z", np.uint8)])
add("dynamic_quantize_empty", [node("DynamicQuantizeLinear", ["X"], ["Y", "s", "z"])], {"X": rand((0, 4))},
    [("Y", np.uint8), ("s", F), ("z", np.uint8)])
add("rnn_batch0", [node("RNN", ["X", "W", "R"], ["Y", "H"], hidden_size=3)],
    {"X": rand((2, 0, 4))}, [("Y", F), ("H", F)], inits={"W": rand((1, 3, 4)), "R": rand((1, 3, 3))})
add("where_all_empty_broadcast", [node("Where", ["C", "A", "B"], ["Y"])],
    {"C": rand((0, 1), B), "A": rand((1, 3)), "B": rand((0, 3))}, [("Y", F)])
add("onehot_2d_empty", [node("OneHot", ["I", "d", "v"], ["Y"], axis=0)],
    {"I": np.zeros((2, 0), I64)}, [("Y", F)], inits={"d": i64(3), "v": np.array([0, 1], F)})
add("argmax_keepdims_batch0_i64", [node("ArgMax", ["X"], ["Y"], axis=0, keepdims=1)],
    {"X": rand((4, 0), I64)}, [("Y", I64)])
add("sequence_at_empty_tensor", [node("SequenceConstruct", ["A", "B"], ["S"]),
                                 node("SequenceAt", ["S", "i"], ["Y"])],
    {"A": rand((0, 2)), "B": rand((1, 2))}, [("Y", F)], inits={"i": np.array(0, I64)})
add("if_else_concat_empty", [node("If", ["c"], ["Y"],
                                  then_branch=branch("th2", "Relu"),
                                  else_branch=branch("el2", "Neg"))],
    {"c": np.array(False), "X": rand((2, 0, 3))}, [("Y", F)], dyn=False)

# ---------------------------------------------------------------- the remaining ops
for op in ["Acos", "Asin", "Atan", "Atanh", "Cos", "Cosh", "Sinh", "Tan", "Ceil", "Asinh"]:
    unary(f"unary_{op}_2x0", op, (rand((2, 0)) * 0.5).astype(F))
unary("unary_Acosh_0x2", "Acosh", (pos((0, 2)) + 1).astype(F))
binary("binary_Less_0x2", "Less", rand((0, 2)), rand((2,)), out_dtype=B)
binary("binary_GreaterOrEqual_i64_3x0", "GreaterOrEqual", rand((3, 0), I64), rand((3, 1), I64), out_dtype=B)
binary("binary_Or_0", "Or", rand((0,), B), rand((1,), B), out_dtype=B)
binary("binary_BitwiseOr_2x0", "BitwiseOr", rand((2, 0), I64), rand((1, 0), I64), opset=18)
binary("binary_BitwiseXor_0x2", "BitwiseXor", rand((0, 2), I64), rand((0, 2), I64), opset=18)
add("bernoulli_empty", [node("Bernoulli", ["X"], ["Y"], seed=3.0)], {"X": pos((0, 4)) * 0.5}, [("Y", F)])
add("random_uniform_like_empty", [node("RandomUniformLike", ["X"], ["Y"], seed=2.0)], {"X": rand((3, 0))},
    [("Y", F)])
add("random_normal_shape0", [node("RandomNormal", [], ["R"], shape=[0, 3], seed=1.0),
                             node("Concat", ["R", "X"], ["Y"], axis=0)], {"X": rand((2, 3))}, [("Y", F)])
add("random_uniform_shape0", [node("RandomUniform", [], ["R"], shape=[2, 0], seed=1.0),
                              node("Concat", ["R", "X"], ["Y"], axis=1)], {"X": rand((2, 1))}, [("Y", F)])
for w in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
    add(f"window_{w}_size0", [node(w, ["n"], ["Y"])], {"n": np.array(0, I64)}, [("Y", F)], dyn=False)
add("dft_batch0", [node("DFT", ["X"], ["Y"], axis=1)], {"X": rand((0, 8, 1))}, [("Y", F)])
add("stft_batch0", [node("STFT", ["X", "st", "w"], ["Y"])], {"X": rand((0, 16, 1))}, [("Y", F)],
    inits={"st": np.array(4, I64), "w": np.ones((8,), F)})
add("qlinearconv_batch0", [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["Y"])],
    {"x": np.zeros((0, 1, 3, 3), np.uint8)}, [("Y", np.uint8)],
    inits={"xs": np.array(0.1, F), "xz": np.array(1, np.uint8), "w": np.ones((2, 1, 2, 2), np.uint8),
           "ws": np.array(0.2, F), "wz": np.array(0, np.uint8), "ys": np.array(0.3, F),
           "yz": np.array(5, np.uint8)})
add("qlinearmatmul_M0", [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["Y"])],
    {"a": np.zeros((0, 4), np.uint8)}, [("Y", np.uint8)],
    inits={"as": np.array(0.1, F), "az": np.array(1, np.uint8), "b": np.ones((4, 3), np.uint8),
           "bs": np.array(0.2, F), "bz": np.array(2, np.uint8), "ys": np.array(0.3, F),
           "yz": np.array(5, np.uint8)})


add("sequence_length_erase_empty", [
    node("SequenceConstruct", ["A", "B"], ["S"]), node("SequenceErase", ["S"], ["S2"]),
    node("SequenceLength", ["S2"], ["n"]), node("SequenceAt", ["S2", "zero"], ["Y"])],
    {"A": rand((0, 3)), "B": rand((2, 3))}, [("n", I64), ("Y", F)], inits={"zero": np.array(0, I64)})
add("sequence_empty_insert_empty", [
    node("SequenceEmpty", [], ["S"], dtype=TensorProto.FLOAT), node("SequenceInsert", ["S", "A"], ["S2"]),
    node("ConcatFromSequence", ["S2"], ["Y"], axis=0, new_axis=1)], {"A": rand((0, 2))}, [("Y", F)])
add("sequence_map_empty_tensors", [
    node("SplitToSequence", ["X", "sp"], ["S"], axis=0),
    node("SequenceMap", ["S"], ["S2"], body=helper.make_graph(
        [node("Relu", ["e"], ["r"])], "mbody", [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("r", TensorProto.FLOAT, None)])),
    node("ConcatFromSequence", ["S2"], ["Y"], axis=0)], {"X": rand((2, 0))}, [("Y", F)],
    inits={"sp": i64(1, 1)})
add("optional_of_empty", [
    node("Optional", ["A"], ["o"]), node("OptionalHasElement", ["o"], ["h"]),
    node("OptionalGetElement", ["o"], ["Y"])], {"A": rand((0, 3))}, [("h", B), ("Y", F)], opset=18)

# ---------------------------------------------------------------- 0 channels, 0 spatial extent, empty normalized axes
add("batchnorm_channels0", [node("BatchNormalization", ["X", "s", "b", "m", "v"], ["Y"])],
    {"X": rand((2, 0, 3))}, [("Y", F)],
    inits={"s": np.zeros((0,), F), "b": np.zeros((0,), F), "m": np.zeros((0,), F), "v": np.zeros((0,), F)})
add("resize_spatial0", [node("Resize", ["X", "", "sc"], ["Y"], mode="nearest")], {"X": rand((1, 1, 0, 4))},
    [("Y", F)], inits={"sc": np.array([1, 1, 2, 2], F)})
add("gemm_transA_K0", [node("Gemm", ["A", "B", "C"], ["Y"], transA=1)],
    {"A": rand((0, 2)), "B": rand((0, 3))}, [("Y", F)], inits={"C": rand((2, 3))})
binary("matmul_i32_K0", "MatMul", rand((3, 0), np.int32), rand((0, 2), np.int32))
add("scatternd_add_empty_updates", [node("ScatterND", ["X", "I", "U"], ["Y"], reduction="add")],
    {"X": rand((4, 3)), "I": np.zeros((0, 1), I64), "U": rand((0, 3))}, [("Y", F)], opset=16)
add("where_mask_past0", [node("Where", ["M", "S", "ninf"], ["Y"])],
    {"M": rand((1, 1, 1, 0), B), "S": rand((1, 2, 1, 0))}, [("Y", F)], inits={"ninf": np.array(-1e9, F)})
add("expand_to_runtime_empty_shape", [node("Shape", ["X"], ["s"]), node("Expand", ["c", "s"], ["Y"])],
    {"X": rand((3, 0, 2))}, [("Y", F)], inits={"c": np.array([1.5], F)})
add("einsum_ellipsis_batch0", [node("Einsum", ["A", "B"], ["Y"], equation="...ij,...jk->...ik")],
    {"A": rand((0, 2, 3)), "B": rand((0, 3, 2))}, [("Y", F)])
add("cumsum_i64_0", [node("CumSum", ["X", "ax"], ["Y"])], {"X": rand((0,), I64)}, [("Y", I64)],
    inits={"ax": i64(0)})
add("position_ids_past0", [
    node("Shape", ["past"], ["ps"]), node("Gather", ["ps", "two"], ["plen"], axis=0),
    node("Add", ["plen", "one"], ["end"]), node("Range", ["plen", "end", "one"], ["Y"])],
    {"past": rand((1, 2, 0, 4))}, [("Y", I64)],
    inits={"two": np.array(2, I64), "one": np.array(1, I64)})

# onnxruntime-node 1.30 rejects these (error, or the process dies), so they are not generated.
# Tessera runs each of them (checked by hand): empty outputs of the numpy shape, GlobalAveragePool
# 0 and GlobalMaxPool -inf over an empty spatial extent; Conv [1, 2, 0, 4] with a 3x3 window and
# ArgMax along a 0-length axis are load/run errors naming the node.
REJECTED = {
    # Reshape [2, 0, 4] to [2, 0, -1]: "Invalid Target shape product of 0. Product cannot be 0 in
    # combination with -1" (at load with static shapes; "The input tensor cannot be reshaped to the
    # requested shape" at run time with symbolic ones).
    "reshape_minus1_2x0x4": "Reshape with -1 and a 0 in the target shape",
    # TopK k=2 along the last axis of a [0, 5] input: onnxruntime-node dies of SIGFPE (an integer
    # division by the 0 row count), with static and with symbolic input shapes alike.
    "topk_batch0": "TopK over a non-empty axis with batch 0",
    # Split [3, 0] along axis 1 with num_outputs=2 (opset 18): "Invalid num_outputs value of 2.
    # Size of dimension being split is 0".
    "split_num_outputs_empty_axis": "Split num_outputs of a 0-length axis",
    # MatMul [0, 1, 2, 3] x [4, 3, 5] (numpy: [0, 4, 2, 5]): "left operand cannot broadcast on dim 0".
    "matmul_broadcast_batch0": "MatMul broadcasting a batch of 0 against a batch of 4 and 1 against 4",
    # SoftmaxCrossEntropyLoss reduction=none on scores [0, 3]: its function body's Reshape to
    # [0, 3, -1] fails ("Product cannot be 0 in combination with -1").
    "softmax_ce_none_batch0": "SoftmaxCrossEntropyLoss with batch 0",
    # GRU / LSTM with X [2, 0, 4] (batch 0): onnxruntime-node aborts ("terminate called without an
    # active exception"). RNN with batch 0 runs and is kept (rnn_batch0).
    "gru_batch0": "GRU with batch 0",
    "lstm_batch0": "LSTM with batch 0",
    # Multinomial with input [0, 4]: "batch_size is < 1".
    "multinomial_batch0": "Multinomial with batch 0",
    # Scan over a scan input of length 0: "Invalid dim0_offset of 0. Dimension 0 is 0".
    "scan_length0": "Scan of 0 iterations",
    # Conv with W [0, 2, 3, 3] (0 output channels): "ReorderOutput ... invalid channel count";
    # Conv / MaxPool / AveragePool / GlobalAveragePool / GlobalMaxPool with 0 channels or a 0
    # spatial dim: "Invalid input shape. Only N can be zero" (or the NCHWc variant's message).
    "conv_cout0": "Conv with 0 output channels",
    "conv_spatial0": "Conv with input [1, 2, 0, 4]",
    "pool_channels0": "MaxPool / AveragePool with input [1, 0, 4, 4]",
    "global_pool_spatial0": "GlobalAveragePool / GlobalMaxPool with input [1, 3, 0, 4]",
    # InstanceNormalization with X [2, 3, 0]: onnxruntime-node dies of SIGSEGV.
    "instancenorm_spatial0": "InstanceNormalization over an empty spatial extent",
    # LayerNormalization of X [2, 0] over axis -1: "Size of X.shape[axis:] must be at least 1".
    "layernorm_normalized_axis0": "LayerNormalization over a 0-length normalized axis",
    # ArgMax along a 0-length axis: fails with an empty status message.
    "argmax_empty_axis": "ArgMax along a 0-length axis",
}

# onnxruntime runs these but its result is not the ONNX one or is an undocumented default; they
# are not generated:
DIVERGES = {
    # Gemm alpha=2, beta=0.5 with A [2, 0], B [0, 3], C [3]: ONNX says Y = beta * C; onnxruntime
    # returns C (it copies the bias, then skips the GEMM that would scale it when K=0).
    "gemm_K0_beta_half": "Gemm K=0 with beta not 0 or 1",
    # Loop with M=0 whose body declares no shape for its scan output: onnxruntime warns
    # "Defaulting to a rank 1 shape of {0}"; Tessera uses the body's inferred rank ([0, 0] for a
    # rank-1 per-iteration value). With the shape declared (loop_trip0_declared) both give [0, 2].
    "loop_trip0_undeclared_scan": "Loop with 0 iterations and an undeclared scan output shape",
    # QLinearMatMul with K=0 (y must be y_zero_point everywhere): onnxruntime returns
    # uninitialized memory ([[16, 0, 16], [0, 0, 0]] for y_zero_point 5); Tessera gives 5s.
    "qlinearmatmul_K0": "QLinearMatMul with K=0",
    # Conv with X [2, 0, 3, 3], W [4, 0, 3, 3] and a bias (Y must be the bias everywhere):
    # onnxruntime returns uninitialized memory (1e-14, 0, ...); Tessera gives the bias.
    "conv_cin0_bias": "Conv with 0 input channels",
}

if __name__ == "__main__":
    main(CASES)
