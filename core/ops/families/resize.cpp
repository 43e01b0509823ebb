// Resize (ONNX opset 13 semantics; opset 10/11 forms and Upsample are normalized by the importer).
//
// Inputs: X (any rank), roi (optional, [2*rank] floats, tf_crop_and_resize only), scales
// (optional, [rank] f32), sizes (optional, [rank] i64) — exactly one of scales/sizes. Output dim
// i is sizes[i], or floor(X.dim(i) * scales[i]).
// Source: https://onnx.ai/onnx/operators/onnx__Resize.html
#include <cmath>

#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_resize(InferContext& ctx) {
  const auto& node = ctx.node();
  const std::string_view mode = node.attr_string_view("mode");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return ctx.ir_error("attribute 'mode' is \"", mode, "\", expected nearest, linear or cubic");
  const std::string_view ct = node.attr_string_view("coordinate_transformation_mode");
  static const char* kModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                 "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  bool known = false;
  for (const char* m : kModes) known = known || ct == m;
  if (!known) return ctx.ir_error("attribute 'coordinate_transformation_mode' is \"", ct, "\", which is not an ONNX mode");
  const std::string_view nm = node.attr_string_view("nearest_mode");
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
    return ctx.ir_error("attribute 'nearest_mode' is \"", nm, "\", which is not an ONNX mode");
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(3, {DType::kI64}));
  const ValueType& x = ctx.input(0);
  // An empty tensor stands for an omitted input in opset-11+ exports.
  auto present = [&](size_t i) {
    if (!ctx.has_input(i)) return false;
    const ValueType& t = ctx.input(i);
    return !(t.has_shape && t.shape.size() == 1 && t.shape[0] == 0);
  };
  const bool has_scales = present(2), has_sizes = present(3);
  if (has_scales == has_sizes && (ctx.runtime() || (has_scales && has_sizes)))
    return ctx.arg_error("exactly one of scales (input[2]) and sizes (input[3]) must be given");
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  const size_t rank = x.shape.size();
  Shape out(rank, -1);
  if (has_sizes && ctx.input_value(3)) {
    const Shape sizes = ctx.input_value(3)->to_shape();
    if (sizes.size() != rank) return ctx.arg_error("input[3] (sizes) has ", sizes.size(), " entries, expected rank ", rank);
    for (size_t d = 0; d < rank; ++d) {
      if (sizes[d] < 0) return ctx.arg_error("input[3] (sizes) has a negative size ", sizes[d]);
      out[d] = sizes[d];
    }
  } else if (has_scales && ctx.input_value(2)) {
    const Tensor& s = *ctx.input_value(2);
    if (static_cast<size_t>(s.numel()) != rank) return ctx.arg_error("input[2] (scales) has ", s.numel(), " entries, expected rank ", rank);
    for (size_t d = 0; d < rank; ++d) {
      const double sc = s.scalar_f64(static_cast<int64_t>(d));
      if (!(sc > 0)) return ctx.arg_error("input[2] (scales) entry ", d, " is ", sc, ", expected > 0");
      if (x.shape[d] < 0) continue;
      // A scale from an untrusted file may make the size overflow int64 (found by tests/fuzz).
      const double size = std::floor(static_cast<double>(x.shape[d]) * sc);
      if (!(size < 9.2e18)) return ctx.arg_error("input[2] (scales) entry ", d, " = ", sc, " makes dim ", d, " overflow");
      out[d] = static_cast<int64_t>(size);
    }
  }
  ctx.set_output(0, x.dtype, out);
  return ok_status();
}

}  // namespace

void register_resize_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Resize") r.add(OpDef{"Resize", "", 13, 1, 4, 1, 1,
              {string_attr("coordinate_transformation_mode", "half_pixel"), float_attr("cubic_coeff_a", -0.75),
               int_attr("exclude_outside", 0), float_attr("extrapolation_value", 0.0),
               string_attr("mode", "nearest"), string_attr("nearest_mode", "round_prefer_floor")},
              infer_resize, "Resizes by nearest, (bi/tri)linear or cubic interpolation"});
}

}  // namespace tsr::ops
