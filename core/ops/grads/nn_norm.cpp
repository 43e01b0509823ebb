// Gradient rules of the normalization and softmax ops (core/ops/families/nn_norm.cpp).
// Softmax and LogSoftmax compose existing ops from their outputs; the normalizations use the
// fused Tessera ops BatchNormalizationGrad and LayerNormalizationGrad (one pass over X each,
// where a decomposition would materialize a dozen full-size temporaries per step).
#include "core/ops/grad.h"

namespace tsr::ops {

namespace {

Value reduce_sum_keep(Emitter& e, Value v, const std::vector<int64_t>& axes) {
  return e.emit("ReduceSum", {v, ints_const(e, axes)}, {ir::Attribute::make_int("keepdims", 1)});
}

}  // namespace

Value log_softmax_vjp(Emitter& e, Value y, Value dy, int64_t axis) {
  return e.emit("Sub", {dy, e.emit("Mul", {e.emit("Exp", {y}), reduce_sum_keep(e, dy, {axis})})});
}

namespace {

// The node's `axis` attribute (Softmax family, opset 13, and LayerNormalization: default -1),
// normalized against X's rank.
Expected<int64_t> node_axis(GradContext& g) {
  auto axis = static_axis(g.emitter(), g.input(0), g.node().attr_int("axis"));
  if (!axis.ok()) return g.error(axis.status().message());
  return *axis;
}

// Y = softmax(X): dX = Y * (dY - sum_axis(dY * Y)).
Status softmax_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const int64_t axis, node_axis(g));
  const Value y = g.output(0), dy = g.grad_output(0);
  const Value s = reduce_sum_keep(e, e.emit("Mul", {dy, y}), {axis});
  g.set_grad(0, e.emit("Mul", {y, e.emit("Sub", {dy, s})}));
  return ok_status();
}

// Y = X - log(sum_axis(exp(X))): dX = dY - softmax(X) * sum_axis(dY), softmax(X) = exp(Y).
Status log_softmax_grad(GradContext& g) {
  TSR_ASSIGN_OR_RETURN(const int64_t axis, node_axis(g));
  g.set_grad(0, log_softmax_vjp(g.emitter(), g.output(0), g.grad_output(0), axis));
  return ok_status();
}

// Y = scale * (X - mean) / sqrt(var + eps) + B per channel (mean/var: the batch statistics in
// training mode, the inputs otherwise). All of dX, dScale, dB (and dMean, dVar in inference
// mode) come from one BatchNormalizationGrad; the running-statistics outputs of training mode
// are state updates and pass no gradient.
Status batch_norm_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (!dy.valid()) return ok_status();
  const bool training = g.node().attr_int("training_mode") != 0;
  const size_t outs = training || !(g.wants(3) || g.wants(4)) ? 3 : 5;
  const std::vector<Value> r =
      e.emit_n("BatchNormalizationGrad",
               {dy, g.input(0), g.input(1), training ? Value{} : g.input(3), training ? Value{} : g.input(4)}, outs,
               copy_attrs(g.node(), {"epsilon", "training_mode"}));
  for (size_t k = 0; k < outs; ++k) g.set_grad(k, r[k]);
  return ok_status();
}

