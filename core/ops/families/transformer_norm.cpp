// Normalizations of transformer models as exporters and onnxruntime's optimizer ship them:
//   RMSNormalization (ONNX opset 23), SimplifiedLayerNormalization (onnxruntime's RMS norm,
//   registered by onnxruntime in the ONNX domain, since version 1), and the com.microsoft contrib
//   ops SkipLayerNormalization, SkipSimplifiedLayerNormalization and EmbedLayerNormalization
//   (onnxruntime docs/ContribOperators.md; edge behaviour checked against onnxruntime-node 1.30 by
//   tests/transformers/gen_norms.py).
// RMS norm (Zhang & Sennrich 2019): Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean over the
// normalized dims; layer norm as ONNX LayerNormalization. Statistics are computed in f32 or
// wider whatever stash_type says (onnxruntime's CPU kernels do the same for f32/f16 inputs).
// Kernels: backends/cpu/kernels/transformer_norm.cpp; VJPs: core/ops/grads/transformer_norm.cpp.
#include "core/ops/families/norm_infer.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16};

// True when `s` broadcasts unidirectionally (numpy rules) to `to` (dynamic dims match anything).
bool broadcasts_to(const Shape& s, const Shape& to) {
  if (s.size() > to.size()) return false;
  for (size_t k = 1; k <= s.size(); ++k) {
    const int64_t a = s[s.size() - k], b = to[to.size() - k];
    if (a != 1 && a >= 0 && b >= 0 && a != b) return false;
  }
  return true;
}

// Checks that input i, when present, is a float vector [hidden] of input 0's dtype.
Status require_hidden_vector(const InferContext& ctx, size_t i, const char* what, int64_t hidden) {
  if (!ctx.has_input(i)) return ok_status();
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  if (!ctx.input(i).has_shape) return ok_status();
  const Shape& s = ctx.input(i).shape;
  if (s.size() != 1 || (hidden >= 0 && s[0] >= 0 && s[0] != hidden))
    return ctx.ir_error("input[", i, "] (", what, "): shape ", shape_str(s), ", expected [", hidden, "]");
  return ok_status();
}

// SkipLayerNormalization / SkipSimplifiedLayerNormalization (com.microsoft):
//   inputs:  input [batch, seq, hidden] or [tokens, hidden] (f32/f64/f16 T); skip: T, input's
//            shape, or [seq, hidden] / [1, seq, hidden] for a 3-D input (broadcast over batch);
//            gamma [hidden]; Skip: beta? [hidden], bias? [hidden]; SkipSimplified: bias? [hidden].
//   attrs:   epsilon (1e-12).
//   outputs: output (T, input's shape); mean? and inv_std_var? (f32, input's shape with the
//            last dim 1; SkipSimplified has no mean: requesting it is an error, as in
//            onnxruntime); input_skip_bias_sum? (T, input's shape).
// sum = input + skip + bias; output = LayerNorm(sum) * gamma + beta, or RMSNorm(sum) * gamma.
Status infer_skip_norm(InferContext& ctx, bool simplified) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  if (simplified && ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0)
    return ctx.ir_error("output[1] (mean) is not produced by SkipSimplifiedLayerNormalization");
  const ValueType& x = ctx.input(0);
  int64_t hidden = -1;
  if (x.has_shape) {
    if (x.shape.size() != 2 && x.shape.size() != 3)
      return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected 2 or 3 ([tokens, hidden] or [batch, seq, hidden])");
    hidden = x.shape.back();
    const ValueType& skip = ctx.input(1);
    if (skip.has_shape) {
      const Shape& s = skip.shape;
      const auto same = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
      // onnxruntime: skip is input's shape, or (3-D input) [seq, hidden] or [1, seq, hidden].
      bool ok = s.size() >= 2 && s.size() <= x.shape.size() && same(s.back(), hidden) &&
                same(s[s.size() - 2], x.shape[x.shape.size() - 2]);
      if (ok && s.size() == 3) ok = s[0] == 1 || same(s[0], x.shape[0]);
      if (!ok)
        return ctx.ir_error("input[1] (skip): shape ", shape_str(s), " is neither input's ", shape_str(x.shape),
                            " nor [seq, hidden] / [1, seq, hidden]");
    }
  }
  TSR_RETURN_IF_ERROR(require_hidden_vector(ctx, 2, "gamma", hidden));
  if (simplified) {
    TSR_RETURN_IF_ERROR(require_hidden_vector(ctx, 3, "bias", hidden));
  } else {
    TSR_RETURN_IF_ERROR(require_hidden_vector(ctx, 3, "beta", hidden));
    TSR_RETURN_IF_ERROR(require_hidden_vector(ctx, 4, "bias", hidden));
  }
  for (size_t k = 0; k < ctx.num_outputs(); ++k) {
    const DType dt = k == 1 || k == 2 ? DType::kF32 : x.dtype;
    if (!x.has_shape) {
      ctx.set_output_unknown_shape(k, dt);
      continue;
    }
    Shape s = x.shape;
    if (k == 1 || k == 2) s.back() = 1;
    ctx.set_output(k, dt, s);
  }
  return ok_status();
}

