// Convolution and pooling OpDefs (ONNX opset 17): Conv, MaxPool, AveragePool, MaxUnpool,
// GlobalAveragePool, GlobalMaxPool; the optimizer's FusedConv and FusedSeparableConv. Window
// geometry: core/ops/spatial.h.
#include "core/ops/fused_activation.h"
#include "core/ops/op_def.h"
#include "core/ops/spatial.h"

namespace tsr::ops {

Status infer_conv_shape(InferContext& ctx, size_t ix, size_t iw, size_t ib, DType dt, int64_t channels) {
  const ir::Node& node = ctx.node();
  const int64_t group = node.attr_int("group");
  if (group <= 0) return ctx.ir_error("group = ", group, " must be positive");
  const ValueType& x = ctx.input(ix);
  const ValueType& w = ctx.input(iw);
  if (w.has_shape && w.shape.size() < 3)
    return ctx.ir_error("input[", iw, "] (W): rank ", w.shape.size(), ", expected >= 3 [M, C/group, k...]");
  if (x.has_shape && x.shape.size() < 3)
    return ctx.ir_error("input[", ix, "] (X): rank ", x.shape.size(), ", expected >= 3 [N, C, D...]");
  if (x.has_shape && w.has_shape && x.shape.size() != w.shape.size())
    return ctx.ir_error("input[", iw, "] (W): rank ", w.shape.size(), " differs from X's rank ", x.shape.size());
  const int64_t rank = x.has_shape ? static_cast<int64_t>(x.shape.size())
                       : w.has_shape ? static_cast<int64_t>(w.shape.size())
                                     : -1;
  const ir::Attribute* ks = node.attr("kernel_shape");
  if (rank < 0) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  const size_t r = static_cast<size_t>(rank - 2);
  if (ks && ks->ints.size() != r)
    return ctx.ir_error("kernel_shape has ", ks->ints.size(), " values, expected ", r, " (spatial rank)");
  Ints kernel(r, -1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t wk = w.has_shape ? w.shape[i + 2] : -1;
    if (ks) {
      if (wk >= 0 && ks->ints[i] != wk)
        return ctx.ir_error("kernel_shape[", i, "] = ", ks->ints[i], " differs from W's dim ", i + 2, " = ", wk);
      kernel[i] = ks->ints[i];
    } else {
      kernel[i] = wk;
    }
  }
  const int64_t c = channels >= -1 ? channels : x.has_shape ? x.shape[1] : -1;
  const int64_t m = w.has_shape ? w.shape[0] : -1;
  const int64_t cg = w.has_shape ? w.shape[1] : -1;
  if (c >= 0 && c % group != 0)
    return ctx.ir_error("input channels C = ", c, " not divisible by group = ", group);
  if (m >= 0 && m % group != 0)
    return ctx.ir_error("output channels M = W.shape[0] = ", m, " not divisible by group = ", group);
  if (c >= 0 && cg >= 0 && cg * group != c)
    return ctx.ir_error("input[", iw, "] (W): shape ", shape_str(w.shape), " needs dim 1 = C/group = ", c / group,
                        " (C = ", c, ", group = ", group, ")");
  if (ctx.has_input(ib) && ctx.input(ib).has_shape) {
    const Shape& b = ctx.input(ib).shape;
    if (b.size() != 1 || (m >= 0 && b[0] >= 0 && b[0] != m))
      return ctx.ir_error("input[", ib, "] (B): shape ", shape_str(b), ", expected [", m, "]");
  }
  Shape out = {x.has_shape ? x.shape[0] : -1, m};
  bool kernel_known = true;
  for (int64_t k : kernel) kernel_known = kernel_known && k >= 0;
  if (!kernel_known) {
    out.resize(static_cast<size_t>(rank), -1);
    ctx.set_output(0, dt, out);
    return ok_status();
  }
  Ints in(r, -1);
  if (x.has_shape)
    for (size_t i = 0; i < r; ++i) in[i] = x.shape[i + 2];
  auto sp = resolve_spatial(node, in, kernel, false);
  if (!sp.ok()) return ctx.ir_error(sp.status().message());
  for (int64_t o : sp->out) out.push_back(o);
  ctx.set_output(0, dt, out);
  return ok_status();
}

namespace {

using ir::AttrKind;

const std::vector<AttrSpec>& window_attrs() {
  static const std::vector<AttrSpec> k = {string_attr("auto_pad", "NOTSET"),
                                          {"dilations", AttrKind::kInts},
                                          {"kernel_shape", AttrKind::kInts},
                                          {"pads", AttrKind::kInts},
                                          {"strides", AttrKind::kInts}};
  return k;
}

std::vector<AttrSpec> with(std::vector<AttrSpec> extra) {
  std::vector<AttrSpec> all = window_attrs();
  for (auto& a : extra) {
    bool replaced = false;
    for (auto& b : all)
      if (b.name == a.name) b = a, replaced = true;
    if (!replaced) all.push_back(a);
  }
  return all;
}

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16};

// Y = Conv(X[N, C, D1..Dr], W[M, C/group, k1..kr], B[M]?) -> [N, M, O1..Or].
Status infer_conv(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 2));
  return infer_conv_shape(ctx, 0, 1, 2, ctx.input(0).dtype);
}

