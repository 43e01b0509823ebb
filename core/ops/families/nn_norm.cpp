// Normalization and softmax-family OpDefs (ONNX opset 17): BatchNormalization (opset 15),
// LayerNormalization (17), InstanceNormalization, LRN, MeanVarianceNormalization (13), Softmax / LogSoftmax / Hardmax (13).
#include "core/ops/families/norm_infer.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16};

// Checks that input i is a vector of length c (when both are known).
Status require_channel_vector(const InferContext& ctx, size_t i, const char* what, int64_t c) {
  if (!ctx.has_input(i) || !ctx.input(i).has_shape) return ok_status();
  const Shape& s = ctx.input(i).shape;
  if (s.size() != 1 || (c >= 0 && s[0] >= 0 && s[0] != c))
    return ctx.ir_error("input[", i, "] (", what, "): shape ", shape_str(s), ", expected [", c, "]");
  return ok_status();
}

Status infer_batch_norm(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  for (size_t i = 1; i < 5; ++i) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, kFloatTypes));
  const ValueType& x = ctx.input(0);
  const int64_t training = ctx.node().attr_int("training_mode");
  if (training != 0 && training != 1) return ctx.ir_error("training_mode = ", training, ", expected 0 or 1");
  if (training == 0 && ctx.num_outputs() > 1)
    for (size_t k = 1; k < ctx.num_outputs(); ++k)
      if (ctx.node().outputs[k] >= 0)
        return ctx.ir_error("output[", k, "] (running mean/var) requires training_mode = 1");
  int64_t c = -1;
  if (x.has_shape) {
    if (x.shape.empty()) return ctx.ir_error("input[0]: rank 0, expected >= 1 [N, C, ...]");
    c = x.shape.size() >= 2 ? x.shape[1] : 1;
  }
  const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) TSR_RETURN_IF_ERROR(require_channel_vector(ctx, i, names[i], c));
  if (x.has_shape) ctx.set_output(0, x.dtype, x.shape);
  else ctx.set_output_unknown_shape(0, x.dtype);
  for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, ctx.input(3).dtype, {c});
  return ok_status();
}

// FusedConcatAffine (tessera): inputs scale [C], shift [C] (f32), then X_0..X_{n-1} f32 [N, C_i,
// ...] with equal N and trailing dims, C = sum C_i. Y has X's shape with C channels.
Status infer_fused_concat_affine(InferContext& ctx) {
  const size_t n = ctx.num_inputs();
  for (size_t i = 0; i < n; ++i) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kF32}));
  Shape out;
  int64_t c = 0;
  for (size_t i = 2; i < n; ++i) {
    const ValueType& t = ctx.input(i);
    if (!t.has_shape) {
      c = -1;
      continue;
    }
    if (t.shape.size() < 2) return ctx.ir_error("input[", i, "]: rank ", t.shape.size(), ", expected >= 2 [N, C, ...]");
    if (out.empty()) out = t.shape;
    if (t.shape.size() != out.size())
      return ctx.ir_error("input[", i, "]: rank ", t.shape.size(), ", expected ", out.size());
    for (size_t d = 0; d < out.size(); ++d)
      if (d != 1 && t.shape[d] >= 0 && out[d] >= 0 && t.shape[d] != out[d])
        return ctx.ir_error("input[", i, "]: shape ", shape_str(t.shape), " differs from ", shape_str(out),
                            " outside dim 1");
    if (c >= 0) c = t.shape[1] < 0 ? -1 : c + t.shape[1];
  }
  TSR_RETURN_IF_ERROR(require_channel_vector(ctx, 0, "scale", c));
  TSR_RETURN_IF_ERROR(require_channel_vector(ctx, 1, "shift", c));
  if (out.empty() || n < 3) {
    ctx.set_output_unknown_shape(0, DType::kF32);
    return ok_status();
  }
  out[1] = c;
  ctx.set_output(0, DType::kF32, out);
  return ok_status();
}

}  // namespace

// Declared in norm_infer.h (the RMS norms of transformer_norm.cpp share it).
Status infer_layer_norm(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const ValueType& x = ctx.input(0);
  const int64_t stash = ctx.node().attr_int("stash_type");
  const DType stash_dt = static_cast<DType>(stash);
  if (stash_dt != DType::kF32 && stash_dt != DType::kF64 && stash_dt != DType::kF16 && stash_dt != DType::kBF16)
    return ctx.ir_error("stash_type = ", stash, " is not a floating-point dtype");
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output_unknown_shape(k, stash_dt);
    return ok_status();
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  auto axis = normalize_axis(ctx.node().attr_int("axis"), rank);
  if (!axis.ok()) return ctx.ir_error("axis: ", axis.status().message());
  const Shape norm(x.shape.begin() + *axis, x.shape.end());
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i) || !ctx.input(i).has_shape) continue;
    const Shape& s = ctx.input(i).shape;
    // Scale and B broadcast unidirectionally to the normalized dims X.shape[axis:].
    bool ok = s.size() <= norm.size();
    for (size_t d = 0; ok && d < s.size(); ++d) {
      const int64_t a = s[s.size() - 1 - d], b = norm[norm.size() - 1 - d];
      ok = a == 1 || a < 0 || b < 0 || a == b;
    }
    if (!ok)
      return ctx.ir_error("input[", i, "] (", i == 1 ? "Scale" : "B", "): shape ", shape_str(s),
                          " does not broadcast to the normalized shape ", shape_str(norm));
  }
  ctx.set_output(0, x.dtype, x.shape);
  Shape stat = x.shape;
  for (int64_t d = *axis; d < rank; ++d) stat[static_cast<size_t>(d)] = 1;
  for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, stash_dt, stat);
  return ok_status();
}

