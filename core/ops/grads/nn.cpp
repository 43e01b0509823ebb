// Gradient rules of the convolution and pooling ops (core/ops/families/nn.cpp,
// conv_transpose.cpp). The heavy VJPs are the Tessera ops of core/ops/families/nn_grad.cpp
// (ConvGradInput, ConvGradWeight, MaxPoolGrad, AveragePoolGrad), which take the forward node's
// attributes unchanged; the global pools decompose into a few elementwise ops.
#include "core/ops/conv_transpose.h"
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

using ir::Attribute;

// v's shape as an i64 1-D value: a constant when statically known (no Shape node, and v need
// not stay alive for it), else Shape(v).
Value shape_value(Emitter& e, Value v) {
  const ValueType t = e.type(v);
  return t.fully_known() ? ints_const(e, t.shape) : shape_of(e, v);
}

// The axes of an [N, C, D...] value other than C: what a per-channel bias is summed over.
Expected<std::vector<int64_t>> non_channel_axes(GradContext& g, Value v, int64_t first_spatial) {
  const ValueType t = g.emitter().type(v);
  if (!t.has_shape) return g.error("the rank of dY must be known");
  std::vector<int64_t> axes = {0};
  for (auto a = first_spatial; a < static_cast<int64_t>(t.shape.size()); ++a) axes.push_back(a);
  return axes;
}

// dB of a conv's per-channel bias: dY summed over the batch and spatial axes.
Status set_bias_grad(GradContext& g, size_t input, Value dy) {
  if (!g.wants(input)) return ok_status();
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, non_channel_axes(g, dy, 2));
  g.set_grad(input, e.emit("ReduceSum", {dy, ints_const(e, axes)}, {Attribute::make_int("keepdims", 0)}));
  return ok_status();
}

// Y = Conv(X, W) + B, i.e. Y_g = W_g · im2col(X_g) + B: dX = col2im(W_g^T dY_g) (ConvGradInput),
// dW_g = sum_n dY_g im2col(X_g)^T (ConvGradWeight), dB = sum of dY over N and space.
Status conv_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  const std::vector<Attribute>& attrs = g.node().attributes;
  if (g.wants(0)) g.set_grad(0, e.emit("ConvGradInput", {dy, g.input(1), shape_value(e, g.input(0))}, attrs));
  if (g.wants(1)) g.set_grad(1, e.emit("ConvGradWeight", {g.input(0), dy, shape_value(e, g.input(1))}, attrs));
  return set_bias_grad(g, 2, dy);
}

// Y = ConvTranspose(X, W) + B is the adjoint of X' = Conv(Y', W) with the same W, strides,
// dilations, group and (resolved) pads, so dX = Conv(dY, W), dW = ConvGradWeight(dY, X) (dY the
// conv's input, X its output) and dB = sum of dY over N and space.
Status conv_transpose_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  const ValueType xt = g.input_type(0), wt = g.input_type(1);
  if (!xt.has_shape || !wt.has_shape || xt.shape.size() < 3 || wt.shape.size() != xt.shape.size())
    return g.error("the ranks of X and W must be known");
  const std::vector<int64_t> in(xt.shape.begin() + 2, xt.shape.end()), kernel(wt.shape.begin() + 2, wt.shape.end());
  for (int64_t d : in)
    if (d < 0) return g.error("X's spatial dims must be static, X is ", xt.str());
  auto geo = resolve_conv_transpose(g.node(), in, kernel);
  if (!geo.ok()) return g.error(geo.status().message());
  const size_t r = in.size();
  std::vector<int64_t> pads(2 * r);
  for (size_t i = 0; i < r; ++i) {
    pads[i] = geo->pad_begin[i];
    pads[i + r] = geo->pad_end[i];
    // The Conv over dY must give back X's dims: not so when output_padding >= stride (allowed
    // when dilation is larger), or with negative resolved pads (output_shape larger than full).
    const int64_t dk = (geo->kernel[i] - 1) * geo->dilations[i] + 1;
    const int64_t span = geo->out[i] + pads[i] + pads[i + r] - dk;
    if (pads[i] < 0 || pads[i + r] < 0 || span < 0 || span / geo->strides[i] + 1 != in[i])
      return g.error("output_padding / output_shape that no Conv window covers is not supported");
  }
  const std::vector<Attribute> attrs = {Attribute::make_ints("strides", geo->strides),
                                        Attribute::make_ints("dilations", geo->dilations),
                                        Attribute::make_ints("pads", pads),
                                        Attribute::make_int("group", g.node().attr_int("group"))};
  if (g.wants(0)) g.set_grad(0, e.emit("Conv", {dy, g.input(1)}, attrs));
  if (g.wants(1)) g.set_grad(1, e.emit("ConvGradWeight", {dy, g.input(0), shape_value(e, g.input(1))}, attrs));
  return set_bias_grad(g, 2, dy);
}

// Y = MaxPool(X): dX[argmax of each window] += dY (MaxPoolGrad).
Status max_pool_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("MaxPoolGrad", {g.input(0), g.grad_output(0)}, g.node().attributes));
  return ok_status();
}

// Y = AveragePool(X): dX[window] += dY / divisor (AveragePoolGrad).
Status average_pool_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("AveragePoolGrad", {g.grad_output(0), shape_value(e, g.input(0))}, g.node().attributes));
  return ok_status();
}

// Y = mean over space of X: dX = broadcast(dY / (numel(X) / numel(Y))).
Status global_average_pool_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = g.input_type(0).dtype;
  const Value count = cast(e, e.emit("Div", {e.emit("Size", {g.input(0)}), e.emit("Size", {g.output(0)})}), dt);
  g.set_grad(0, e.emit("Expand", {e.emit("Div", {g.grad_output(0), count}), shape_value(e, g.input(0))}));
  return ok_status();
}

// Y = max over space of X: dX = dY * (X == Y) / #(X == Y), the gradient shared evenly between
// tied maxima (a subgradient; a single maximum gets all of it).
Status global_max_pool_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = g.input_type(0).dtype;
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, non_channel_axes(g, g.input(0), 2));
  const std::vector<int64_t> spatial(axes.begin() + 1, axes.end());
  const Value mask = cast(e, e.emit("Equal", {g.input(0), g.output(0)}), dt);
  const Value ties = e.emit("ReduceSum", {mask, ints_const(e, spatial)},
                            {Attribute::make_int("keepdims", 1), Attribute::make_int("noop_with_empty_axes", 1)});
  g.set_grad(0, e.emit("Mul", {mask, e.emit("Div", {g.grad_output(0), ties})}));
  return ok_status();
}

}  // namespace

void register_nn_grads(OpRegistry& r) {
  r.set_grad("Conv", &conv_grad);
  r.set_grad("ConvTranspose", &conv_transpose_grad);
  r.set_grad("MaxPool", &max_pool_grad);
  r.set_grad("AveragePool", &average_pool_grad);
  r.set_grad("GlobalAveragePool", &global_average_pool_grad);
  r.set_grad("GlobalMaxPool", &global_max_pool_grad);
}

}  // namespace tsr::ops