// A fused conv's residual input `iz` (if present) has the output's shape (dims unknown on either
// side pass).
Status check_residual(InferContext& ctx, size_t iz) {
  if (!ctx.has_input(iz)) return ok_status();
  const ValueType& z = ctx.input(iz);
  const ValueType& y = ctx.output(0);
  if (z.has_shape && y.has_shape) {
    bool same = z.shape.size() == y.shape.size();
    for (size_t i = 0; same && i < z.shape.size(); ++i)
      same = z.shape[i] < 0 || y.shape[i] < 0 || z.shape[i] == y.shape[i];
    if (!same)
      return ctx.arg_error("input[", iz, "] (Z): shape ", shape_str(z.shape), " differs from the output's ",
                           shape_str(y.shape));
  }
  return ok_status();
}

// FusedConv(X, W, B?, Z?): act(Conv(X, W, B) + Z), the activation of its optional `activation`
// attribute (fused_activation.h; none without it) applied after the optional residual Z, which
// has Y's dtype and shape (onnxruntime's com.microsoft FusedConv "Z" input). Made by core/passes
// from Conv [+ BatchNormalization] [+ Add] [+ activation] in inference graphs; f32/f64.
Status infer_fused_conv(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place()).status());
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64}));
  TSR_RETURN_IF_ERROR(infer_conv(ctx));
  if (ctx.has_input(3)) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 3));
  return check_residual(ctx, 3);
}

