// ConvTranspose (ONNX opset 11): the gradient of Conv with respect to its input, used as a
// learned upsampling.
//   X [N, C, d1..dk], W [C, M/group, k1..kk], B [M] (optional) -> Y [N, M, o1..ok] with
//   o_i = stride_i * (d_i - 1) + output_padding_i + (k_i - 1) * dilation_i + 1 - pad_begin_i - pad_end_i,
// or o_i = output_shape_i when that attribute is given (the pads are then derived, SAME_UPPER
// putting the odd unit at the end). Source: https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
#include "core/ops/conv_transpose.h"
#include "core/ops/op_def.h"

namespace tsr::ops {

Expected<ConvTransposeGeometry> resolve_conv_transpose(const ir::Node& node, const Ints& in, const Ints& kernel) {
  const size_t r = in.size();
  ConvTransposeGeometry g;
  g.kernel = node.attr_ints("kernel_shape", kernel);
  if (g.kernel.size() != r) return invalid_model("kernel_shape has ", g.kernel.size(), " values, expected ", r);
  g.strides = node.attr_ints("strides", Ints(r, 1));
  g.dilations = node.attr_ints("dilations", Ints(r, 1));
  const auto out_pad = node.attr_ints("output_padding", Ints(r, 0));
  auto pads = node.attr_ints("pads", Ints(2 * r, 0));
  const auto output_shape = node.attr_ints("output_shape");
  const std::string auto_pad = node.attr_string("auto_pad");
  if (g.strides.size() != r || g.dilations.size() != r || out_pad.size() != r || pads.size() != 2 * r)
    return invalid_model("strides, dilations and output_padding need ", r, " values and pads ", 2 * r);
  if (!output_shape.empty() && output_shape.size() != r && output_shape.size() != r + 2)
    return invalid_model("output_shape has ", output_shape.size(), " values, expected ", r);
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return invalid_model("auto_pad \"", auto_pad, "\" is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, -1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t k = g.kernel[i], s = g.strides[i], d = g.dilations[i];
    if (k <= 0 || s <= 0 || d <= 0) return invalid_model("kernel_shape, strides and dilations must be positive");
    if (out_pad[i] < 0 || out_pad[i] >= std::max(s, d))
      return invalid_model("output_padding[", i, "] = ", out_pad[i], " must be in [0, max(stride, dilation))");
    if (in[i] < 0) continue;
    const int64_t full = s * (in[i] - 1) + out_pad[i] + (k - 1) * d + 1;
    int64_t target = -1;
    if (!output_shape.empty()) target = output_shape[output_shape.size() - r + i];
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") target = in[i] * s;
    if (target >= 0) {
      const int64_t total = full - target;
      const bool upper = auto_pad != "SAME_LOWER";  // output_shape without auto_pad: as SAME_UPPER
      g.pad_begin[i] = upper ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out[i] = target;
    } else {
      if (auto_pad == "NOTSET") {
        g.pad_begin[i] = pads[i];
        g.pad_end[i] = pads[i + r];
      }
      g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.out[i] < 0) return invalid_model("spatial dim ", i, " of the output would be negative (", g.out[i], ")");
  }
  return g;
}

namespace {

Status infer_conv_transpose(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  const ValueType& x = ctx.input(0);
  const ValueType& w = ctx.input(1);
  if (!x.has_shape || !w.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size())
    return ctx.arg_error("X ", shape_str(x.shape), " and W ", shape_str(w.shape), " must have the same rank >= 3");
  const int64_t group = ctx.node().attr_int("group");
  if (group < 1) return ctx.ir_error("attribute 'group' must be >= 1");
  if (x.shape[1] >= 0 && w.shape[0] >= 0 && x.shape[1] != w.shape[0])
    return ctx.arg_error("input[1] (W): dim 0 is ", w.shape[0], ", expected the input channels ", x.shape[1]);
  if (x.shape[1] >= 0 && x.shape[1] % group != 0) return ctx.arg_error("input channels ", x.shape[1], " are not divisible by group ", group);
  const Ints in(x.shape.begin() + 2, x.shape.end()), kernel(w.shape.begin() + 2, w.shape.end());
  auto geo = resolve_conv_transpose(ctx.node(), in, kernel);
  if (!geo.ok()) return ctx.ir_error(geo.status().message());
  Shape out = {x.shape[0], w.shape[1] < 0 ? -1 : w.shape[1] * group};
  out.insert(out.end(), geo->out.begin(), geo->out.end());
  ctx.set_output(0, x.dtype, out);
  return ok_status();
}

}  // namespace

void register_conv_transpose_ops(OpRegistry& r) {
  using ir::AttrKind;
  TSR_IF_SELECTED("ConvTranspose") r.add(OpDef{"ConvTranspose", "", 11, 2, 3, 1, 1,
              {string_attr("auto_pad", "NOTSET"), {"dilations", AttrKind::kInts}, int_attr("group", 1),
               {"kernel_shape", AttrKind::kInts}, {"output_padding", AttrKind::kInts}, {"output_shape", AttrKind::kInts},
               {"pads", AttrKind::kInts}, {"strides", AttrKind::kInts}},
              infer_conv_transpose, "Transposed convolution (Conv's input gradient)"});
}

}  // namespace tsr::ops
