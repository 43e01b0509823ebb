// Linear quantization ops (ONNX opset 13): QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear. Scale and zero point are scalars (per-tensor) or 1-D along `axis`
// (per-axis, default axis 1). Rounding is half to even; results saturate to the integer range.
// Source: https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
// Also the quantized matmuls MatMulInteger / QLinearMatMul and convolutions ConvInteger /
// QLinearConv (opset 10), whose shapes come from MatMul's and Conv's inference.
#include <cstdint>

#include "core/ops/families/elementwise_common.h"
#include "core/ops/families/matmul_infer.h"
#include "core/ops/fused_activation.h"
#include "core/ops/spatial.h"
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

// Zero points / scales of the quantized matmuls: scalar, 1-element, or 1-D per row of A /
// per column of B (checked against the data at run time).
Status check_qparam(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  if (!ctx.has_input(i)) return ok_status();
  TSR_RETURN_IF_ERROR(ctx.require_dtype(i, allowed));
  return check_scale_shape(ctx, i);
}

// MatMulInteger(A u8/i8, B u8/i8, a_zero_point?, b_zero_point?) -> i32 numpy.matmul of
// (A - a_zp) and (B - b_zp).
Status infer_matmul_integer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 3));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 2));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 3));
  return infer_matmul_shape(ctx, 0, 1, DType::kI32);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y (y_zp's dtype).
Status infer_qlinear_matmul(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(3, 5));
  for (size_t i : {1, 4, 6}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kF32}));
  for (size_t i : {2, 5, 7}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kU8, DType::kI8}));
  return infer_matmul_shape(ctx, 0, 3, ctx.input(7).dtype);
}

// ConvInteger(x u8/i8, w u8/i8, x_zero_point?, w_zero_point?) -> i32 Conv(x - x_zp, w - w_zp).
Status infer_conv_integer(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 3));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 2));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 3));
  return infer_conv_shape(ctx, 0, 1, SIZE_MAX, DType::kI32);
}

// The inputs of the ops that quantize an f32 input themselves: (X f32, W u8/i8, w_scale f32,
// w_zero_point? (W's type), bias f32?), DynamicQuantizeMatMul's and DynamicQuantizeConv's.
Status check_dynamic_quantize_inputs(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(check_qparam(ctx, 2, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 3));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 3));
  if (ctx.has_input(4)) TSR_RETURN_IF_ERROR(ctx.require_dtype(4, {DType::kF32}));
  return ok_status();
}

// DynamicQuantizeConv(X f32, W u8/i8, w_scale f32, w_zero_point?, B f32?) -> Y f32 (tessera's,
// made by quantize_fusion from DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul [-> Add]).
Status infer_dynamic_quantize_conv(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_dynamic_quantize_inputs(ctx));
  return infer_conv_shape(ctx, 0, 1, 4, DType::kF32);
}

// ConvIntegerToFloat(x_q u8, W u8/i8, x_scale, w_scale, x_zero_point, w_zero_point?, B f32?) -> Y f32
// (tessera's: DynamicQuantizeConv on codes a shared DynamicQuantizeLinear made).
Status infer_conv_integer_to_float(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(check_qparam(ctx, 2, {DType::kF32}));
  TSR_RETURN_IF_ERROR(check_qparam(ctx, 3, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 4));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 5));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 5));
  if (ctx.has_input(6)) TSR_RETURN_IF_ERROR(ctx.require_dtype(6, {DType::kF32}));
  return infer_conv_shape(ctx, 0, 1, 6, DType::kF32);
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B (i32)?) -> y (y_zp's dtype).
Status check_qlinear_conv_types(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(3, 5));
  for (size_t i : {1, 4, 6}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kF32}));
  for (size_t i : {2, 5, 7}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kU8, DType::kI8}));
  if (ctx.has_input(8)) TSR_RETURN_IF_ERROR(ctx.require_dtype(8, {DType::kI32}));
  return ok_status();
}

Status infer_qlinear_conv(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_qlinear_conv_types(ctx));
  return infer_conv_shape(ctx, 0, 3, 8, ctx.input(7).dtype);
}

