// Gradient rules (VJPs) of the elementwise arithmetic ops (core/ops/families/elementwise.cpp).
// Broadcasting is undone with sum_to. Derivations are the textbook ones, written per rule.
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

// Y = A + B: dA = dY, dB = dY (each summed back over its broadcast axes).
Status add_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (g.wants(0)) g.set_grad(0, sum_to(e, dy, g.input(0)));
  if (g.wants(1)) g.set_grad(1, sum_to(e, dy, g.input(1)));
  return ok_status();
}

// Y = A - B: dA = dY, dB = -dY.
Status sub_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (g.wants(0)) g.set_grad(0, sum_to(e, dy, g.input(0)));
  if (g.wants(1)) g.set_grad(1, sum_to(e, e.emit("Neg", {dy}), g.input(1)));
  return ok_status();
}

// Y = A * B: dA = dY * B, dB = dY * A.
Status mul_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  if (g.wants(0)) g.set_grad(0, sum_to(e, e.emit("Mul", {dy, g.input(1)}), g.input(0)));
  if (g.wants(1)) g.set_grad(1, sum_to(e, e.emit("Mul", {dy, g.input(0)}), g.input(1)));
  return ok_status();
}

// Y = A / B: dA = dY / B, dB = -dY * Y / B.
Status div_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  const Value da = e.emit("Div", {dy, g.input(1)});
  if (g.wants(0)) g.set_grad(0, sum_to(e, da, g.input(0)));
  if (g.wants(1)) g.set_grad(1, sum_to(e, e.emit("Neg", {e.emit("Mul", {da, g.output(0)})}), g.input(1)));
  return ok_status();
}

// Y = -X: dX = -dY.
Status neg_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Neg", {g.grad_output(0)}));
  return ok_status();
}

// Y = X: dX = dY.
Status identity_grad(GradContext& g) {
  g.set_grad(0, g.grad_output(0));
  return ok_status();
}

}  // namespace

void register_elementwise_grads(OpRegistry& r) {
  r.set_grad("Add", &add_grad);
  r.set_grad("Sub", &sub_grad);
  r.set_grad("Mul", &mul_grad);
  r.set_grad("Div", &div_grad);
  r.set_grad("Neg", &neg_grad);
  r.set_grad("Identity", &identity_grad);
}

}  // namespace tsr::ops