namespace {

Status infer_instance_norm(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  if (x.shape.size() < 3) return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected >= 3 [N, C, D...]");
  TSR_RETURN_IF_ERROR(require_channel_vector(ctx, 1, "scale", x.shape[1]));
  TSR_RETURN_IF_ERROR(require_channel_vector(ctx, 2, "B", x.shape[1]));
  ctx.set_output(0, x.dtype, x.shape);
  return ok_status();
}

Status infer_lrn(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const int64_t size = ctx.node().attr_int("size");
  if (size <= 0) return ctx.ir_error("size = ", size, " must be positive");
  const ValueType& x = ctx.input(0);
  if (x.has_shape && x.shape.size() < 3)
    return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected >= 3 [N, C, D...]");
  if (x.has_shape) ctx.set_output(0, x.dtype, x.shape);
  else ctx.set_output_unknown_shape(0, x.dtype);
  return ok_status();
}

Status infer_mvn(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  for (int64_t a : ctx.node().attr_ints("axes")) {
    auto ax = normalize_axis(a, rank);
    if (!ax.ok()) return ctx.ir_error("axes: ", ax.status().message());
  }
  ctx.set_output(0, x.dtype, x.shape);
  return ok_status();
}

Status infer_softmax(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  if (rank == 0) return ctx.ir_error("input[0]: rank 0, expected >= 1");
  auto axis = normalize_axis(ctx.node().attr_int("axis"), rank);
  if (!axis.ok()) return ctx.ir_error("axis: ", axis.status().message());
  ctx.set_output(0, x.dtype, x.shape);
  return ok_status();
}

// BatchNormalizationGrad (tessera): the VJP of BatchNormalization (core/ops/grads/nn_norm.cpp).
//   inputs:  dY [N, C, ...] and X (same shape and float dtype T), scale [C], and for
//            training_mode=0 the input_mean, input_var [C] the forward used (ignored, and
//            optional, with training_mode=1: the batch statistics are recomputed from X).
//   attrs:   epsilon (1e-5), training_mode (0).
//   outputs: dX (T, X's shape); dScale, dB ([C], scale's dtype); with training_mode=0 also
//            dMean, dVar ([C], the dtypes of input_mean / input_var).
// With xhat = (X - mean) / sqrt(var + eps) per channel and sums over N and the spatial dims:
//   dScale = sum(dY * xhat), dB = sum(dY);
//   training:  dX = scale / sqrt(var + eps) * (dY - dB / M - xhat * dScale / M), M = N * spatial
//   inference: dX = scale / sqrt(var + eps) * dY, dMean = -scale / sqrt(var + eps) * dB,
//              dVar = -scale / (2 (var + eps)) * dScale.
Status infer_batch_norm_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  for (size_t i = 2; i < 5; ++i) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, kFloatTypes));
  const bool training = ctx.node().attr_int("training_mode") != 0;
  if (!training && (!ctx.has_input(3) || !ctx.has_input(4)))
    return ctx.ir_error("training_mode = 0 needs input_mean and input_var (inputs 3, 4)");
  if (training && ctx.num_outputs() > 3) return ctx.ir_error("dMean/dVar outputs require training_mode = 0");
  const ValueType& x = ctx.input(1);
  int64_t c = -1;
  if (x.has_shape) {
    if (x.shape.empty()) return ctx.ir_error("input[1]: rank 0, expected >= 1 [N, C, ...]");
    c = x.shape.size() >= 2 ? x.shape[1] : 1;
  }
  const char* names[] = {"", "", "scale", "input_mean", "input_var"};
  for (size_t i = 2; i < 5; ++i) TSR_RETURN_IF_ERROR(require_channel_vector(ctx, i, names[i], c));
  if (x.has_shape) ctx.set_output(0, x.dtype, x.shape);
  else ctx.set_output_unknown_shape(0, x.dtype);
  for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, ctx.input(k < 3 ? 2 : k).dtype, {c});
  return ok_status();
}

