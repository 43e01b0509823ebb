// Signal-processing ops (ONNX opset 17): DFT, STFT, HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix. Complex values are a trailing dim of 2 (real, imaginary); a trailing dim of 1
// is a real signal. Sources: https://onnx.ai/onnx/operators/onnx__DFT.html, __STFT, __HannWindow,
// __MelWeightMatrix (the triangular mel filters of the ONNX reference implementation).
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

DType output_dtype(const InferContext& ctx) {
  const int64_t d = ctx.node().attr_int("output_datatype");
  return dtype_valid(static_cast<int>(d)) ? static_cast<DType>(d) : DType::kUndefined;
}

Status infer_dft(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI32, DType::kI64}));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  const auto rank = static_cast<int64_t>(x.shape.size());
  if (rank < 2) return ctx.arg_error("input[0]: rank ", rank, ", expected >= 2 ([..., 1 or 2])");
  if (x.shape.back() >= 0 && x.shape.back() != 1 && x.shape.back() != 2)
    return ctx.arg_error("input[0]: last dim is ", x.shape.back(), ", expected 1 (real) or 2 (complex)");
  const int64_t axis_attr = ctx.node().attr_int("axis");
  if (axis_attr < -(rank - 1) || axis_attr >= rank - 1)
    return ctx.ir_error("attribute 'axis' = ", axis_attr, " is out of range for a signal of rank ", rank);
  const int64_t axis = axis_attr < 0 ? axis_attr + rank - 1 : axis_attr;
  Shape out = x.shape;
  out.back() = 2;
  int64_t n = x.shape[static_cast<size_t>(axis)];
  if (ctx.has_input(1)) n = ctx.input_value(1) ? ctx.input_value(1)->scalar_i64() : -1;
  if (ctx.has_input(1) && ctx.input_value(1) && n < 1) return ctx.arg_error("input[1] (dft_length) must be >= 1, got ", n);
  const bool onesided = ctx.node().attr_int("onesided") != 0;
  out[static_cast<size_t>(axis)] = n < 0 ? -1 : onesided ? n / 2 + 1 : n;
  ctx.set_output(0, x.dtype, out);
  return ok_status();
}

Status infer_stft(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI32, DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 3));
  const ValueType& x = ctx.input(0);
  int64_t frame_length = -1;
  if (ctx.has_input(3) && ctx.input_value(3)) frame_length = ctx.input_value(3)->scalar_i64();
  else if (ctx.has_input(2) && ctx.input(2).has_shape && !ctx.input(2).shape.empty()) frame_length = ctx.input(2).shape[0];
  const int64_t step = ctx.input_value(1) ? ctx.input_value(1)->scalar_i64() : -1;
  if (ctx.input_value(1) && step < 1) return ctx.arg_error("input[1] (frame_step) must be >= 1, got ", step);
  if (ctx.runtime() && frame_length < 1) return ctx.arg_error("frame_length (input[3] or the window's length) must be >= 1");
  const bool onesided = ctx.node().attr_int("onesided") != 0;
  int64_t frames = -1;
  if (x.has_shape && x.shape[1] >= 0 && frame_length > 0 && step > 0) {
    if (x.shape[1] < frame_length) return ctx.arg_error("the signal (", x.shape[1], " samples) is shorter than one frame (", frame_length, ")");
    frames = (x.shape[1] - frame_length) / step + 1;
  }
  const int64_t bins = frame_length < 0 ? -1 : onesided ? frame_length / 2 + 1 : frame_length;
  ctx.set_output(0, x.dtype, {x.has_shape ? x.shape[0] : -1, frames, bins, 2});
  return ok_status();
}

Status infer_window(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kI32, DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 0, 0));
  const DType d = output_dtype(ctx);
  if (d == DType::kUndefined || d == DType::kString) return ctx.ir_error("attribute 'output_datatype' is not a numeric dtype");
  int64_t n = -1;
  if (ctx.input_value(0)) {
    n = ctx.input_value(0)->scalar_i64();
    if (n < 0) return ctx.arg_error("input[0] (size) must be >= 0, got ", n);
  }
  ctx.set_output(0, d, {n});
  return ok_status();
}

Status infer_mel(InferContext& ctx) {
  for (size_t i : {0, 1, 2}) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kI32, DType::kI64}));
  for (size_t i : {3, 4}) TSR_RETURN_IF_ERROR(ctx.require_dtype(i, {DType::kF32, DType::kF64, DType::kF16}));
  const DType d = output_dtype(ctx);
  if (d == DType::kUndefined || d == DType::kString) return ctx.ir_error("attribute 'output_datatype' is not a numeric dtype");
  const int64_t mel = ctx.input_value(0) ? ctx.input_value(0)->scalar_i64() : -1;
  const int64_t dft = ctx.input_value(1) ? ctx.input_value(1)->scalar_i64() : -1;
  if (ctx.input_value(0) && mel < 1) return ctx.arg_error("input[0] (num_mel_bins) must be >= 1");
  if (ctx.input_value(1) && dft < 1) return ctx.arg_error("input[1] (dft_length) must be >= 1");
  ctx.set_output(0, d, {dft < 0 ? -1 : dft / 2 + 1, mel});
  return ok_status();
}

std::vector<AttrSpec> window_attrs() { return {int_attr("output_datatype", 1), int_attr("periodic", 1)}; }

}  // namespace

void register_signal_ops(OpRegistry& r) {
  TSR_IF_SELECTED("DFT") r.add(OpDef{"DFT", "", 17, 1, 2, 1, 1,
              {int_attr("axis", 1), int_attr("inverse", 0), int_attr("onesided", 0)}, infer_dft,
              "Discrete Fourier transform along one axis (complex as a trailing dim of 2)"});
  TSR_IF_SELECTED("STFT") r.add(OpDef{"STFT", "", 17, 2, 4, 1, 1, {int_attr("onesided", 1)}, infer_stft,
              "Short-time Fourier transform: [batch, frames, bins, 2]"});
  TSR_IF_SELECTED("HannWindow") r.add(OpDef{"HannWindow", "", 17, 1, 1, 1, 1, window_attrs(), infer_window, "0.5 - 0.5 cos(2 pi n / N)"});
  TSR_IF_SELECTED("HammingWindow") r.add(OpDef{"HammingWindow", "", 17, 1, 1, 1, 1, window_attrs(), infer_window, "25/46 - 21/46 cos(2 pi n / N)"});
  TSR_IF_SELECTED("BlackmanWindow") r.add(OpDef{"BlackmanWindow", "", 17, 1, 1, 1, 1, window_attrs(), infer_window,
              "0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)"});
  TSR_IF_SELECTED("MelWeightMatrix") r.add(OpDef{"MelWeightMatrix", "", 17, 5, 5, 1, 1, {int_attr("output_datatype", 1)}, infer_mel,
              "Triangular mel filter bank [dft_length / 2 + 1, num_mel_bins]"});
}

}  // namespace tsr::ops