// The spatial output of a channels-last 2-D window op: X [N, H, W, C] (input 0) with window
// `kernel` -> [N, OH, OW, c_out] (c_out -1: X's C). Unknown dims give -1.
Status infer_nhwc_window(InferContext& ctx, const Ints& kernel, bool ceil_mode, int64_t c_out, DType dt) {
  const ValueType& x = ctx.input(0);
  if (x.has_shape && x.shape.size() != 4)
    return ctx.ir_error("input[0] (X): rank ", x.shape.size(), ", expected 4 [N, H, W, C] (channels last, 2-D)");
  const Ints in = x.has_shape ? Ints{x.shape[1], x.shape[2]} : Ints{-1, -1};
  auto sp = resolve_spatial(ctx.node(), in, kernel, ceil_mode);
  if (!sp.ok()) return ctx.ir_error(sp.status().message());
  ctx.set_output(0, dt, {x.has_shape ? x.shape[0] : -1, sp->out[0], sp->out[1], c_out >= 0 ? c_out : x.has_shape ? x.shape[3] : -1});
  return ok_status();
}

// com.microsoft::QLinearConv: QLinearConv with channels_last (onnxruntime's contrib op, what its
// NHWC transformer makes): with channels_last = 1, X is [N, H, W, C] and Y [N, OH, OW, M] (2-D
// only; W stays [M, C/group, kh, kw]); with 0, QLinearConv itself. Made by quantize_layout.
Status infer_qlinear_conv_ms(InferContext& ctx) {
  if (ctx.node().attr_int("channels_last") == 0) return infer_qlinear_conv(ctx);
  TSR_RETURN_IF_ERROR(check_qlinear_conv_types(ctx));
  const ValueType& x = ctx.input(0);
  const ValueType& w = ctx.input(3);
  if (w.has_shape && w.shape.size() != 4)
    return ctx.ir_error("input[3] (W): rank ", w.shape.size(), ", expected 4 [M, C/group, kh, kw]");
  const int64_t group = ctx.node().attr_int("group");
  if (group <= 0) return ctx.ir_error("group = ", group, " must be positive");
  if (x.has_shape && w.has_shape && x.shape.size() == 4 && x.shape[3] >= 0 && x.shape[3] != w.shape[1] * group)
    return ctx.ir_error("input[0] (X): ", x.shape[3], " channels (last dim), W expects ", w.shape[1], " x group ", group);
  if (w.has_shape && w.shape[0] % group != 0)
    return ctx.ir_error("output channels M = ", w.shape[0], " not divisible by group = ", group);
  const Ints kernel = w.has_shape ? Ints{w.shape[2], w.shape[3]} : ctx.node().attr_ints("kernel_shape", Ints{-1, -1});
  if (kernel.size() != 2 || kernel[0] < 0 || kernel[1] < 0)
    return ctx.ir_error("channels_last needs W's shape or kernel_shape (2 values)");
  return infer_nhwc_window(ctx, kernel, false, w.has_shape ? w.shape[0] : -1, ctx.input(7).dtype);
}

// com.microsoft::NhwcMaxPool(X u8/s8 [N, H, W, C]) -> Y [N, OH, OW, C]: MaxPool over the codes,
// channels last (onnxruntime's contrib op); 2-D, no Indices. Made by quantize_layout.
Status infer_nhwc_max_pool(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  const ir::Attribute* ks = ctx.node().attr("kernel_shape");
  if (!ks || ks->ints.size() != 2) return ctx.ir_error("kernel_shape: expected 2 values");
  const int64_t ceil_mode = ctx.node().attr_int("ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) return ctx.ir_error("ceil_mode = ", ceil_mode, ", expected 0 or 1");
  return infer_nhwc_window(ctx, Ints(ks->ints.begin(), ks->ints.end()), ceil_mode != 0, -1, ctx.input(0).dtype);
}

// The optional attributes of an activation fused into an f32-output quantized matmul
// (fuse_activation; core/ops/fused_activation.h, as FusedGemm's, none required).
std::vector<AttrSpec> fused_activation_attrs() {
  return {{"activation", AttrKind::kString},
          {"activation_params", AttrKind::kFloats},
          {"activation_affine", AttrKind::kFloats},
          {"activation_bounds", AttrKind::kFloats}};
}

// com.microsoft::DynamicQuantizeMatMul(A f32, B u8/i8, b_scale f32, b_zero_point?, bias f32?) -> Y f32
// (onnxruntime docs/ContribOperators.md): A quantized as DynamicQuantizeLinear, then
// (A_q - a_zp) @ (B - b_zp) * (a_scale * b_scale) + bias; b_scale / b_zero_point scalar or [N].
Status infer_dynamic_quantize_matmul(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(check_dynamic_quantize_inputs(ctx));
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place()).status());
  return infer_matmul_shape(ctx, 0, 1, DType::kF32);
}