// LayerNormalizationGrad (tessera): the VJP of LayerNormalization's Y (core/ops/grads/nn_norm.cpp);
// also the row-normalization part of InstanceNormalization's VJP.
//   inputs:  dY and X (same shape, float dtype T), Scale (optional, T, broadcasts to the
//            normalized shape X.shape[axis:]; absent = 1).
//   attrs:   axis (-1), epsilon (1e-5).
//   outputs: dX (T, X's shape); dScale, dB (T, X.shape[axis:]: summed over the leading dims,
//            before any reduction to Scale's / B's own broadcast shape).
// Per row (the L = numel(X.shape[axis:]) elements sharing a leading index), with
// xhat = (X - mean) * inv, inv = 1 / sqrt(var + eps), g = dY * Scale:
//   dX = inv * (g - mean(g) - xhat * mean(g * xhat)); dScale = sum_rows(dY * xhat); dB = sum_rows(dY).
Status infer_layer_norm_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const ValueType& x = ctx.input(1);
  if (!x.has_shape) {
    for (size_t k = 0; k < ctx.num_outputs(); ++k) ctx.set_output_unknown_shape(k, x.dtype);
    return ok_status();
  }
  auto axis = normalize_axis(ctx.node().attr_int("axis"), static_cast<int64_t>(x.shape.size()));
  if (!axis.ok()) return ctx.ir_error("axis: ", axis.status().message());
  ctx.set_output(0, x.dtype, x.shape);
  const Shape norm(x.shape.begin() + *axis, x.shape.end());
  for (size_t k = 1; k < ctx.num_outputs(); ++k) ctx.set_output(k, x.dtype, norm);
  return ok_status();
}

}  // namespace

void register_nn_norm_ops(OpRegistry& r) {
  TSR_IF_SELECTED("BatchNormalization") r.add({"BatchNormalization", "", 15, 5, 5, 1, 3,
         {float_attr("epsilon", 1e-5), float_attr("momentum", 0.9), int_attr("training_mode", 0)},
         infer_batch_norm,
         "per-channel normalization; training_mode=1 uses batch statistics and outputs running mean/var"});
  TSR_IF_SELECTED("FusedConcatAffine") r.add({"FusedConcatAffine", "tessera", 1, 3, -1, 1, 1,
         {int_attr("relu", 0)}, infer_fused_concat_affine,
         "Y = scale[c] * Concat(X_0.., axis 1)[c] + shift[c] (then max(., 0) if relu), without the concatenation "
         "(Concat -> BatchNormalization [-> Relu] of DenseNet's layers; made by the optimizer)"});
  TSR_IF_SELECTED("LayerNormalization") r.add({"LayerNormalization", "", 17, 2, 3, 1, 3,
         {int_attr("axis", -1), float_attr("epsilon", 1e-5), int_attr("stash_type", 1)},
         infer_layer_norm, "normalization over X.shape[axis:], optional Mean and InvStdDev outputs"});
  TSR_IF_SELECTED("InstanceNormalization") r.add({"InstanceNormalization", "", 6, 3, 3, 1, 1, {float_attr("epsilon", 1e-5)}, infer_instance_norm,
         "per-instance, per-channel normalization over spatial dims"});
  TSR_IF_SELECTED("LRN") r.add({"LRN", "", 13, 1, 1, 1, 1,
         {float_attr("alpha", 1e-4), float_attr("beta", 0.75), float_attr("bias", 1.0),
          {"size", AttrKind::kInt, true}},
         infer_lrn, "local response normalization across channels"});
  TSR_IF_SELECTED("MeanVarianceNormalization") r.add({"MeanVarianceNormalization", "", 13, 1, 1, 1, 1, {ints_attr("axes", {0, 2, 3})}, infer_mvn,
         "Y = (X - mean) / (std + 1e-9), biased statistics over axes (default [0, 2, 3])"});
  const std::vector<AttrSpec> axis = {int_attr("axis", -1)};
  TSR_IF_SELECTED("Softmax") r.add({"Softmax", "", 13, 1, 1, 1, 1, axis, infer_softmax, "exp(x - max) / sum along one axis"});
  TSR_IF_SELECTED("LogSoftmax") r.add({"LogSoftmax", "", 13, 1, 1, 1, 1, axis, infer_softmax, "log of Softmax along one axis"});
  TSR_IF_SELECTED("Hardmax") r.add({"Hardmax", "", 13, 1, 1, 1, 1, axis, infer_softmax, "one-hot of the first max along one axis"});
  TSR_IF_SELECTED("BatchNormalizationGrad") r.add({"BatchNormalizationGrad", "tessera", 1, 3, 5, 1, 5,
         {float_attr("epsilon", 1e-5), int_attr("training_mode", 0)}, infer_batch_norm_grad,
         "VJP of BatchNormalization: dX, dScale, dB (and dMean, dVar in inference mode)"});
  TSR_IF_SELECTED("LayerNormalizationGrad") r.add({"LayerNormalizationGrad", "tessera", 1, 2, 3, 1, 3,
         {int_attr("axis", -1), float_attr("epsilon", 1e-5)}, infer_layer_norm_grad,
         "VJP of LayerNormalization's Y: dX, and dScale, dB over the normalized shape"});
}

}  // namespace tsr::ops
