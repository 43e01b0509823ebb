// Detection and sampling ops: NonMaxSuppression (opset 11), RoiAlign (opset 16), GridSample
// (opset 16).
//   NonMaxSuppression: boxes [B, S, 4], scores [B, K, S] -> selected [M, 3] i64 (batch, class, box)
//   RoiAlign: X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R] -> [R, C, oh, ow]
//   GridSample: X [N, C, H, W], grid [N, Ho, Wo, 2] (x, y in [-1, 1]) -> [N, C, Ho, Wo]
// Sources: https://onnx.ai/onnx/operators/onnx__NonMaxSuppression.html, __RoiAlign (Mask R-CNN,
// He et al. 2017), __GridSample (as torch.nn.functional.grid_sample).
#include "core/ops/op_def.h"

namespace tsr::ops {

namespace {

using ir::AttrKind;

Status infer_nms(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kF32}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 3, 3));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 3, 3));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI64}));
  const ValueType& b = ctx.input(0);
  if (b.has_shape && b.shape[2] >= 0 && b.shape[2] != 4) return ctx.arg_error("input[0] (boxes): last dim ", b.shape[2], ", expected 4");
  const int64_t cpb = ctx.node().attr_int("center_point_box");
  if (cpb != 0 && cpb != 1) return ctx.ir_error("attribute 'center_point_box' must be 0 or 1");
  ctx.set_output(0, DType::kI64, {-1, 3});
  return ok_status();
}

Status infer_roi_align(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI64}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 4, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 2, 2));
  const std::string mode = ctx.node().attr_string("mode");
  if (mode != "avg" && mode != "max") return ctx.ir_error("attribute 'mode' must be avg or max");
  const std::string ct = ctx.node().attr_string("coordinate_transformation_mode");
  if (ct != "half_pixel" && ct != "output_half_pixel") return ctx.ir_error("attribute 'coordinate_transformation_mode' must be half_pixel or output_half_pixel");
  const int64_t oh = ctx.node().attr_int("output_height"), ow = ctx.node().attr_int("output_width");
  if (oh < 1 || ow < 1) return ctx.ir_error("output_height and output_width must be >= 1");
  const ValueType& x = ctx.input(0);
  const ValueType& r = ctx.input(1);
  ctx.set_output(0, x.dtype, {r.has_shape ? r.shape[0] : -1, x.has_shape ? x.shape[1] : -1, oh, ow});
  return ok_status();
}

Status infer_grid_sample(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kF32, DType::kF64, DType::kF16}));
  TSR_RETURN_IF_ERROR(ctx.require_rank(0, 4, 4));
  TSR_RETURN_IF_ERROR(ctx.require_rank(1, 4, 4));
  const std::string mode = ctx.node().attr_string("mode");
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic") return ctx.ir_error("attribute 'mode' must be bilinear, nearest or bicubic");
  const std::string pad = ctx.node().attr_string("padding_mode");
  if (pad != "zeros" && pad != "border" && pad != "reflection") return ctx.ir_error("attribute 'padding_mode' must be zeros, border or reflection");
  const ValueType& x = ctx.input(0);
  const ValueType& g = ctx.input(1);
  if (g.has_shape && g.shape[3] >= 0 && g.shape[3] != 2) return ctx.arg_error("input[1] (grid): last dim ", g.shape[3], ", expected 2");
  ctx.set_output(0, x.dtype, {x.has_shape ? x.shape[0] : -1, x.has_shape ? x.shape[1] : -1, g.has_shape ? g.shape[1] : -1,
                              g.has_shape ? g.shape[2] : -1});
  return ok_status();
}

}  // namespace

void register_detection_ops(OpRegistry& r) {
  TSR_IF_SELECTED("NonMaxSuppression") r.add(OpDef{"NonMaxSuppression", "", 11, 2, 5, 1, 1, {int_attr("center_point_box", 0)}, infer_nms,
              "Greedy per-class box selection by score with IoU suppression"});
  TSR_IF_SELECTED("RoiAlign") r.add(OpDef{"RoiAlign", "", 16, 3, 3, 1, 1,
              {string_attr("coordinate_transformation_mode", "half_pixel"), string_attr("mode", "avg"),
               int_attr("output_height", 1), int_attr("output_width", 1), int_attr("sampling_ratio", 0),
               float_attr("spatial_scale", 1.0)},
              infer_roi_align, "Region-of-interest pooling with bilinear sampling (Mask R-CNN)"});
  TSR_IF_SELECTED("GridSample") r.add(OpDef{"GridSample", "", 16, 2, 2, 1, 1,
              {int_attr("align_corners", 0), string_attr("mode", "bilinear"), string_attr("padding_mode", "zeros")},
              infer_grid_sample, "Samples X at normalized grid locations (bilinear, nearest, bicubic)"});
}

}  // namespace tsr::ops