// Y = xhat * Scale + B with xhat = (X - Mean) * InvStdDev over X.shape[axis:]. dY goes through
// LayerNormalizationGrad (dScale, dB summed back to their broadcast shapes). Gradients flowing
// into the Mean / InvStdDev outputs (rare) add, with L = numel(X.shape[axis:]):
//   dMean/dX = 1/L,  dInvStdDev/dX = -InvStdDev^3 * (X - Mean) / L.
Status layer_norm_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value x = g.input(0), dy = g.grad_output(0);
  const DType dt = g.input_type(0).dtype;
  std::vector<Value> dx_terms;
  if (dy.valid()) {
    const bool want_scale = g.wants(1), want_b = g.wants(2) && g.has_input(2);
    const size_t outs = want_b ? 3 : want_scale ? 2 : 1;
    const std::vector<Value> r = e.emit_n("LayerNormalizationGrad", {dy, x, g.input(1)}, outs,
                                          copy_attrs(g.node(), {"axis", "epsilon"}));
    dx_terms.push_back(r[0]);
    if (want_scale) g.set_grad(1, sum_to(e, r[1], g.input(1)));
    if (want_b) g.set_grad(2, sum_to(e, r[2], g.input(2)));
  }
  const Value dmean = g.grad_output(1), dinv = g.grad_output(2);
  if (dmean.valid() || dinv.valid()) {
    const ValueType xt = g.input_type(0);
    if (!xt.has_shape) return g.error("the input rank must be known");
    TSR_ASSIGN_OR_RETURN(const int64_t axis, node_axis(g));
    std::vector<int64_t> axes;
    for (auto d = axis; d < static_cast<int64_t>(xt.shape.size()); ++d) axes.push_back(d);
    const Value stat = g.output(dmean.valid() ? 1 : 2);
    const Value len = cast(e, e.emit("Div", {e.emit("Size", {x}), e.emit("Size", {stat})}), dt);
    std::vector<Value> parts;
    if (dmean.valid()) parts.push_back(e.emit("Expand", {cast(e, dmean, dt), shape_of(e, x)}));
    if (dinv.valid()) {
      // The statistics are recomputed in X's dtype (the outputs may be stashed in a narrower one).
      const Value xc = e.emit("Sub", {x, e.emit("ReduceMean", {x, ints_const(e, axes)})});
      const Value inv = cast(e, g.output(2), dt);
      const Value inv3 = e.emit("Mul", {inv, e.emit("Mul", {inv, inv})});
      parts.push_back(e.emit("Neg", {e.emit("Mul", {e.emit("Mul", {cast(e, dinv, dt), inv3}), xc})}));
    }
    dx_terms.push_back(e.emit("Div", {add_n(e, parts), len}));
  }
  if (!dx_terms.empty()) g.set_grad(0, add_n(e, dx_terms));
  return ok_status();
}

// Y = scale[c] * xhat + B[c], xhat normalized per (n, c) over the spatial dims: the row part is
// LayerNormalizationGrad(dY * scale[c], X, axis = 2); dScale = sum(dY * xhat), dB = sum(dY)
// over N and the spatial dims, xhat recomputed by a LayerNormalization with unit scale.
Status instance_norm_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value x = g.input(0), scale = g.input(1), dy = g.grad_output(0);
  const ValueType xt = g.input_type(0);
  if (!xt.has_shape) return g.error("the input rank must be known");
  const auto rank = static_cast<int64_t>(xt.shape.size());
  std::vector<int64_t> spatial, summed = {0};
  for (int64_t d = 2; d < rank; ++d) {
    spatial.push_back(d - 1);  // Unsqueeze axes of scale [C] -> [C, 1, ...]
    summed.push_back(d);
  }
  const std::vector<ir::Attribute> eps = copy_attrs(g.node(), {"epsilon"});
  if (g.wants(0)) {
    const Value sc = e.emit("Unsqueeze", {scale, ints_const(e, spatial)});
    std::vector<ir::Attribute> attrs = eps;
    attrs.push_back(ir::Attribute::make_int("axis", 2));
    g.set_grad(0, e.emit("LayerNormalizationGrad", {e.emit("Mul", {dy, sc}), x}, attrs));
  }
  const auto sum = [&](Value v) {
    return e.emit("ReduceSum", {v, ints_const(e, summed)}, {ir::Attribute::make_int("keepdims", 0)});
  };
  if (g.wants(1)) {
    std::vector<ir::Attribute> attrs = eps;
    attrs.push_back(ir::Attribute::make_int("axis", 2));
    attrs.push_back(ir::Attribute::make_int("stash_type", static_cast<int64_t>(xt.dtype)));
    const Value xhat = e.emit("LayerNormalization", {x, scalar(e, xt.dtype, 1.0)}, attrs);
    g.set_grad(1, sum(e.emit("Mul", {dy, xhat})));
  }
  if (g.wants(2)) g.set_grad(2, sum(dy));
  return ok_status();
}

}  // namespace

void register_nn_norm_grads(OpRegistry& r) {
  r.set_grad("Softmax", &softmax_grad);
  r.set_grad("LogSoftmax", &log_softmax_grad);
  r.set_grad("BatchNormalization", &batch_norm_grad);
  r.set_grad("LayerNormalization", &layer_norm_grad);
  r.set_grad("InstanceNormalization", &instance_norm_grad);
}

}  // namespace tsr::ops
