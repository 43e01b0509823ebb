"""Block-quantized weights (int4 LLM exports): com.microsoft MatMulNBits and GatherBlockQuantized.

The weights are quantized here with a numpy block-wise quantizer in onnxruntime's layout
(docs/ContribOperators.md): codes packed low bits first along K, one [N, k_blocks, blob] u8 blob
per row; symmetric (zero point absent: 2^(bits-1)) or asymmetric (u8 zero points packed per row
like the codes, or unpacked floats). The padding codes of a last, partial block are random, so a
kernel that reads them as weights fails.

Tolerance: the dequantized weights are exact in f32 in both runtimes ((code - zero) * scale), so
outputs differ only by summation order. rtol 1e-4 as usual, plus an atol of 1e-5 * max_n
sum_k |a_k * w_nk| (the largest absolute-value sum of an output's terms): reordering a sum of K
f32 terms moves it by about sqrt(K) * 2^-24 * sum|terms| (4e-6 at K = 4096), so 1e-5 of that sum
covers it with margin while one wrong code (a whole quantization step on one term, about
sum|terms| / K * 2) still fails at the K used here. Outputs near zero through cancellation need
this atol, which rtol alone cannot give.
"""
import numpy as np

from cases import MS, Case, TensorProto, helper, main, rng  # noqa: F401
from quant4 import pack_codes, pack_zero_points, quantize


def tolerance_atol(a, deq):
    """1e-5 * the largest sum_k |a_k * w_nk| over the outputs (module docstring)."""
    a2 = np.abs(a.reshape(-1, a.shape[-1])).astype(np.float64)
    return float(1e-5 * (a2 @ np.abs(deq.T).astype(np.float64)).max(initial=0.0))


