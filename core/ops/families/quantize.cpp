// Linear quantization ops (ONNX opset 13): QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear. Scale and zero point are scalars (per-tensor) or 1-D along `axis`
// (per-axis, default axis 1). Rounding is half to even; results saturate to the integer range.
// Source: https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status check_scale_shape(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i) || !ctx.input(i).has_shape) return ok_status();
  if (ctx.input(i).shape.size() > 1) return ctx.arg_error("input[", i, "]: rank ", ctx.input(i).shape.size(), ", expected a scalar or 1-D (per-axis)");
  return ok_status();
}

Status infer_quantize(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF16, DType::kBF16, DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kF32, DType::kF16, DType::kBF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 1));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 2));
  const DType out = ctx.has_input(2) ? ctx.input(2).dtype : DType::kU8;
  ctx.output(0) = ValueType{out, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

Status infer_dequantize(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8, DType::kI32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kF32, DType::kF16, DType::kBF16}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 1));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 2));
  ctx.output(0) = ValueType{ctx.input(1).dtype, ctx.input(0).has_shape, ctx.input(0).shape};
  return ok_status();
}

Status infer_dynamic_quantize(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32}));
  ctx.output(0) = ValueType{DType::kU8, ctx.input(0).has_shape, ctx.input(0).shape};
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kF32, {});
  if (ctx.num_outputs() > 2) ctx.set_output(2, DType::kU8, {});
  return ok_status();
}

}  // namespace

void register_quantize_ops(OpRegistry& r) {
  r.add(OpDef{"QuantizeLinear", "", 13, 2, 3, 1, 1, {{"axis", AttrKind::kInt}}, infer_quantize,
              "y = saturate(round_half_even(x / scale) + zero_point), u8 (default) or i8"});
  r.add(OpDef{"DequantizeLinear", "", 13, 2, 3, 1, 1, {{"axis", AttrKind::kInt}}, infer_dequantize,
              "y = (x - zero_point) * scale"});
  r.add(OpDef{"DynamicQuantizeLinear", "", 11, 1, 1, 1, 3, {}, infer_dynamic_quantize,
              "Quantizes f32 to u8 with scale and zero point from the data's range (including 0)"});
}

}  // namespace tsr::ops