// FusedSeparableConv(X, W_dw, W_pw, B_dw?, B_pw?, Z?, W_ex?, B_ex?): a depthwise Conv (X [N, C, H, W], W_dw
// [C, 1, kh, kw], B_dw [C], group = C, the node's window attributes) with its dw_activation, then
// a pointwise Conv (W_pw [M, C, 1, 1], B_pw [M]) + Z with its activation: Y [N, M, OH, OW]. With
// W_ex [C, Cin, 1, 1] (and B_ex [C]), X is [N, Cin, H, W] and a pointwise Conv with its
// ex_activation expands it to the depthwise stage's C channels first. Made by core/passes
// (opt_fuse_separable.cpp) so that the CPU kernel keeps the depthwise output (and the expanded
// input) in cache; f32.
Status infer_fused_separable_conv(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place()).status());
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place(), "dw_").status());
  TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place(), "ex_").status());
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32}));
  for (size_t k = 1; k < 8; ++k)
    if (ctx.has_input(k)) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, k));
  const DType dt = ctx.input(0).dtype;
  const ValueType& x = ctx.input(0);
  const ValueType& wd = ctx.input(1);
  const ValueType& wp = ctx.input(2);
  // The expansion stage: X's channels become W_ex's rows.
  const bool expand = ctx.has_input(6);
  int64_t c = x.has_shape ? x.shape[1] : wd.has_shape ? wd.shape[0] : -1;
  if (expand) {
    const ValueType& we = ctx.input(6);
    if (we.has_shape) {
      bool ok = we.shape.size() == 4 && (!x.has_shape || we.shape[1] == x.shape[1]);
      for (size_t i = 2; ok && i < we.shape.size(); ++i) ok = we.shape[i] == 1;
      if (!ok)
        return ctx.arg_error("input[6] (W_ex): shape ", shape_str(we.shape), ", expected [C, ",
                             x.has_shape ? x.shape[1] : -1, ", 1, 1]");
    }
    c = we.has_shape ? we.shape[0] : wd.has_shape ? wd.shape[0] : -1;
    if (ctx.has_input(7) && ctx.input(7).has_shape && (ctx.input(7).shape.size() != 1 ||
                                                       (c >= 0 && ctx.input(7).shape[0] >= 0 && ctx.input(7).shape[0] != c)))
      return ctx.arg_error("input[7] (B_ex): shape ", shape_str(ctx.input(7).shape), ", expected [", c, "]");
  }
  // The depthwise stage: [N, C, OH, OW].
  TSR_RETURN_IF_ERROR(infer_conv_shape(ctx, 0, 1, 3, dt, expand ? c : -2));
  const int64_t group = ctx.node().attr_int("group");
  if ((c >= 0 && group != c) || (wd.has_shape && (wd.shape[1] != 1 || (c >= 0 && wd.shape[0] != c))))
    return ctx.ir_error("the depthwise stage needs group = C and W_dw [C, 1, k...] (group ", group, ", C ", c,
                        ", W_dw ", wd.has_shape ? shape_str(wd.shape) : std::string("unknown"), ")");
  if (wp.has_shape) {
    bool ok = wp.shape.size() == 4 && (c < 0 || wp.shape[1] == c);
    for (size_t i = 2; ok && i < wp.shape.size(); ++i) ok = wp.shape[i] == 1;
    if (!ok) return ctx.arg_error("input[2] (W_pw): shape ", shape_str(wp.shape), ", expected [M, ", c, ", 1, 1]");
  }
  const int64_t m = wp.has_shape ? wp.shape[0] : -1;
  if (ctx.has_input(4) && ctx.input(4).has_shape) {
    const Shape& b = ctx.input(4).shape;
    if (b.size() != 1 || (m >= 0 && b[0] >= 0 && b[0] != m))
      return ctx.arg_error("input[4] (B_pw): shape ", shape_str(b), ", expected [", m, "]");
  }
  Shape y = ctx.output(0).has_shape ? ctx.output(0).shape : Shape{};
  if (!ctx.output(0).has_shape || y.size() != 4) {
    ctx.set_output_unknown_shape(0, dt);
  } else {
    y[1] = m;
    ctx.set_output(0, dt, y);
  }
  return check_residual(ctx, 5);
}

