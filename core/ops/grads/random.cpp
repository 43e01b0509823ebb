// Gradient rules of the random ops (core/ops/families/random.cpp): Dropout. The sampling ops
// (RandomUniform, Bernoulli, ...) have no input gradient.
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

// Y = X * mask / (1 - ratio) in training mode, Y = X otherwise:
// dX = dY * mask * s, s = 1 / (1 - ratio) in training mode, else 1 (the mask is then all true).
// The mask is the forward node's own output 1 (grad_reads_outputs: passes/autodiff adds it when
// the model omitted it), so the backward drops exactly the elements the forward dropped.
Status dropout_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value dy = g.grad_output(0);
  const DType dt = g.input_type(0).dtype;
  const Tensor* training = g.has_input(2) ? e.known_value(g.input(2)) : nullptr;
  const bool inference = !g.has_input(2) || (training && training->numel() == 1 && !training->data<bool>()[0]);
  if (inference) {  // identity
    g.set_grad(0, dy);
    return ok_status();
  }
  const Value mask = g.output(1);
  if (!mask.valid()) return g.error("the mask output (which the autodiff pass adds) is missing");
  Value scale;
  if (!g.has_input(1)) {
    scale = scalar(e, dt, 2.0);  // the default ratio 0.5
  } else if (const Tensor* r = e.known_value(g.input(1))) {
    scale = scalar(e, dt, 1.0 / (1.0 - r->scalar_f64()));
  } else {
    scale = e.emit("Reciprocal", {e.emit("Sub", {scalar(e, dt, 1), cast(e, g.input(1), dt)})});
  }
  if (!training) scale = e.emit("Where", {g.input(2), scale, scalar(e, dt, 1)});
  g.set_grad(0, e.emit("Where", {mask, e.emit("Mul", {dy, scale}), scalar(e, dt, 0)}));
  return ok_status();
}

}  // namespace

void register_random_grads(OpRegistry& r) { r.set_grad("Dropout", &dropout_grad, {1}); }

}  // namespace tsr::ops