// com.microsoft::MatMulIntegerToFloat(A u8/i8, B u8/i8, a_scale, b_scale, a_zero_point?,
// b_zero_point?, bias?) -> Y f32 = (A - a_zp) @ (B - b_zp) * (a_scale * b_scale) + bias.
Status infer_matmul_integer_to_float(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(check_qparam(ctx, 2, {DType::kF32}));
  TSR_RETURN_IF_ERROR(check_qparam(ctx, 3, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 4));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(1, 5));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 4));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 5));
  if (ctx.has_input(6)) TSR_RETURN_IF_ERROR(ctx.require_dtype(6, {DType::kF32}));
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place()).status());
  return infer_matmul_shape(ctx, 0, 1, DType::kF32);
}

// com.microsoft::QLinearAdd(A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale,
// C_zero_point?) -> C (onnxruntime docs/ContribOperators.md): A, B and C u8 (or all i8), scales
// and zero points scalars; C = saturate(round((A - A_zp) * A_scale / C_scale + (B - B_zp) *
// B_scale / C_scale) + C_zp), A and B broadcast (numpy rules). Made by quantize_fusion from
// QuantizeLinear(Add(DequantizeLinear(a), DequantizeLinear(b))).
Status infer_qlinear_add(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 3));
  for (size_t i : {2, 5, 7}) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, i));
  for (size_t i : {1, 4, 6}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kF32}));
  for (size_t i : {1, 2, 4, 5, 6, 7})
    if (ctx.has_input(i) && ctx.input(i).has_shape && shape_numel(ctx.input(i).shape) > 1)
      return ctx.arg_error("input[", i, "]: ", shape_str(ctx.input(i).shape), ", expected a scalar (per-tensor)");
  Shape a = ctx.input(0).shape, b = ctx.input(3).shape;
  if (!ctx.input(0).has_shape || !ctx.input(3).has_shape) {
    ctx.set_output_unknown_shape(0, ctx.input(0).dtype);
    return ok_status();
  }
  auto out = broadcast_shapes(a, b);
  if (!out.ok())
    return ctx.arg_error("input[3] ", shape_str(b), " does not broadcast with input[0] ", shape_str(a), ": ",
                         out.status().message());
  ctx.set_output(0, ctx.input(0).dtype, std::move(out).value());
  return ok_status();
}

// tessera QLinearLookup(X, table): Y[i] = table[X[i]], X u8 or s8 (an s8 code indexes by its byte,
// i.e. code + 256 for negative codes), table a [256] u8/s8 tensor whose dtype Y takes; Y has X's
// shape. Made by quantize_lookup from QuantizeLinear(f(DequantizeLinear(X))) (f elementwise).
Status infer_qlinear_lookup(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kU8, DType::kI8}));
  const ValueType& t = ctx.input(1);
  if (t.has_shape && t.shape != Shape{256})
    return ctx.arg_error("input[1] (table): ", shape_str(t.shape), ", expected [256]");
  if (!ctx.input(0).has_shape) {
    ctx.set_output_unknown_shape(0, t.dtype);
    return ok_status();
  }
  ctx.set_output(0, t.dtype, ctx.input(0).shape);
  return ok_status();
}