// FusedDepthwiseSE(X, W_dw, W1, W2, B_dw?, B1?, B2?): a depthwise Conv (X [N, C, H, W], W_dw
// [C, 1, kh, kw], B_dw [C], group = C, the node's window attributes) with its activation, giving
// D [N, C, OH, OW], then the squeeze-excitation gate of D: G = gate_act(W2 (se_act(W1 mean(D) +
// B1)) + B2) over the channel means (W1 [R, C, 1, 1], B1 [R], W2 [C, R, 1, 1], B2 [C]); Y = D * G
// per channel, D's shape. Made by core/passes (opt_fuse_se.cpp) from depthwise Conv ->
// GlobalAveragePool -> 1x1 Conv -> act -> 1x1 Conv -> Sigmoid/HardSigmoid -> Mul (MobileNetV3,
// EfficientNet), so that the CPU kernel takes each channel's mean while its plane is in cache; f32.
Status infer_fused_depthwise_se(InferContext& ctx) {
  for (const char* prefix : {"", "se_", "gate_"})
    TSR_RETURN_IF_ERROR(activation_of(ctx.node(), ctx.place(), prefix).status());
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32}));
  for (size_t k = 1; k < 7; ++k)
    if (ctx.has_input(k)) TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, k));
  const DType dt = ctx.input(0).dtype;
  TSR_RETURN_IF_ERROR(infer_conv_shape(ctx, 0, 1, 4, dt));
  const ValueType& x = ctx.input(0);
  const ValueType& wd = ctx.input(1);
  const int64_t c = x.has_shape ? x.shape[1] : wd.has_shape ? wd.shape[0] : -1;
  const int64_t group = ctx.node().attr_int("group");
  if ((c >= 0 && group != c) || (wd.has_shape && (wd.shape[1] != 1 || (c >= 0 && wd.shape[0] != c))))
    return ctx.ir_error("the depthwise stage needs group = C and W_dw [C, 1, k...] (group ", group, ", C ", c,
                        ", W_dw ", wd.has_shape ? shape_str(wd.shape) : std::string("unknown"), ")");
  const ValueType& w1 = ctx.input(2);
  const ValueType& w2 = ctx.input(3);
  const int64_t r = w1.has_shape && w1.shape.size() == 4 ? w1.shape[0] : -1;
  auto fc_ok = [](const ValueType& w, int64_t rows, int64_t cols) {
    if (!w.has_shape) return true;
    return w.shape.size() == 4 && (rows < 0 || w.shape[0] == rows) && (cols < 0 || w.shape[1] == cols) &&
           w.shape[2] == 1 && w.shape[3] == 1;
  };
  if (!fc_ok(w1, -1, c)) return ctx.arg_error("input[2] (W1): shape ", shape_str(w1.shape), ", expected [R, ", c, ", 1, 1]");
  if (!fc_ok(w2, c, r))
    return ctx.arg_error("input[3] (W2): shape ", shape_str(w2.shape), ", expected [", c, ", ", r, ", 1, 1]");
  for (const auto& [i, n] : {std::pair<size_t, int64_t>{5, r}, {6, c}}) {
    if (!ctx.has_input(i) || !ctx.input(i).has_shape) continue;
    const Shape& b = ctx.input(i).shape;
    if (b.size() != 1 || (n >= 0 && b[0] >= 0 && b[0] != n))
      return ctx.arg_error("input[", i, "] (B", i == 5 ? 1 : 2, "): shape ", shape_str(b), ", expected [", n, "]");
  }
  return ok_status();
}

// Pools: X[N, C, D1..Dr] -> [N, C, O1..Or]; kernel_shape required. MaxPool also takes i8/u8
// (opset 12).
Status infer_pool(InferContext& ctx, bool is_max) {
  if (is_max) TSR_RETURN_IF_ERROR(ctx.require_dtype(0, {DType::kF32, DType::kF64, DType::kF16, DType::kI8, DType::kU8}));
  else TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const ir::Node& node = ctx.node();
  const DType dt = ctx.input(0).dtype;
  const ir::Attribute* ks = node.attr("kernel_shape");
  if (!ks) return ctx.ir_error("attribute kernel_shape is required");
  const int64_t ceil_mode = node.attr_int("ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) return ctx.ir_error("ceil_mode = ", ceil_mode, ", expected 0 or 1");
  if (is_max) {
    const int64_t so = node.attr_int("storage_order");
    if (so != 0 && so != 1) return ctx.ir_error("storage_order = ", so, ", expected 0 or 1");
  } else {
    const int64_t cip = node.attr_int("count_include_pad");
    if (cip != 0 && cip != 1) return ctx.ir_error("count_include_pad = ", cip, ", expected 0 or 1");
  }
  const ValueType& x = ctx.input(0);
  const size_t r = ks->ints.size();
  if (x.has_shape && x.shape.size() != r + 2)
    return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected ", r + 2, " (kernel_shape has ", r,
                        " values)");
  Ints in(r, -1);
  if (x.has_shape)
    for (size_t i = 0; i < r; ++i) in[i] = x.shape[i + 2];
  auto sp = resolve_spatial(node, in, Ints(ks->ints.begin(), ks->ints.end()), ceil_mode != 0);
  if (!sp.ok()) return ctx.ir_error(sp.status().message());
  Shape out = {x.has_shape ? x.shape[0] : -1, x.has_shape ? x.shape[1] : -1};
  for (int64_t o : sp->out) out.push_back(o);
  ctx.set_output(0, dt, out);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kI64, out);
  return ok_status();
}