def matmul_nbits(name, a_shape, n, block, bits=4, zp="none", bias=False, seed=0, dtype=np.float32,
                 accuracy_level=None, g_idx=False, weights_as_inputs=False, rtol=1e-4, atol_scale=1.0):
    """zp: "none" (symmetric, input omitted), "packed" (asymmetric, u8), "float" (asymmetric, A's dtype)."""
    r = rng(seed)
    k = a_shape[-1]
    a = r.standard_normal(a_shape).astype(dtype)
    w = r.standard_normal((n, k)).astype(np.float32) * 0.1
    b, scale, zpi, deq = quantize(w, bits, block, zp == "none", r)
    kb = scale.shape[1]
    consts = {"B": b, "scales": scale.astype(dtype)}
    names = ["A", "B", "scales"]
    if zp == "packed":
        consts["zero_points"] = pack_zero_points(zpi, bits)
        names.append("zero_points")
    elif zp == "float":
        consts["zero_points"] = zpi.astype(dtype)
        names.append("zero_points")
    if g_idx or bias:
        names += [""] * (4 - len(names))
    if g_idx:
        consts["g_idx"] = (np.arange(k) // block).astype(np.int32)
        names.append("g_idx")
    if bias:
        if len(names) == 4:
            names.append("")
        consts["bias"] = r.standard_normal(n).astype(dtype)
        names.append("bias")
    attrs = dict(K=k, N=n, bits=bits, block_size=block)
    if accuracy_level is not None:
        attrs["accuracy_level"] = accuracy_level
    atol = tolerance_atol(a.astype(np.float32), deq) * atol_scale
    if bias:
        atol += 1e-6 * float(np.abs(consts["bias"]).max())
    inputs = {"A": a}
    inits = consts
    if weights_as_inputs:
        inputs = {"A": a, "B": b, "scales": consts["scales"]}
        inits = {kk: v for kk, v in consts.items() if kk not in inputs}
    nodes = [helper.make_node("MatMulNBits", names, ["Y"], domain=MS, **attrs)]
    if dtype == np.float16:  # f16 inside the graph, f32 at its edges (the .npy files are f32)
        inputs["A"] = a.astype(np.float32)
        nodes = [helper.make_node("Cast", ["A"], ["A16"], to=TensorProto.FLOAT16)] + nodes + [
            helper.make_node("Cast", ["Y16"], ["Y32"], to=TensorProto.FLOAT)]
        nodes[1].input[0], nodes[1].output[0] = "A16", "Y16"
        nodes[2].output[0] = "Y"
        nodes[2].input[0] = "Y16"
    return Case(name, nodes, inputs, [("Y", np.float32, list(a_shape[:-1]) + [n])], initializers=inits,
                rtol=rtol, atol=atol)


def gather_bq(name, data_shape, idx, block, bits=4, zp=False, seed=0, scale_dtype=np.float32, idx_dtype=np.int64):
    """data_shape: the logical [V, ..., L]; data is stored u8 with L packed 8 / bits per byte."""
    r = rng(seed)
    qmax = (1 << bits) - 1
    per = 8 // bits
    v, last = data_shape[0], data_shape[-1]
    blocks = -(-last // block)
    codes = r.integers(0, qmax + 1, size=data_shape)
    data = pack_codes(codes, bits)
    scales = (r.random(tuple(data_shape[:-1]) + (blocks,)) * 0.1 + 0.01).astype(scale_dtype)
    names = ["data", "indices", "scales"]
    inits = {"data": data, "scales": scales}
    if zp:
        zpi = r.integers(0, qmax + 1, size=tuple(data_shape[:-1]) + (-(-blocks // per) * per,))
        inits["zero_points"] = pack_codes(zpi, bits)
        names.append("zero_points")
    nodes = [helper.make_node("GatherBlockQuantized", names, ["Y"], domain=MS, bits=bits, block_size=block,
                              gather_axis=0, quantize_axis=len(data_shape) - 1)]
    if scale_dtype == np.float16:  # an f16 output, cast to f32 for the .npy files
        nodes[0].output[0] = "Y16"
        nodes.append(helper.make_node("Cast", ["Y16"], ["Y"], to=TensorProto.FLOAT))
    indices = np.array(idx, idx_dtype)
    out_shape = list(indices.shape) + list(data_shape[1:])
    # Bit-exact: (code - zero) * scale in f32 in both runtimes, then (f16) the same rounding.
    return Case(name, nodes, {"indices": indices}, [("Y", np.float32, out_shape)], initializers=inits,
                rtol=0.0, atol=0.0)


def cases():
    out = []
    # The grid of the issue: M {1, 3, 64} x K {64, 96, 4096} x N {32, 100}, the block size and the
    # zero points cycling through 16/32/128 and none/packed.
    i = 0
    for m in (1, 3, 64):
        for k in (64, 96, 4096):
            for n in (32, 100):
                block = (16, 32, 128)[i % 3]
                zp = ("none", "packed")[i % 2]
                out.append(matmul_nbits(f"mnb_m{m}_k{k}_n{n}_b{block}_{zp}", [m, k], n, block, zp=zp, seed=i))
                i += 1
    # Decode-sized layers (the GEMV path at full size).
    out.append(matmul_nbits("mnb_m1_k4096_n4096_b32_none", [1, 4096], 4096, 32, seed=100))
    out.append(matmul_nbits("mnb_m1_k4096_n4096_b128_packed", [1, 4096], 4096, 128, zp="packed", seed=101))
    # Each GEMV row blocking (M 2, 4), groups of 4 rows and a rest (M 5, 16), the GEMV / panel
    # boundary (M 16 and 17).
    for m in (2, 4, 5, 16, 17):
        out.append(matmul_nbits(f"mnb_m{m}_k256_n67_b16_packed", [m, 256], 67, 16, zp="packed", seed=110 + m))
    # 3-D A [batch, seq, K], bias.
    out.append(matmul_nbits("mnb_3d_b2_s5_bias", [2, 5, 96], 40, 32, zp="packed", bias=True, seed=120))
    out.append(matmul_nbits("mnb_3d_b1_s1_bias", [1, 1, 128], 48, 16, bias=True, seed=121))
    out.append(matmul_nbits("mnb_m64_bias_b128", [64, 300], 70, 128, bias=True, seed=122))
    # Unpacked float zero points, 8-bit and 2-bit codes.
    out.append(matmul_nbits("mnb_float_zp_m3", [3, 200], 50, 32, zp="float", seed=130))
    out.append(matmul_nbits("mnb_float_zp_m64", [64, 96], 33, 16, zp="float", seed=131))
    for m in (1, 3, 64):
        out.append(matmul_nbits(f"mnb_8bit_m{m}_none", [m, 160], 70, 32, bits=8, seed=140 + m))
        out.append(matmul_nbits(f"mnb_8bit_m{m}_packed", [m, 96], 45, 16, bits=8, zp="packed", seed=150 + m))
        out.append(matmul_nbits(f"mnb_2bit_m{m}_packed", [m, 100], 37, 16, bits=2, zp="packed", seed=160 + m))
    out.append(matmul_nbits("mnb_2bit_m1_none_b64", [1, 256], 24, 64, bits=2, seed=170))
    # The trivial (deprecated) g_idx. Float zero points: with g_idx, onnxruntime 1.30 dequantizes
    # on a separate path that reads u8 zero points into a local it never uses (always 8), so packed
    # zero points there differ from the spec (Tessera follows the spec: g_idx trivial = absent).
    out.append(matmul_nbits("mnb_gidx_trivial", [3, 96], 20, 32, zp="float", g_idx=True, bias=True, seed=180))
    out.append(matmul_nbits("mnb_gidx_trivial_sym", [3, 64], 24, 16, g_idx=True, seed=182))
    # Weights fed as graph inputs (parameters unpacked on every run).
    out.append(matmul_nbits("mnb_weights_as_inputs", [2, 64], 30, 16, seed=181, weights_as_inputs=True))
    # accuracy_level 1 (f32) runs as 0 in both runtimes.
    out.append(matmul_nbits("mnb_accuracy1", [3, 128], 64, 32, zp="packed", accuracy_level=1, seed=190))
    # f16 A, scales, zero points and bias; Y rounded to f16 (onnxruntime on x86 computes in f32).
    out.append(matmul_nbits("mnb_f16_m1", [1, 128], 64, 32, seed=200, dtype=np.float16, rtol=2e-3, atol_scale=100))
    out.append(matmul_nbits("mnb_f16_m5_bias", [5, 96], 40, 16, zp="float", bias=True, seed=201, dtype=np.float16,
                            rtol=2e-3, atol_scale=100))
    # Empty A (M = 0).
    out.append(matmul_nbits("mnb_m0", [0, 64], 16, 32, seed=210))

    # GatherBlockQuantized: embedding lookups (negative and out-of-range indices included).
    out.append(gather_bq("gbq_4bit_b32", [50, 64], [[3, 0, -1], [49, 7, 3]], 32))
    out.append(gather_bq("gbq_4bit_b16_zp", [20, 48], [5, 19, -20, 2], 16, zp=True))
    out.append(gather_bq("gbq_4bit_b128_partial", [10, 200], [[9], [0]], 128, zp=True, idx_dtype=np.int32))
    out.append(gather_bq("gbq_8bit_b32_zp", [30, 96], [[1, 2], [29, -3]], 32, bits=8, zp=True))
    out.append(gather_bq("gbq_8bit_b16", [8, 32], [7, 0, 7], 16, bits=8))
    out.append(gather_bq("gbq_2bit_b16_zp", [12, 64], [11, 4], 16, bits=2, zp=True))
    out.append(gather_bq("gbq_3d_rows", [6, 3, 64], [[5, 1], [0, 2]], 32, zp=True))
    out.append(gather_bq("gbq_f16_scales", [16, 64], [[15, 2, 9]], 32, zp=True, scale_dtype=np.float16))
    return out


if __name__ == "__main__":
    main(cases())
