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

// Z = X ^ Y: dX = dZ * Y * X^(Y-1), dY = dZ * Z * ln X (defined for X > 0; NaN elsewhere, as
// ln X is). Y may have another (even an integer) dtype: it is cast to X's first.
Status pow_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = g.input_type(0).dtype;
  const Value x = g.input(0), dz = g.grad_output(0);
  if (g.wants(0)) {
    const Value y = cast(e, g.input(1), dt);
    const Value d = e.emit("Mul", {y, e.emit("Pow", {x, e.emit("Sub", {y, scalar(e, dt, 1)})})});
    g.set_grad(0, sum_to(e, e.emit("Mul", {dz, d}), x));
  }
  if (g.wants(1)) {
    const Value d = e.emit("Mul", {dz, e.emit("Mul", {g.output(0), e.emit("Log", {x})})});
    g.set_grad(1, sum_to(e, d, g.input(1)));
  }
  return ok_status();
}

// Y = max/min(X_0, ..., X_n-1) (broadcasting): dX_i = dY where X_i is the first input equal to Y
// (ties go to the lowest input index, so the gradient is counted once), summed back to X_i.
Status extremum_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const size_t n = g.num_inputs();
  const Value y = g.output(0), dy = g.grad_output(0);
  if (n == 1) {
    g.set_grad(0, dy);
    return ok_status();
  }
  const Value zero = scalar(e, g.output_type(0).dtype, 0);
  Value taken;  // bool: an earlier input already equals Y
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 == n) {  // the last input is Y wherever no earlier one is (NaN aside)
      if (g.wants(i)) g.set_grad(i, sum_to(e, e.emit("Where", {taken, zero, dy}), g.input(i)));
      break;
    }
    const Value eq = e.emit("Equal", {g.input(i), y});
    const Value mine = taken.valid() ? e.emit("And", {eq, e.emit("Not", {taken})}) : eq;
    if (g.wants(i)) g.set_grad(i, sum_to(e, e.emit("Where", {mine, dy, zero}), g.input(i)));
    if (i + 2 < n || g.wants(n - 1)) taken = taken.valid() ? e.emit("Or", {taken, eq}) : eq;
  }
  return ok_status();
}

// Y = X_0 + ... + X_n-1: dX_i = dY (summed back over X_i's broadcast axes).
Status sum_grad(GradContext& g) {
  for (size_t i = 0; i < g.num_inputs(); ++i)
    if (g.wants(i)) g.set_grad(i, sum_to(g.emitter(), g.grad_output(0), g.input(i)));
  return ok_status();
}

// Y = (X_0 + ... + X_n-1) / n: dX_i = dY / n.
Status mean_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const auto n = static_cast<double>(g.num_inputs());
  const Value d = e.emit("Mul", {g.grad_output(0), scalar(e, g.output_type(0).dtype, 1.0 / n)});
  for (size_t i = 0; i < g.num_inputs(); ++i)
    if (g.wants(i)) g.set_grad(i, sum_to(e, d, g.input(i)));
  return ok_status();
}

// Y = C ? A : B: dA = dY where C, dB = dY where !C (each summed back to its shape); C: none.
Status where_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value c = g.input(0), dy = g.grad_output(0);
  const Value zero = scalar(e, g.output_type(0).dtype, 0);
  if (g.wants(1)) g.set_grad(1, sum_to(e, e.emit("Where", {c, dy, zero}), g.input(1)));
  if (g.wants(2)) g.set_grad(2, sum_to(e, e.emit("Where", {c, zero, dy}), g.input(2)));
  return ok_status();
}

// Y = cast(X) (Cast, CastLike): dX = cast(dY) back to X's dtype. Only reached between float
// dtypes (the pass sends no gradient through non-float values); CastLike's target gets none.
Status cast_grad(GradContext& g) {
  const DType dt = g.input_type(0).dtype;
  if (!dtype_is_float(dt)) return ok_status();
  g.set_grad(0, cast(g.emitter(), g.grad_output(0), dt));
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
  r.set_grad("Pow", &pow_grad);
  r.set_grad("Max", &extremum_grad);
  r.set_grad("Min", &extremum_grad);
  r.set_grad("Sum", &sum_grad);
  r.set_grad("Mean", &mean_grad);
  r.set_grad("Where", &where_grad);
  r.set_grad("Cast", &cast_grad);
  r.set_grad("CastLike", &cast_grad);
}

}  // namespace tsr::ops