Status infer_global_pool(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  const ValueType& x = ctx.input(0);
  if (!x.has_shape) {
    ctx.set_output_unknown_shape(0, x.dtype);
    return ok_status();
  }
  if (x.shape.size() < 2) return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected >= 2 [N, C, ...]");
  Shape out = x.shape;
  for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  ctx.set_output(0, x.dtype, out);
  return ok_status();
}

// MaxUnpool(X[N, C, D1..Dr], I (i64, X's shape), output_shape? (i64 [r + 2])) -> Y. Without
// output_shape, Y's spatial dims are (D - 1) * stride + kernel - pad_begin - pad_end (ONNX
// opset 11).
Status infer_max_unpool(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const ir::Node& node = ctx.node();
  const ir::Attribute* ks = node.attr("kernel_shape");
  if (!ks) return ctx.ir_error("attribute kernel_shape is required");
  const DType dt = ctx.input(0).dtype;
  const ValueType& x = ctx.input(0);
  const size_t r = ks->ints.size();
  if (x.has_shape && x.shape.size() != r + 2)
    return ctx.ir_error("input[0]: rank ", x.shape.size(), ", expected ", r + 2, " (kernel_shape has ", r, " values)");
  if (ctx.has_input(2)) {
    TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI64}));
    const Tensor* os = ctx.input_value(2);
    if (!os) {
      ctx.set_output(0, dt, Shape(r + 2, -1));
      return ok_status();
    }
    if (os->rank() != 1 || os->numel() != static_cast<int64_t>(r + 2))
      return ctx.arg_error("input[2] (output_shape): shape ", shape_str(os->shape()), ", expected [", r + 2, "]");
    Shape out = os->to_i64_vector();
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] < 0) return ctx.arg_error("output_shape[", i, "] = ", out[i], " is negative");
      if (x.has_shape && i < 2 && x.shape[i] >= 0 && out[i] != x.shape[i])
        return ctx.arg_error("output_shape[", i, "] = ", out[i], " differs from X's dim ", x.shape[i]);
    }
    ctx.set_output(0, dt, out);
    return ok_status();
  }
  const Ints strides = node.attr_ints("strides", Ints(r, 1));
  const Ints pads = node.attr_ints("pads", Ints(2 * r, 0));
  if (strides.size() != r) return ctx.ir_error("strides has ", strides.size(), " values, expected ", r);
  if (pads.size() != 2 * r) return ctx.ir_error("pads has ", pads.size(), " values, expected ", 2 * r);
  Shape out = {x.has_shape ? x.shape[0] : -1, x.has_shape ? x.shape[1] : -1};
  for (size_t i = 0; i < r; ++i) {
    const int64_t d = x.has_shape ? x.shape[i + 2] : -1;
    if (d < 0) {
      out.push_back(-1);
      continue;
    }
    const int64_t o = (d - 1) * strides[i] + ks->ints[i] - pads[i] - pads[i + r];
    if (o < 0) return ctx.ir_error("output dim ", i + 2, " would be negative (", o, ")");
    out.push_back(o);
  }
  ctx.set_output(0, dt, out);
  return ok_status();
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  TSR_IF_SELECTED("Conv") r.add({"Conv", "", 11, 2, 3, 1, 1, with({int_attr("group", 1)}), infer_conv,
         "N-d convolution with groups, strides, dilations, pads/auto_pad and optional bias"});
  TSR_IF_SELECTED("FusedConv") r.add({"FusedConv", "tessera", 1, 2, 4, 1, 1,
         with({int_attr("group", 1), {"activation", AttrKind::kString},
               {"activation_params", AttrKind::kFloats},
               {"activation_affine", AttrKind::kFloats}, {"activation_bounds", AttrKind::kFloats}}),
         infer_fused_conv,
         "Conv + residual Z + activation applied in the kernel's epilogue (Relu, Clip, HardSwish, Sigmoid, Silu, "
         "LeakyRelu, HardSigmoid; made by the optimizer)"});
  TSR_IF_SELECTED("FusedDepthwiseSE") r.add({"FusedDepthwiseSE", "tessera", 1, 4, 7, 1, 1,
         with({int_attr("group", 1), {"activation", AttrKind::kString},
               {"activation_params", AttrKind::kFloats}, {"activation_affine", AttrKind::kFloats},
               {"activation_bounds", AttrKind::kFloats}, {"se_activation", AttrKind::kString},
               {"se_activation_params", AttrKind::kFloats}, {"se_activation_affine", AttrKind::kFloats},
               {"se_activation_bounds", AttrKind::kFloats}, {"gate_activation", AttrKind::kString},
               {"gate_activation_params", AttrKind::kFloats}, {"gate_activation_affine", AttrKind::kFloats},
               {"gate_activation_bounds", AttrKind::kFloats}}),
         infer_fused_depthwise_se,
         "depthwise Conv + activation, times its squeeze-excitation gate (channel means -> 1x1 Conv -> "
         "se_activation -> 1x1 Conv -> gate_activation), the means taken while each plane is in cache (made by the "
         "optimizer)"});
  TSR_IF_SELECTED("FusedSeparableConv") r.add({"FusedSeparableConv", "tessera", 1, 3, 8, 1, 1,
         with({int_attr("group", 1), {"activation", AttrKind::kString},
               {"activation_params", AttrKind::kFloats}, {"activation_affine", AttrKind::kFloats},
               {"activation_bounds", AttrKind::kFloats}, {"dw_activation", AttrKind::kString},
               {"dw_activation_params", AttrKind::kFloats}, {"dw_activation_affine", AttrKind::kFloats},
               {"dw_activation_bounds", AttrKind::kFloats}, {"ex_activation", AttrKind::kString},
               {"ex_activation_params", AttrKind::kFloats}, {"ex_activation_affine", AttrKind::kFloats},
               {"ex_activation_bounds", AttrKind::kFloats}}),
         infer_fused_separable_conv,
         "[1x1 Conv + ex_activation, then] depthwise Conv + dw_activation, then 1x1 Conv + residual Z + "
         "activation, the depthwise output (and expanded input) kept in cache (made by the optimizer)"});
  TSR_IF_SELECTED("MaxPool") r.add({"MaxPool", "", 12, 1, 1, 1, 2,
         with({{"kernel_shape", AttrKind::kInts, true}, int_attr("ceil_mode", 0),
               int_attr("storage_order", 0)}),
         [](InferContext& c) { return infer_pool(c, true); },
         "N-d max pooling with optional flattened argmax Indices (i64)"});
  TSR_IF_SELECTED("AveragePool") r.add({"AveragePool", "", 11, 1, 1, 1, 1,
         with({{"kernel_shape", AttrKind::kInts, true}, int_attr("ceil_mode", 0),
               int_attr("count_include_pad", 0)}),
         [](InferContext& c) { return infer_pool(c, false); }, "N-d average pooling"});
  TSR_IF_SELECTED("MaxUnpool") r.add({"MaxUnpool", "", 11, 2, 3, 1, 1,
         {{"kernel_shape", AttrKind::kInts, true}, {"pads", AttrKind::kInts}, {"strides", AttrKind::kInts}},
         infer_max_unpool, "scatters X into zeros of the unpooled shape at MaxPool's flattened Indices"});
  TSR_IF_SELECTED("GlobalAveragePool") r.add({"GlobalAveragePool", "", 1, 1, 1, 1, 1, {}, infer_global_pool, "mean over all spatial dims"});
  TSR_IF_SELECTED("GlobalMaxPool") r.add({"GlobalMaxPool", "", 1, 1, 1, 1, 1, {}, infer_global_pool, "max over all spatial dims"});
}

}  // namespace tsr::ops
