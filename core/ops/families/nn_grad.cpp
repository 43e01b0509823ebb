// Gradient ops of the convolution and pooling family (domain "tessera"): what the VJPs of Conv,
// ConvTranspose, MaxPool and AveragePool (core/ops/grads/nn.cpp) emit where a decomposition
// into ONNX ops would be wasteful. Each takes the forward node's attributes unchanged (group,
// kernel_shape, strides, dilations, pads, auto_pad; ceil_mode, count_include_pad,
// storage_order for the pools), so the window geometry is resolved exactly as the forward op
// resolves it (core/ops/spatial.h). CPU kernels: backends/cpu/kernels/nn_grad.cpp (convs) and
// nn_pool.cpp (pools).
#include "core/ops/spatial.h"
#include "core/ops/shape_util.h"
#include "core/ops/op_def.h"

namespace tsr::ops {
namespace {

using ir::AttrKind;

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16};

// Shape from the i64 1-D input `i` (a shape value): its value when known, else the right rank of
// dynamic dims, else unknown rank (nullopt).
std::optional<Shape> shape_input(InferContext& ctx, size_t i) {
  if (auto v = shape_util::known_i64(ctx, i)) return *v;
  const int64_t n = shape_util::static_len_1d(ctx, i);
  if (n < 0) return std::nullopt;
  return Shape(static_cast<size_t>(n), -1);
}

// Checks that a Conv with input `x` [N, C, D...], weight `w` [M, C/group, k...] (the node's
// attributes) has output `y` [N, M, O...], where all three are known; -1 dims match anything.
Status check_conv_shapes(InferContext& ctx, const Shape& x, const Shape& w, const Shape& y) {
  if (x.size() < 3 || x.size() != w.size() || x.size() != y.size())
    return ctx.ir_error("X ", shape_str(x), ", W ", shape_str(w), " and dY ", shape_str(y),
                        " need one rank >= 3");
  const int64_t group = ctx.node().attr_int("group");
  if (group <= 0) return ctx.ir_error("group = ", group, " must be positive");
  auto differ = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  if (differ(x[0], y[0]) || differ(w[0], y[1]) || (x[1] >= 0 && w[1] >= 0 && x[1] != w[1] * group) ||
      (w[0] >= 0 && w[0] % group != 0))
    return ctx.arg_error("X ", shape_str(x), ", W ", shape_str(w), " and dY ", shape_str(y),
                         " do not fit a Conv with group ", group);
  const std::vector<int64_t> in(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  for (int64_t k : kernel)
    if (k < 0) return ok_status();
  auto sp = resolve_spatial(ctx.node(), in, kernel, false);
  if (!sp.ok()) return ctx.ir_error(sp.status().message());
  for (size_t i = 0; i < in.size(); ++i)
    if (differ(sp->out[i], y[i + 2]))
      return ctx.arg_error("dY ", shape_str(y), " is not the Conv output of X ", shape_str(x), " and W ", shape_str(w));
  return ok_status();
}

// ConvGradInput(dY [N, M, O...], W [M, C/group, k...], X_shape (i64 [r + 2])) -> dX (X_shape):
// the gradient of Conv's output with respect to its input, dX = col2im(W_g^T · dY_g) per image
// and group (the adjoint of the forward im2col + GEMM). dY and W: f32/f64.
Status infer_conv_grad_input(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI64}));
  const DType dt = ctx.input(0).dtype;
  const auto xs = shape_input(ctx, 2);
  if (!xs) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  for (int64_t d : *xs)
    if (d != -1) TSR_RETURN_IF_ERROR(shape_util::check_dim(ctx, d, "input[2] (X_shape)"));
  if (ctx.input(0).has_shape && ctx.input(1).has_shape)
    TSR_RETURN_IF_ERROR(check_conv_shapes(ctx, *xs, ctx.input(1).shape, ctx.input(0).shape));
  ctx.set_output(0, dt, *xs);
  return ok_status();
}

// ConvGradWeight(X [N, C, D...], dY [N, M, O...], W_shape (i64 [r + 2])) -> dW (W_shape): the
// gradient of Conv's output with respect to its weight, dW_g = sum_n dY_g[n] · im2col(X_g[n])^T.
// X and dY: f32/f64.
Status infer_conv_grad_weight(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(2, {DType::kI64}));
  const DType dt = ctx.input(0).dtype;
  const auto ws = shape_input(ctx, 2);
  if (!ws) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  for (int64_t d : *ws)
    if (d != -1) TSR_RETURN_IF_ERROR(shape_util::check_dim(ctx, d, "input[2] (W_shape)"));
  if (ctx.input(0).has_shape && ctx.input(1).has_shape)
    TSR_RETURN_IF_ERROR(check_conv_shapes(ctx, ctx.input(0).shape, *ws, ctx.input(1).shape));
  ctx.set_output(0, dt, *ws);
  return ok_status();
}