// com.microsoft::QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?,
// y_zero_point?) (onnxruntime docs/ContribOperators.md): acc = (A - a_zp) @ op(B - b_zp) + C (i32,
// [N] or scalar), then y = saturate(round(acc * (alpha * a_scale * b_scale[n] / y_scale)) + y_zp)
// (y_zp's dtype), or Y f32 = acc * alpha * a_scale * b_scale[n] without y_scale; A and B 2-D,
// b_scale / b_zero_point scalar or [N]. What quantize_fusion makes of a QDQ Gemm (a classifier).
Status infer_qgemm(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kU8, DType::kI8}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(3, 5));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 2, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(3, 2, 2));
  for (size_t i : {1, 4}) TSR_RETURN_IF_ERROR(check_qparam(ctx, i, {DType::kF32}));
  TSR_RETURN_IF_ERROR(check_scale_shape(ctx, 5));
  if (ctx.has_input(6)) {
    TSR_RETURN_IF_ERROR(ctx.require_dtype(6, {DType::kI32}));
    TSR_RETURN_IF_ERROR(ctx.require_rank(6, 0, 1));
  }
  if (ctx.has_input(7) != ctx.has_input(8)) return ctx.arg_error("y_scale and y_zero_point come together");
  if (ctx.has_input(7)) {
    TSR_RETURN_IF_ERROR(check_qparam(ctx, 7, {DType::kF32}));
    TSR_RETURN_IF_ERROR(check_qparam(ctx, 8, {DType::kU8, DType::kI8}));
  }
  if (ctx.node().attr_int("transA") != 0) return ctx.arg_error("transA = 1 is not supported");
  const ValueType& a = ctx.input(0);
  const ValueType& b = ctx.input(3);
  const bool tb = ctx.node().attr_int("transB") != 0;
  const int64_t m = a.has_shape ? a.shape[0] : -1, ka = a.has_shape ? a.shape[1] : -1;
  const int64_t kb = b.has_shape ? b.shape[tb ? 1 : 0] : -1, n = b.has_shape ? b.shape[tb ? 0 : 1] : -1;
  if (ka >= 0 && kb >= 0 && ka != kb)
    return ctx.ir_error("inner dims differ: A is [", m, ", ", ka, "], op(B) is [", kb, ", ", n, "]");
  ctx.set_output(0, ctx.has_input(8) ? ctx.input(8).dtype : DType::kF32, {m, n});
  return ok_status();
}

}  // namespace

