// Block-quantized weights, the onnxruntime com.microsoft contrib ops that int4 LLM exports use
// (docs/ContribOperators.md; the layouts are in core/ops/block_quant.h):
//
//   MatMulNBits(A [..., K] f32|f16, B u8 [N, k_blocks, blob], scales [N, k_blocks],
//               zero_points? (u8 packed or A's dtype), g_idx? i32 [K], bias? [N]) -> Y [..., N]
//     Y = A @ W^T (+ bias) with W[n][k] = (code(n, k) - zero_point(n, k / block_size)) *
//     scale(n, k / block_size). accuracy_level (0..4) is accepted and does not change results:
//     Tessera computes in f32 whatever the level (onnxruntime at level 4 quantizes A to int8,
//     so its results differ from Tessera's there by that rounding). g_idx (deprecated) is accepted
//     only when it is the trivial k -> k / block_size; any other order is kUnsupported.
//
//   GatherBlockQuantized(data u8 [D0, ..., packed], indices i32|i64, scales f32|f16,
//                        zero_points? u8) -> output (scales' dtype)
//     Gather along axis 0, then dequantize along the packed last axis in blocks of block_size:
//     output = indices.shape + data.shape[1:], the last dim times 8/bits. An index outside
//     [-D0, D0 - 1] gives a row of zeros (onnxruntime's rule, unlike ONNX Gather). The int4/uint4
//     data types of the spec are not Tessera dtypes (the importer rejects them).
#include <cstdint>

#include "core/ops/block_quant.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

int64_t numel_of(const ValueType& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

// Input i (when present with a known shape) must hold `want` elements; `what` describes the
// expected layout for the message.
Status require_numel(const InferContext& ctx, size_t i, const char* name, int64_t want, const std::string& what) {
  if (!ctx.has_input(i) || !ctx.input(i).has_shape) return ok_status();
  const int64_t n = numel_of(ctx.input(i));
  if (n >= 0 && n != want)
    return ctx.ir_error("input[", i, "] (", name, "): shape ", ctx.input(i).str(), " has ", n, " elements, expected ",
                        what);
  return ok_status();
}

Status infer_matmul_nbits(InferContext& ctx) {
  auto geo = nbits_geometry(ctx.node());
  if (!geo.ok()) return geo.status().with_context(ctx.place());
  const NBitsGeometry& g = *geo;
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const DType t = ctx.input(0).dtype;
  const ValueType& b = ctx.input(1);
  if (b.has_shape && (b.shape.size() != 3 || (b.shape[0] >= 0 && b.shape[0] != g.n) ||
                      (b.shape[1] >= 0 && b.shape[1] != g.k_blocks) || (b.shape[2] >= 0 && b.shape[2] != g.blob)))
    return ctx.ir_error("input[1] (B): shape ", b.str(), ", expected [N, ceil(K / block_size), block_size * bits / 8] = [",
                        g.n, ", ", g.k_blocks, ", ", g.blob, "]");
  TSR_RETURN_IF_ERROR(require_numel(ctx, 2, "scales", g.n * g.k_blocks, str_cat("[N, k_blocks] = [", g.n, ", ", g.k_blocks, "]")));
  if (ctx.has_input(3)) {
    const DType z = ctx.input(3).dtype;
    if (z == DType::kU8) {
      TSR_RETURN_IF_ERROR(require_numel(ctx, 3, "zero_points", g.n * g.zp_row_bytes,
                                        str_cat("packed [N, ceil(k_blocks * bits / 8)] = [", g.n, ", ", g.zp_row_bytes, "]")));
    } else if (z == t || z == DType::kUndefined) {
      TSR_RETURN_IF_ERROR(require_numel(ctx, 3, "zero_points", g.n * g.k_blocks,
                                        str_cat("unpacked [N, k_blocks] = [", g.n, ", ", g.k_blocks, "]")));
    } else {
      return ctx.ir_error("input[3] (zero_points): dtype ", dtype_name(z), ", expected u8 (packed) or ", dtype_name(t));
    }
  }
  if (ctx.has_input(4)) {
    TSR_RETURN_IF_ERROR(ctx.require_dtype(4, {DType::kI32}));
    TSR_RETURN_IF_ERROR(require_numel(ctx, 4, "g_idx", g.k, str_cat("[K] = [", g.k, "]")));
    if (const Tensor* gi = ctx.input_value(4)) {
      const int32_t* p = gi->data<int32_t>();
      for (int64_t k = 0; k < gi->numel(); ++k)
        if (p[k] != k / g.block)
          return unsupported(ctx.place(), ": input[4] (g_idx) maps k=", k, " to block ", p[k], " instead of ", k / g.block,
                             "; Tessera runs MatMulNBits only with the trivial (deprecated) g_idx k / block_size");
    }
  }
  if (ctx.has_input(5)) {
    TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 5));
    TSR_RETURN_IF_ERROR(require_numel(ctx, 5, "bias", g.n, str_cat("[N] = [", g.n, "]")));
  }
  const ValueType& a = ctx.input(0);
  if (!a.has_shape) {
    ctx.set_output_unknown_shape(0, t);
    return ok_status();
  }
  if (a.shape.empty()) return ctx.ir_error("input[0] (A): a scalar, expected rank >= 1 with last dim K = ", g.k);
  if (a.shape.back() >= 0 && a.shape.back() != g.k)
    return ctx.arg_error("input[0] (A): shape ", a.str(), ", the last dim must be K = ", g.k);
  Shape out = a.shape;
  out.back() = g.n;
  ctx.set_output(0, t, out);
  return ok_status();
}

