// Ops that draw random numbers: Dropout, Bernoulli, RandomUniform(Like), RandomNormal(Like),
// Multinomial (ONNX opset 13–15). With the `seed` attribute the draws are deterministic per node
// and run; values are not comparable with other runtimes (only distribution, dtype and shape).
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_dropout(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kBool}));
  if (const Tensor* r = ctx.input_value(1)) {
    const double ratio = r->scalar_f64();
    if (!(ratio >= 0 && ratio < 1)) return ctx.arg_error("input[1] (ratio) is ", ratio, ", expected [0, 1)");
  }
  ctx.output(0) = ctx.input(0);
  if (ctx.num_outputs() > 1) ctx.output(1) = ValueType{DType::kBool, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

// The `dtype` attribute (RandomUniform/Normal default it to f32, Multinomial to i32; the other
// ops read it only when present).
DType dtype_attr(const InferContext& ctx) {
  const int64_t d = ctx.node().attr_int("dtype");
  return dtype_valid(static_cast<int>(d)) ? static_cast<DType>(d) : DType::kUndefined;
}

Status infer_random(InferContext& ctx) {
  const DType d = dtype_attr(ctx);
  if (!dtype_is_float(d)) return ctx.ir_error("attribute 'dtype' must name a floating-point type");
  const auto shape = ctx.node().attr_ints("shape");
  for (int64_t s : shape)
    if (s < 0) return ctx.ir_error("attribute 'shape' has a negative dim ", s);
  ctx.set_output(0, d, shape);
  return ok_status();
}

Status infer_random_like(InferContext& ctx) {
  const DType d = ctx.node().attr("dtype") ? dtype_attr(ctx) : ctx.input(0).dtype;
  ctx.output(0) = ValueType{d, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

Status infer_bernoulli(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  const DType d = ctx.node().attr("dtype") ? dtype_attr(ctx) : ctx.input(0).dtype;
  ctx.output(0) = ValueType{d, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

Status infer_multinomial(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 2));
  const DType d = dtype_attr(ctx);
  if (d != DType::kI32 && d != DType::kI64) return ctx.ir_error("attribute 'dtype' must be int32 or int64");
  const int64_t n = ctx.node().attr_int("sample_size");
  if (n < 1) return ctx.ir_error("attribute 'sample_size' must be >= 1");
  ctx.set_output(0, d, {ctx.input(0).has_shape ? ctx.input(0).shape[0] : -1, n});
  return ok_status();
}

// Every op of this family may give different outputs for equal inputs (OpDef::random).
[[maybe_unused]] void add_random(OpRegistry& r, OpDef d) {
  d.random = true;
  r.add(std::move(d));
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Dropout") add_random(r, OpDef{"Dropout", "", 13, 1, 3, 1, 2, {{"seed", AttrKind::kInt}}, infer_dropout,
              "Identity at inference; in training mode zeroes elements with probability ratio and scales by 1/(1-ratio)"});
  TSR_IF_SELECTED("RandomUniform") add_random(r, OpDef{"RandomUniform", "", 1, 0, 0, 1, 1,
              {int_attr("dtype", 1), float_attr("high", 1.0), float_attr("low", 0.0), {"seed", AttrKind::kFloat},
               {"shape", AttrKind::kInts, true}},
              infer_random, "Uniform samples in [low, high)"});
  TSR_IF_SELECTED("RandomNormal") add_random(r, OpDef{"RandomNormal", "", 1, 0, 0, 1, 1,
              {int_attr("dtype", 1), float_attr("mean", 0.0), float_attr("scale", 1.0), {"seed", AttrKind::kFloat},
               {"shape", AttrKind::kInts, true}},
              infer_random, "Normal samples N(mean, scale^2)"});
  TSR_IF_SELECTED("RandomUniformLike") add_random(r, OpDef{"RandomUniformLike", "", 1, 1, 1, 1, 1,
              {{"dtype", AttrKind::kInt}, float_attr("high", 1.0), float_attr("low", 0.0), {"seed", AttrKind::kFloat}},
              infer_random_like, "Uniform samples shaped like the input"});
  TSR_IF_SELECTED("RandomNormalLike") add_random(r, OpDef{"RandomNormalLike", "", 1, 1, 1, 1, 1,
              {{"dtype", AttrKind::kInt}, float_attr("mean", 0.0), float_attr("scale", 1.0), {"seed", AttrKind::kFloat}},
              infer_random_like, "Normal samples shaped like the input"});
  TSR_IF_SELECTED("Bernoulli") add_random(r, OpDef{"Bernoulli", "", 15, 1, 1, 1, 1, {{"dtype", AttrKind::kInt}, {"seed", AttrKind::kFloat}}, infer_bernoulli,
              "1 with probability input[i], else 0"});
  TSR_IF_SELECTED("Multinomial") add_random(r, OpDef{"Multinomial", "", 7, 1, 1, 1, 1,
              {int_attr("dtype", 6), int_attr("sample_size", 1), {"seed", AttrKind::kFloat}}, infer_multinomial,
              "Class samples from unnormalized log-probabilities [batch, classes]"});
}

}  // namespace tsr::ops