void register_quantize_ops(OpRegistry& r) {
  TSR_IF_SELECTED("QuantizeLinear") r.add(OpDef{"QuantizeLinear", "", 13, 2, 3, 1, 1, {int_attr("axis", 1)}, infer_quantize,
              "y = saturate(round_half_even(x / scale) + zero_point), u8 (default) or i8"});
  TSR_IF_SELECTED("DequantizeLinear") r.add(OpDef{"DequantizeLinear", "", 13, 2, 3, 1, 1, {int_attr("axis", 1)}, infer_dequantize,
              "y = (x - zero_point) * scale"});
  TSR_IF_SELECTED("DynamicQuantizeLinear") r.add(OpDef{"DynamicQuantizeLinear", "", 11, 1, 1, 1, 3, {}, infer_dynamic_quantize,
              "Quantizes f32 to u8 with scale and zero point from the data's range (including 0; an all-zero or empty input: scale 1, zero point 0, as onnxruntime)"});
  TSR_IF_SELECTED("MatMulInteger") r.add(OpDef{"MatMulInteger", "", 10, 2, 4, 1, 1, {}, infer_matmul_integer,
              "Y (i32) = numpy.matmul(A - a_zero_point, B - b_zero_point); zero points per tensor, per row of A, per column of B"});
  TSR_IF_SELECTED("QLinearMatMul") r.add(OpDef{"QLinearMatMul", "", 10, 8, 8, 1, 1, {}, infer_qlinear_matmul,
              "y = saturate(round((a - a_zp) @ (b - b_zp) * a_scale * b_scale / y_scale) + y_zp)"});
  TSR_IF_SELECTED("com.microsoft::DynamicQuantizeMatMul") r.add(OpDef{"com.microsoft::DynamicQuantizeMatMul", "com.microsoft", 1, 3, 5, 1, 1, fused_activation_attrs(), infer_dynamic_quantize_matmul,
              "Y (f32) = (DynamicQuantizeLinear(A) - a_zp) @ (B - b_zero_point) * (a_scale * b_scale) + bias; b_scale, b_zero_point scalar or [N]; made by quantize_fusion; "
              "Tessera's optional activation attributes (FusedGemm's) apply an activation to Y (made by fuse_activation)"});
  TSR_IF_SELECTED("com.microsoft::MatMulIntegerToFloat") r.add(OpDef{"com.microsoft::MatMulIntegerToFloat", "com.microsoft", 1, 4, 7, 1, 1, fused_activation_attrs(), infer_matmul_integer_to_float,
              "Y (f32) = (A - a_zero_point) @ (B - b_zero_point) * (a_scale * b_scale) + bias; B's parameters scalar or [N]; "
              "Tessera's optional activation attributes (FusedGemm's) apply an activation to Y (made by fuse_activation)"});
  TSR_IF_SELECTED("com.microsoft::QLinearAdd") r.add(OpDef{"com.microsoft::QLinearAdd", "com.microsoft", 1, 7, 8, 1, 1, {}, infer_qlinear_add,
              "C = saturate(round((A - A_zp) * A_scale / C_scale + (B - B_zp) * B_scale / C_scale) + C_zp), per-tensor scales, A and B of one shape or either a single element; made by quantize_fusion"});
  TSR_IF_SELECTED("com.microsoft::QGemm") r.add(OpDef{"com.microsoft::QGemm", "com.microsoft", 1, 6, 9, 1, 1,
              {float_attr("alpha", 1.0), int_attr("transA", 0), int_attr("transB", 0)}, infer_qgemm,
              "y = saturate(round(((A - a_zp) @ op(B - b_zp) + C) * alpha * a_scale * b_scale / y_scale) + y_zp), or f32 without y_scale; C i32 [N] or scalar; b_scale per tensor or [N]; transA = 0; made by quantize_fusion"});
  TSR_IF_SELECTED("QLinearLookup") r.add(OpDef{"QLinearLookup", "tessera", 1, 2, 2, 1, 1, {}, infer_qlinear_lookup,
              "Y = table[X] elementwise: X u8/s8 (s8 indexes by its byte), table [256] u8/s8 (Y's dtype); made by quantize_lookup from an elementwise function between DequantizeLinear and QuantizeLinear"});
  const std::vector<AttrSpec> conv_attrs = {string_attr("auto_pad", "NOTSET"), {"dilations", AttrKind::kInts},
                                            int_attr("group", 1),           {"kernel_shape", AttrKind::kInts},
                                            {"pads", AttrKind::kInts},       {"strides", AttrKind::kInts}};
  TSR_IF_SELECTED("ConvInteger") r.add(OpDef{"ConvInteger", "", 10, 2, 4, 1, 1, conv_attrs, infer_conv_integer,
              "y (i32) = Conv(x - x_zero_point, w - w_zero_point); w's zero point per tensor or per output channel"});
  TSR_IF_SELECTED("DynamicQuantizeConv") r.add(OpDef{"DynamicQuantizeConv", "tessera", 1, 3, 5, 1, 1, conv_attrs, infer_dynamic_quantize_conv,
              "Y (f32) = Conv(DynamicQuantizeLinear(X) - x_zp, W - w_zero_point) * (x_scale * w_scale) + B; 1-D or 2-D, one group, unit dilations; "
              "w_scale scalar or [M], w_zero_point scalar; made by quantize_fusion from onnxruntime quantize_dynamic's ConvInteger pattern"});
  TSR_IF_SELECTED("ConvIntegerToFloat") r.add(OpDef{"ConvIntegerToFloat", "tessera", 1, 5, 7, 1, 1, conv_attrs, infer_conv_integer_to_float,
              "Y (f32) = Conv(x_q - x_zero_point, W - w_zero_point) * (x_scale * w_scale) + B; x_q u8 from a DynamicQuantizeLinear that other convs share; "
              "1-D or 2-D, one group, unit dilations, w_scale scalar or [M], other parameters scalars; made by quantize_fusion"});
  TSR_IF_SELECTED("QLinearConv") r.add(OpDef{"QLinearConv", "", 10, 8, 9, 1, 1, conv_attrs, infer_qlinear_conv,
              "y = saturate(round((Conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale / y_scale) + y_zp)"});
  std::vector<AttrSpec> conv_ms_attrs = conv_attrs;
  conv_ms_attrs.push_back(int_attr("channels_last", 0));
  TSR_IF_SELECTED("com.microsoft::QLinearConv") r.add(OpDef{"com.microsoft::QLinearConv", "com.microsoft", 1, 8, 9, 1, 1, conv_ms_attrs, infer_qlinear_conv_ms,
              "QLinearConv with channels_last: X [N, H, W, C] -> Y [N, OH, OW, M] (2-D; W as QLinearConv's); made by quantize_layout"});
  TSR_IF_SELECTED("com.microsoft::NhwcMaxPool") r.add(OpDef{"com.microsoft::NhwcMaxPool", "com.microsoft", 1, 1, 1, 1, 1,
              {string_attr("auto_pad", "NOTSET"), int_attr("ceil_mode", 0), {"dilations", AttrKind::kInts},
               {"kernel_shape", AttrKind::kInts, true}, {"pads", AttrKind::kInts}, {"strides", AttrKind::kInts}},
              infer_nhwc_max_pool, "MaxPool over u8/s8 codes, channels last: X [N, H, W, C] -> Y [N, OH, OW, C] (2-D); made by quantize_layout"});
}

}  // namespace tsr::ops