Status infer_gather_block_quantized(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI32, DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kF32, DType::kF16}));
  if (ctx.has_input(3)) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 3));
  const ValueType& data = ctx.input(0);
  const ValueType& idx = ctx.input(1);
  const DType t = ctx.input(2).dtype;
  if (!data.has_shape || !idx.has_shape) {
    ctx.set_output_unknown_shape(0, t);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(data.shape.size());
  auto geo = gather_bq_geometry(ctx.node(), rank);
  if (!geo.ok()) return geo.status().with_context(ctx.place());
  const int64_t packed = data.shape.back();
  const int64_t last = packed < 0 ? -1 : packed * geo->per_byte();
  const int64_t blocks = last < 0 ? -1 : (last + geo->block - 1) / geo->block;
  // scales: data's shape with the last dim ceil(last / block_size); zero_points: that with the
  // last dim packed (ceil(blocks / per_byte)).
  for (size_t i : {size_t{2}, size_t{3}}) {
    if (!ctx.has_input(i) || !ctx.input(i).has_shape) continue;
    const Shape& s = ctx.input(i).shape;
    const int64_t want_last = i == 2 || blocks < 0 ? blocks : (blocks + geo->per_byte() - 1) / geo->per_byte();
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; ok && d < rank; ++d) {
      const int64_t want = d == rank - 1 ? want_last : data.shape[static_cast<size_t>(d)];
      ok = s[static_cast<size_t>(d)] < 0 || want < 0 || s[static_cast<size_t>(d)] == want;
    }
    if (!ok)
      return ctx.ir_error("input[", i, "] (", i == 2 ? "scales" : "zero_points", "): shape ", ctx.input(i).str(),
                          " does not match data ", data.str(), ": expected data's dims with the last one ",
                          i == 2 ? "ceil(values / block_size)" : "the packed ceil(blocks * bits / 8)", " = ", want_last);
  }
  Shape out = idx.shape;
  out.insert(out.end(), data.shape.begin() + 1, data.shape.end());
  out.back() = last;
  ctx.set_output(0, t, out);
  return ok_status();
}

}  // namespace

void register_block_quant_ops(OpRegistry& r) {
  TSR_IF_SELECTED("com.microsoft::MatMulNBits") r.add(OpDef{"com.microsoft::MatMulNBits", "com.microsoft", 1, 3, 6, 1, 1,
      {{"K", AttrKind::kInt, true}, {"N", AttrKind::kInt, true}, {"block_size", AttrKind::kInt, true}, int_attr("bits", 4),
       int_attr("accuracy_level", 0), int_attr("weight_prepacked", 0)},
      infer_matmul_nbits,
      "Y = A @ dequant(B)^T (+ bias): B 2/4/8-bit codes in blocks along K, (code - zero_point) * scale per block"});
  TSR_IF_SELECTED("com.microsoft::GatherBlockQuantized") r.add(OpDef{"com.microsoft::GatherBlockQuantized", "com.microsoft", 1, 3, 4, 1, 1,
      {int_attr("bits", 4), int_attr("block_size", 128), int_attr("gather_axis", 0), int_attr("quantize_axis", 1)},
      infer_gather_block_quantized,
      "Gather of block-quantized u8 rows (axis 0), dequantized along the packed last axis; out-of-range indices give zeros"});
}

}  // namespace tsr::ops