// Checks that a pool (the node's attributes) maps input `x` [N, C, D...] to `y` [N, C, O...].
Status check_pool_shapes(InferContext& ctx, const Shape& x, const Shape& y) {
  const ir::Attribute* ks = ctx.node().attr("kernel_shape");
  if (!ks) return ctx.ir_error("attribute kernel_shape is required");
  if (x.size() != ks->ints.size() + 2 || y.size() != x.size())
    return ctx.ir_error("X ", shape_str(x), " and dY ", shape_str(y), " need rank ", ks->ints.size() + 2);
  const std::vector<int64_t> in(x.begin() + 2, x.end());
  auto sp = resolve_spatial(ctx.node(), in, ks->ints, ctx.node().attr_int("ceil_mode") != 0);
  if (!sp.ok()) return ctx.ir_error(sp.status().message());
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t want = i < 2 ? x[i] : sp->out[i - 2];
    if (want >= 0 && y[i] >= 0 && want != y[i])
      return ctx.arg_error("dY ", shape_str(y), " is not the pooled shape of X ", shape_str(x));
  }
  return ok_status();
}

// MaxPoolGrad(X [N, C, D...], dY [N, C, O...]) -> dX (X's shape): each dY element is added to
// the input element its window's max came from (the argmax MaxPool's Indices would name: the
// first maximal tap; overlapping windows accumulate; a window wholly in padding adds nothing).
Status infer_max_pool_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_same_dtype(0, 1));
  const ValueType& x = ctx.input(0);
  if (x.has_shape && ctx.input(1).has_shape) TSR_RETURN_IF_ERROR(check_pool_shapes(ctx, x.shape, ctx.input(1).shape));
  ctx.output(0) = x;
  return ok_status();
}

// AveragePoolGrad(dY [N, C, O...], X_shape (i64 [r + 2])) -> dX (X_shape): each dY element
// divided by its window's divisor (as AveragePool counts it: count_include_pad, ceil_mode) is
// added to every in-range input element of the window.
Status infer_average_pool_grad(InferContext& ctx) {
  TSR_RETURN_IF_ERROR(ctx.require_dtype(0, kFloatTypes));
  TSR_RETURN_IF_ERROR(ctx.require_dtype(1, {DType::kI64}));
  const DType dt = ctx.input(0).dtype;
  const auto xs = shape_input(ctx, 1);
  if (!xs) {
    ctx.set_output_unknown_shape(0, dt);
    return ok_status();
  }
  for (int64_t d : *xs)
    if (d != -1) TSR_RETURN_IF_ERROR(shape_util::check_dim(ctx, d, "input[1] (X_shape)"));
  if (ctx.input(0).has_shape) TSR_RETURN_IF_ERROR(check_pool_shapes(ctx, *xs, ctx.input(0).shape));
  ctx.set_output(0, dt, *xs);
  return ok_status();
}

std::vector<AttrSpec> window_attrs(std::vector<AttrSpec> extra) {
  std::vector<AttrSpec> all = {string_attr("auto_pad", "NOTSET"),
                               {"dilations", AttrKind::kInts},
                               {"kernel_shape", AttrKind::kInts},
                               {"pads", AttrKind::kInts},
                               {"strides", AttrKind::kInts}};
  for (auto& a : extra) {
    auto it = std::find_if(all.begin(), all.end(), [&](const AttrSpec& b) { return b.name == a.name; });
    if (it != all.end()) *it = a;
    else all.push_back(a);
  }
  return all;
}

}  // namespace

void register_nn_grad_ops(OpRegistry& r) {
  const std::vector<AttrSpec> conv = window_attrs({int_attr("group", 1)});
  TSR_IF_SELECTED("ConvGradInput") r.add({"ConvGradInput", "tessera", 1, 3, 3, 1, 1, conv, infer_conv_grad_input,
         "Conv's input gradient: dX = col2im(W^T dY) (Conv's attributes)"});
  TSR_IF_SELECTED("ConvGradWeight") r.add({"ConvGradWeight", "tessera", 1, 3, 3, 1, 1, conv, infer_conv_grad_weight,
         "Conv's weight gradient: dW = sum_n dY im2col(X)^T (Conv's attributes)"});
  TSR_IF_SELECTED("MaxPoolGrad") r.add({"MaxPoolGrad", "tessera", 1, 2, 2, 1, 1,
         window_attrs({{"kernel_shape", AttrKind::kInts, true}, int_attr("ceil_mode", 0),
                       int_attr("storage_order", 0)}),
         infer_max_pool_grad, "MaxPool's input gradient: dY scattered to each window's argmax"});
  TSR_IF_SELECTED("AveragePoolGrad") r.add({"AveragePoolGrad", "tessera", 1, 2, 2, 1, 1,
         window_attrs({{"kernel_shape", AttrKind::kInts, true}, int_attr("ceil_mode", 0),
                       int_attr("count_include_pad", 0)}),
         infer_average_pool_grad, "AveragePool's input gradient: dY / count spread over each window"});
}

}  // namespace tsr::ops
