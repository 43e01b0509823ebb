// Linear-algebra OpDefs (ONNX opset 17): MatMul (numpy matmul semantics) and Gemm; FusedGemm
// (Tessera): Gemm + an activation epilogue (fused_activation.h), made by core/passes;
// com.microsoft FusedMatMul (alpha * op(A) @ op(B), batched).
#include <utility>

#include "core/ops/families/matmul_infer.h"
#include "core/ops/fused_activation.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

const std::initializer_list<DType> kMatMulTypes = {DType::kF32, DType::kF64, DType::kF16, DType::kI32,
                                                   DType::kI64, DType::kU32, DType::kU64, DType::kBF16};

// Two dims that must agree: equal, or one unknown. Returns the known one.
bool merge_dim(int64_t a, int64_t b, int64_t* out) {
  if (a >= 0 && b >= 0 && a != b) return false;
  *out = a >= 0 ? a : b;
  return true;
}

}  // namespace

// numpy.matmul: 1-D A is promoted to [1, K] and 1-D B to [K, 1] (the added dims are removed from
// the result); leading (batch) dims broadcast.
Status infer_matmul_shape(InferContext& ctx, size_t ia, size_t ib, DType dt, bool ta, bool tb) {
  const ValueType& a = ctx.input(ia);
  const ValueType& b = ctx.input(ib);
  if (!a.has_shape || !b.has_shape) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  if (a.shape.empty() || b.shape.empty()) return ctx.ir_error("matmul inputs must have rank >= 1 (scalars are not allowed)");
  Shape sa = a.shape, sb = b.shape;
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  // op(A), op(B): the last two axes swapped (a 1-D operand's flag is ignored, as onnxruntime's).
  if (ta && !a1) std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
  if (tb && !b1) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  int64_t k = 0;
  if (!merge_dim(sa.back(), sb[sb.size() - 2], &k))
    return ctx.ir_error("inner dims differ: A ", shape_str(a.shape), " x B ", shape_str(b.shape));
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcast_shapes(ba, bb);
  if (!batch.ok()) return ctx.ir_error("batch dims: ", batch.status().message());
  Shape out = *batch;
  if (!a1) out.push_back(sa[sa.size() - 2]);
  if (!b1) out.push_back(sb.back());
  ctx.set_output(0, dt, out);
  return ok_status();
}

namespace {

Status infer_matmul(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kMatMulTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  const DType dt = ctx.input(0).dtype != DType::kUndefined ? ctx.input(0).dtype : ctx.input(1).dtype;
  return infer_matmul_shape(ctx, 0, 1, dt);
}

// com.microsoft::FusedMatMul (onnxruntime docs/ContribOperators.md): Y = alpha * op(A) @ op(B),
// numpy.matmul batching; transA/transB swap the last two axes. transBatchA/transBatchB (which
// move the batch axes) are accepted here and refused by the kernel when set.
Status infer_fused_matmul(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  const DType dt = ctx.input(0).dtype != DType::kUndefined ? ctx.input(0).dtype : ctx.input(1).dtype;
  return infer_matmul_shape(ctx, 0, 1, dt, ctx.node().attr_int("transA") != 0, ctx.node().attr_int("transB") != 0);
}

Status infer_gemm(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kMatMulTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 2, 2));
  if (ctx.has_input(2)) TSR_RETURN_IF_ERROR(ctx.require_rank(2, 0, 2));
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(1);
  const DType dt = a.dtype;
  const bool ta = ctx.node().attr_int("transA") != 0, tb = ctx.node().attr_int("transB") != 0;
  const int64_t m = a.has_shape ? a.shape[ta ? 1 : 0] : -1;
  const int64_t ka = a.has_shape ? a.shape[ta ? 0 : 1] : -1;
  const int64_t kb = b.has_shape ? b.shape[tb ? 1 : 0] : -1;
  const int64_t n = b.has_shape ? b.shape[tb ? 0 : 1] : -1;
  int64_t k = 0;
  if (!merge_dim(ka, kb, &k))
    return ctx.ir_error("inner dims differ: op(A) is [", m, ", ", ka, "], op(B) is [", kb, ", ", n, "]");
  if (ctx.has_input(2) && ctx.input(2).has_shape) {
    // C must broadcast unidirectionally to [M, N].
    const Shape& c = ctx.input(2).shape;
    const Shape mn = {m, n};
    for (size_t d = 0; d < c.size(); ++d) {
      const int64_t cd = c[c.size() - 1 - d], td = mn[1 - d];
      if (cd != 1 && cd >= 0 && td >= 0 && cd != td)
        return ctx.ir_error("input[2] (C): shape ", shape_str(c), " does not broadcast to [", m, ", ", n, "]");
    }
  }
  ctx.set_output(0, dt, {m, n});
  return ok_status();
}

}  // namespace

void register_linalg_ops(OpRegistry& r) {
  TSR_IF_SELECTED("MatMul") r.add({"MatMul", "", 13, 2, 2, 1, 1, {}, infer_matmul, "numpy.matmul: batched, broadcast, 1-D promotion"});
  TSR_IF_SELECTED("com.microsoft::FusedMatMul") r.add({"com.microsoft::FusedMatMul", "com.microsoft", 1, 2, 2, 1, 1,
         {float_attr("alpha", 1.0), int_attr("transA", 0), int_attr("transB", 0), int_attr("transBatchA", 0),
          int_attr("transBatchB", 0)},
         infer_fused_matmul,
         "Y = alpha * op(A) @ op(B), numpy.matmul batching, op() swapping the last two axes (transA/transB; "
         "transBatchA/B unsupported); made by fold_matmul_transpose"});
  TSR_IF_SELECTED("Gemm") r.add({"Gemm", "", 13, 2, 3, 1, 1,
         {float_attr("alpha", 1.0), float_attr("beta", 1.0), int_attr("transA", 0),
          int_attr("transB", 0)},
         infer_gemm, "Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N]"});
  TSR_IF_SELECTED("FusedGemm") r.add({"FusedGemm", "tessera", 1, 2, 3, 1, 1,
         {float_attr("alpha", 1.0), float_attr("beta", 1.0), int_attr("transA", 0),
          int_attr("transB", 0), {"activation", AttrKind::kString, true},
          {"activation_params", AttrKind::kFloats},
          {"activation_affine", AttrKind::kFloats}, {"activation_bounds", AttrKind::kFloats}},
         [](InferContext& ctx) -> Status {
           TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place()).status());
           TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
           return infer_gemm(ctx);
         },
         "Gemm + activation applied in the kernel's epilogue (Relu, Clip, HardSwish, Sigmoid, Silu, LeakyRelu, "
         "HardSigmoid, Gelu, GeluTanh; made by the optimizer)"});
}

}  // namespace tsr::ops
