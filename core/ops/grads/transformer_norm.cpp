// Gradient rules of the transformer normalizations (core/ops/families/transformer_norm.cpp).
// Layer norm reuses the fused LayerNormalizationGrad; RMS norm composes existing ops (its VJP is
// three row reductions, and no fused op exists for it yet). EmbedLayerNormalization has no rule
// (its differentiable inputs are embedding tables, trained through Gather in plain graphs).
//
// RMS norm, per row of L values over the normalized dims, with inv = 1 / sqrt(mean(x^2) + eps),
// xhat = x * inv, g = dY * scale:
//   dX = inv * (g - xhat * mean(g * xhat)),  dScale = sum over the rows of dY * xhat;
//   a gradient into inv_std_var adds dX += -dInv * inv^3 * x / L.
#include "core/ops/grad.h"

namespace tsr::ops {

namespace {

struct RmsVjp {
  Value dx, dscale, inv;
};

// The RMS norm VJP over `axes` (X's normalized dims); dscale is dY * xhat before any reduction.
RmsVjp rms_vjp(Emitter& e, Value dy, Value x, Value scale, const std::vector<int64_t>& axes, double eps, DType dt) {
  const Value ax = ints_const(e, axes);
  const Value ms = e.emit("ReduceMean", {e.emit("Mul", {x, x}), ax});
  const Value inv = e.emit("Reciprocal", {e.emit("Sqrt", {e.emit("Add", {ms, scalar(e, dt, eps)})})});
  const Value xhat = e.emit("Mul", {x, inv});
  const Value g = e.emit("Mul", {dy, scale});
  const Value proj = e.emit("Mul", {xhat, e.emit("ReduceMean", {e.emit("Mul", {g, xhat}), ax})});
  return {e.emit("Mul", {inv, e.emit("Sub", {g, proj})}), e.emit("Mul", {dy, xhat}), inv};
}

// The normalized axes [axis, rank) of input 0, from the node's axis (default -1 for the skip ops).
Expected<std::vector<int64_t>> norm_axes(GradContext& g, int64_t axis_attr) {
  const ValueType xt = g.input_type(0);
  if (!xt.has_shape) return g.error("the input rank must be known");
  auto axis = static_axis(g.emitter(), g.input(0), axis_attr);
  if (!axis.ok()) return g.error(axis.status().message());
  std::vector<int64_t> axes;
  for (auto d = *axis; d < static_cast<int64_t>(xt.shape.size()); ++d) axes.push_back(d);
  return axes;
}

// RMSNormalization / SimplifiedLayerNormalization (X, scale) -> Y, inv_std_var?.
Status rms_norm_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0), dinv = g.grad_output(1);
  if (!dy.valid() && !dinv.valid()) return ok_status();
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, norm_axes(g, g.node().attr_int("axis")));
  const DType dt = g.input_type(0).dtype;
  const Value x = g.input(0);
  const RmsVjp r = rms_vjp(e, dy.valid() ? dy : zeros_like(e, x), x, g.input(1), axes,
                           g.node().attr_float("epsilon"), dt);
  std::vector<Value> dx = {r.dx};
  if (dinv.valid()) {
    const Value len = cast(e, e.emit("Div", {e.emit("Size", {x}), e.emit("Size", {r.inv})}), dt);
    const Value inv3 = e.emit("Mul", {r.inv, e.emit("Mul", {r.inv, r.inv})});
    const Value t = e.emit("Mul", {e.emit("Mul", {cast(e, dinv, dt), inv3}), x});
    dx.push_back(e.emit("Neg", {e.emit("Div", {t, len})}));
  }
  g.set_grad(0, add_n(e, dx));
  if (g.wants(1)) g.set_grad(1, sum_to(e, r.dscale, g.input(1)));
  return ok_status();
}

// SkipLayerNormalization (input, skip, gamma, beta?, bias?) and SkipSimplifiedLayerNormalization
// (input, skip, gamma, bias?): s = input + skip + bias is normalized over the last axis. The
// gradient of output 0 (plus any into input_skip_bias_sum, output 3) reaches s; from there
// input, skip and bias take it summed to their shapes. Gradients into mean / inv_std_var are
// not supported (training graphs use LayerNormalization's own outputs).
Status skip_norm_grad(GradContext& g, bool simplified) {
  Emitter& e = g.emitter();
  if (g.grad_output(1).valid() || g.grad_output(2).valid())
    return g.error("no gradient through the mean / inv_std_var outputs");
  const Value dy = g.grad_output(0), dsum = g.grad_output(3);
  if (!dy.valid() && !dsum.valid()) return ok_status();
  const size_t bias_in = simplified ? 3 : 4;
  const Value x = g.input(0), gamma = g.input(2);
  Value s = e.emit("Add", {x, g.input(1)});
  if (g.has_input(bias_in)) s = e.emit("Add", {s, g.input(bias_in)});
  std::vector<Value> ds;
  if (dsum.valid()) ds.push_back(dsum);
  if (dy.valid()) {
    if (simplified) {
      TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, norm_axes(g, -1));
      const RmsVjp r = rms_vjp(e, dy, s, gamma, axes, g.node().attr_float("epsilon"), g.input_type(0).dtype);
      ds.push_back(r.dx);
      if (g.wants(2)) g.set_grad(2, sum_to(e, r.dscale, gamma));
    } else {
      const bool want_beta = g.wants(3) && g.has_input(3);
      const size_t outs = want_beta ? 3 : g.wants(2) ? 2 : 1;
      std::vector<ir::Attribute> attrs = copy_attrs(g.node(), {"epsilon"});
      attrs.push_back(ir::Attribute::make_int("axis", -1));
      const std::vector<Value> r = e.emit_n("LayerNormalizationGrad", {dy, s, gamma}, outs, attrs);
      ds.push_back(r[0]);
      if (g.wants(2)) g.set_grad(2, r[1]);
      if (want_beta) g.set_grad(3, r[2]);
    }
  }
  const Value dsv = add_n(e, ds);
  g.set_grad(0, dsv);
  if (g.wants(1)) g.set_grad(1, sum_to(e, dsv, g.input(1)));
  if (g.wants(bias_in) && g.has_input(bias_in)) g.set_grad(bias_in, sum_to(e, dsv, g.input(bias_in)));
  return ok_status();
}

Status skip_layer_norm_grad(GradContext& g) { return skip_norm_grad(g, false); }
Status skip_simplified_layer_norm_grad(GradContext& g) { return skip_norm_grad(g, true); }

}  // namespace

void register_transformer_norm_grads(OpRegistry& r) {
  r.set_grad("RMSNormalization", &rms_norm_grad);
  r.set_grad("SimplifiedLayerNormalization", &rms_norm_grad);
  r.set_grad("com.microsoft::SkipLayerNormalization", &skip_layer_norm_grad);
  r.set_grad("com.microsoft::SkipSimplifiedLayerNormalization", &skip_simplified_layer_norm_grad);
}

}  // namespace tsr::ops
