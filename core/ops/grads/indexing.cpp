// Gradient rules of the gather ops (core/ops/families/indexing.cpp). A gather reads data
// elements (possibly one element many times); its adjoint adds each dY element back to the
// element it read, so repeated indices accumulate. Indices are integers and get no gradient.
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

using ir::Attribute;

// Y = Gather(X, idx, axis): dX = GatherGrad(dY, idx, Shape(X)) (tessera: dY rows added into
// zeros at the indices along the axis).
Status gather_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("GatherGrad", {g.grad_output(0), g.input(1), dims_of(e, g.input(0))},
                       {Attribute::make_int("axis", g.node().attr_int("axis"))}));
  return ok_status();
}

// dX = GatherGrad(dY, idx, shape) is linear in dY with adjoint Gather: d(dY) = Gather(d(dX), idx).
Status gather_grad_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Gather", {g.grad_output(0), g.input(1)},
                                 {Attribute::make_int("axis", g.node().attr_int("axis"))}));
  return ok_status();
}

// Y[p] = X[p with p_axis replaced by idx[p]]: dX = ScatterElements(0, idx, dY, add).
Status gather_elements_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("ScatterElements", {zeros_like(e, g.input(0)), g.input(1), g.grad_output(0)},
                       {Attribute::make_int("axis", g.node().attr_int("axis")),
                        Attribute::make_string("reduction", "add")}));
  return ok_status();
}

// Y[t] = X[idx[t], ...]: dX = ScatterND(0, idx, dY, add). ScatterND has no batch dims, so
// batch_dims > 0 is not differentiated.
Status gather_nd_grad(GradContext& g) {
  Emitter& e = g.emitter();
  if (g.node().attr_int("batch_dims") != 0) return g.error("GatherND with batch_dims > 0 has no gradient rule");
  g.set_grad(0, e.emit("ScatterND", {zeros_like(e, g.input(0)), g.input(1), g.grad_output(0)},
                       {Attribute::make_string("reduction", "add")}));
  return ok_status();
}

}  // namespace

void register_indexing_grads(OpRegistry& r) {
  r.set_grad("Gather", &gather_grad);
  r.set_grad("GatherGrad", &gather_grad_grad);
  r.set_grad("GatherElements", &gather_elements_grad);
  r.set_grad("GatherND", &gather_nd_grad);
}

}  // namespace tsr::ops