// EmbedLayerNormalization (com.microsoft):
//   inputs:  input_ids [batch, seq] i32; segment_ids? [batch, seq] i32; word_embedding [V, H],
//            position_embedding [P, H], segment_embedding? [G, H] (float T); gamma, beta [H] T;
//            mask? [batch, seq] i32; position_ids? i32, [batch, seq] or [1, seq].
//   attrs:   epsilon (1e-12), mask_index_type (1; 0 or 1).
//   outputs: output [batch, seq, H] T; mask_index [batch] i32 (per batch row, the number of mask
//            elements equal to 1; 0 without a mask); embedding_sum? [batch, seq, H] T.
// sum = word[ids] + position[position_ids or s] + segment[segment_ids]; output = LayerNorm(sum)
// * gamma + beta over H. Ids out of their table's range are a run-time error.
Status infer_embed_layer_norm(InferContext& ctx) {
  // The arity check requires input 0 only: optional inputs sit between the required ones.
  const char* required[] = {"input_ids", "", "word_embedding", "position_embedding", "", "gamma", "beta"};
  for (size_t i = 0; i < 7; ++i)
    if (*required[i] != 0 && !ctx.has_input(i)) return ctx.ir_error("input[", i, "] (", required[i], ") is required");
  if (ctx.has_input(1) != ctx.has_input(4))
    return ctx.ir_error("segment_ids (input 1) and segment_embedding (input 4) must be given together");
  const int64_t mit = ctx.node().attr_int("mask_index_type");
  if (mit != 0 && mit != 1) return ctx.ir_error("mask_index_type = ", mit, ", expected 0 or 1");
  for (size_t i : {size_t{0}, size_t{1}, size_t{7}, size_t{8}}) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, kFloatTypes));
  for (size_t i = 3; i < 7; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::kUndefined && ctx.input(2).dtype != DType::kUndefined &&
        ctx.input(i).dtype != ctx.input(2).dtype)
      return ctx.ir_error("input[", i, "]: dtype ", dtype_name(ctx.input(i).dtype), ", expected word_embedding's ",
                          dtype_name(ctx.input(2).dtype));
  const DType dt = ctx.input(2).dtype;
  const ValueType& ids = ctx.input(0);
  if (ids.has_shape && ids.shape.size() != 2)
    return ctx.ir_error("input[0] (input_ids): rank ", ids.shape.size(), ", expected 2 [batch, seq]");
  int64_t hidden = -1;
  for (size_t i = 2; i < 5; ++i) {
    if (!ctx.has_input(i) || !ctx.input(i).has_shape) continue;
    const Shape& s = ctx.input(i).shape;
    if (s.size() != 2 || (hidden >= 0 && s[1] >= 0 && s[1] != hidden))
      return ctx.ir_error("input[", i, "]: shape ", shape_str(s), ", expected a [rows, hidden] table with one hidden size");
    if (s[1] >= 0) hidden = s[1];
  }
  for (size_t i = 5; i < 7; ++i) {
    if (!ctx.input(i).has_shape) continue;
    const Shape& s = ctx.input(i).shape;
    if (s.size() != 1 || (hidden >= 0 && s[0] >= 0 && s[0] != hidden))
      return ctx.ir_error("input[", i, "] (", i == 5 ? "gamma" : "beta", "): shape ", shape_str(s), ", expected [", hidden, "]");
  }
  for (size_t i : {size_t{1}, size_t{7}, size_t{8}}) {
    if (!ctx.has_input(i) || !ctx.input(i).has_shape || !ids.has_shape) continue;
    const Shape& s = ctx.input(i).shape;
    const bool ok = s.size() == 2 && (s == ids.shape || broadcasts_to(s, ids.shape)) &&
                    (i == 8 || s[0] == ids.shape[0] || s[0] < 0 || ids.shape[0] < 0);
    if (!ok) return ctx.ir_error("input[", i, "]: shape ", shape_str(s), ", expected input_ids' ", shape_str(ids.shape));
  }
  if (ids.has_shape) {
    ctx.set_output(0, dt, {ids.shape[0], ids.shape[1], hidden});
    ctx.set_output(1, DType::kI32, {ids.shape[0]});
    if (ctx.num_outputs() > 2) ctx.set_output(2, dt, {ids.shape[0], ids.shape[1], hidden});
  } else {
    ctx.set_output_unknown_shape(0, dt);
    ctx.set_output_unknown_shape(1, DType::kI32);
    if (ctx.num_outputs() > 2) ctx.set_output_unknown_shape(2, dt);
  }
  return ok_status();
}

}  // namespace

