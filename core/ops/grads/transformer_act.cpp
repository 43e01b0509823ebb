// Gradient rules of the com.microsoft Gelu family (core/ops/families/transformer_act.cpp). The
// Gelu forms go through the fused GeluGrad (approximate "none" or "tanh") at v = X + bias; the
// bias takes the same gradient summed over the leading dims. QuickGelu composes Sigmoid:
//   y = x s, s = sigmoid(alpha x):  dX = dY s (1 + alpha x (1 - s)).
#include "core/ops/grad.h"

namespace tsr::ops {

namespace {

// Y = Gelu(X + bias) (bias: input 1, optional unless BiasGelu).
Status biased_gelu_grad(GradContext& g, const char* approximate) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (!dy.valid()) return ok_status();
  const Value v = g.has_input(1) ? e.emit("Add", {g.input(0), g.input(1)}) : g.input(0);
  const Value dv = e.emit("GeluGrad", {dy, v}, {ir::Attribute::make_string("approximate", approximate)});
  g.set_grad(0, dv);
  if (g.wants(1) && g.has_input(1)) g.set_grad(1, sum_to(e, dv, g.input(1)));
  return ok_status();
}

Status erf_gelu_grad(GradContext& g) { return biased_gelu_grad(g, "none"); }
Status fast_gelu_grad(GradContext& g) { return biased_gelu_grad(g, "tanh"); }

Status quick_gelu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (!dy.valid()) return ok_status();
  const DType dt = g.input_type(0).dtype;
  const Value x = g.input(0);
  const Value ax = e.emit("Mul", {x, scalar(e, dt, g.node().attr_float("alpha"))});
  const Value s = e.emit("Sigmoid", {ax});
  const Value one = scalar(e, dt, 1.0);
  const Value inner = e.emit("Add", {one, e.emit("Mul", {ax, e.emit("Sub", {one, s})})});
  g.set_grad(0, e.emit("Mul", {dy, e.emit("Mul", {s, inner})}));
  return ok_status();
}

}  // namespace

void register_transformer_act_grads(OpRegistry& r) {
  r.set_grad("com.microsoft::Gelu", &erf_gelu_grad);
  r.set_grad("com.microsoft::BiasGelu", &erf_gelu_grad);
  r.set_grad("com.microsoft::FastGelu", &fast_gelu_grad);
  r.set_grad("com.microsoft::QuickGelu", &quick_gelu_grad);
}

}  // namespace tsr::ops