void register_transformer_norm_ops(OpRegistry& r) {
  TSR_IF_SELECTED("RMSNormalization") r.add({"RMSNormalization", "", 23, 2, 2, 1, 1,
         {int_attr("axis", -1), float_attr("epsilon", 1e-5), int_attr("stash_type", 1)}, infer_layer_norm,
         "Y = X / sqrt(mean(X^2 over X.shape[axis:]) + epsilon) * scale"});
  TSR_IF_SELECTED("SimplifiedLayerNormalization") r.add({"SimplifiedLayerNormalization", "", 1, 2, 2, 1, 2,
         {int_attr("axis", -1), float_attr("epsilon", 1e-5), int_attr("stash_type", 1)}, infer_layer_norm,
         "onnxruntime's RMS norm (ONNX domain): RMSNormalization plus an optional inv_std_var output"});
  TSR_IF_SELECTED("com.microsoft::SkipLayerNormalization") r.add({"com.microsoft::SkipLayerNormalization",
         "com.microsoft", 1, 3, 5, 1, 4, {float_attr("epsilon", 1e-12)},
         [](InferContext& ctx) { return infer_skip_norm(ctx, false); },
         "LayerNorm(input + skip + bias) * gamma + beta over the last axis; optional mean, inv_std_var, sum"});
  TSR_IF_SELECTED("com.microsoft::SkipSimplifiedLayerNormalization") r.add({"com.microsoft::SkipSimplifiedLayerNormalization",
         "com.microsoft", 1, 3, 4, 1, 4, {float_attr("epsilon", 1e-12)},
         [](InferContext& ctx) { return infer_skip_norm(ctx, true); },
         "RMSNorm(input + skip + bias) * gamma over the last axis; optional inv_std_var, sum"});
  TSR_IF_SELECTED("com.microsoft::EmbedLayerNormalization") r.add({"com.microsoft::EmbedLayerNormalization",
         "com.microsoft", 1, 1, 9, 2, 3, {float_attr("epsilon", 1e-12), int_attr("mask_index_type", 1)},
         infer_embed_layer_norm,
         "LayerNorm(word[ids] + position[pos] + segment[seg]) * gamma + beta; mask_index = ones per row"});
}

}  // namespace tsr::ops
