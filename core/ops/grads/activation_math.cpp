// Gradient rules (VJPs) of the trigonometric and hyperbolic ops and of the remaining
// activations (core/ops/families/elementwise_unary.cpp and elementwise.cpp): textbook
// derivatives, each stated on its rule. Rules read the output Y where the derivative is a
// function of it (Tan, Selu, Celu) so that X need not stay alive.
#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

DType dtype_of(GradContext& g) { return g.input_type(0).dtype; }

// dX = dY * f'(X), with f'(X) emitted by `deriv`.
template <typename F>
Status chain(GradContext& g, F deriv) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), deriv(e, g.input(0), dtype_of(g))}));
  return ok_status();
}

// dX = dY / f(X), with f(X) emitted by `denominator`.
template <typename F>
Status chain_div(GradContext& g, F denominator) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("Div", {g.grad_output(0), denominator(e, g.input(0), dtype_of(g))}));
  return ok_status();
}

Value square(Emitter& e, Value x) { return e.emit("Mul", {x, x}); }
Value one(Emitter& e, DType dt) { return scalar(e, dt, 1); }

// sin' = cos, cos' = -sin, sinh' = cosh, cosh' = sinh.
Status sin_grad(GradContext& g) { return chain(g, [](Emitter& e, Value x, DType) { return e.emit("Cos", {x}); }); }
Status cos_grad(GradContext& g) {
  return chain(g, [](Emitter& e, Value x, DType) { return e.emit("Neg", {e.emit("Sin", {x})}); });
}
Status sinh_grad(GradContext& g) { return chain(g, [](Emitter& e, Value x, DType) { return e.emit("Cosh", {x}); }); }
Status cosh_grad(GradContext& g) { return chain(g, [](Emitter& e, Value x, DType) { return e.emit("Sinh", {x}); }); }

// Y = tan X: dX = dY * (1 + Y^2).
Status tan_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value d = e.emit("Add", {one(e, dtype_of(g)), square(e, g.output(0))});
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), d}));
  return ok_status();
}

// asin' = 1 / sqrt(1 - x^2), acos' = -asin', atan' = 1 / (1 + x^2).
Status asin_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return e.emit("Sqrt", {e.emit("Sub", {one(e, dt), square(e, x)})}); });
}
Status acos_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) {
    return e.emit("Neg", {e.emit("Sqrt", {e.emit("Sub", {one(e, dt), square(e, x)})})});
  });
}
Status atan_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return e.emit("Add", {one(e, dt), square(e, x)}); });
}

// asinh' = 1 / sqrt(x^2 + 1), acosh' = 1 / sqrt(x^2 - 1) (x > 1), atanh' = 1 / (1 - x^2).
Status asinh_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return e.emit("Sqrt", {e.emit("Add", {square(e, x), one(e, dt)})}); });
}
Status acosh_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return e.emit("Sqrt", {e.emit("Sub", {square(e, x), one(e, dt)})}); });
}
Status atanh_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return e.emit("Sub", {one(e, dt), square(e, x)}); });
}

// Y = X / (1 + |X|): dX = dY / (1 + |X|)^2.
Status softsign_grad(GradContext& g) {
  return chain_div(g, [](Emitter& e, Value x, DType dt) { return square(e, e.emit("Add", {one(e, dt), e.emit("Abs", {x})})); });
}

// Y = gamma * (X > 0 ? X : alpha (e^X - 1)): dX = dY * (X > 0 ? gamma : Y + gamma alpha).
Status selu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const double alpha = g.node().attr_float("alpha");
  const double gamma = g.node().attr_float("gamma");
  const Value neg = e.emit("Add", {g.output(0), scalar(e, dt, gamma * alpha)});
  const Value d = e.emit("Where", {e.emit("Greater", {g.input(0), scalar(e, dt, 0)}), scalar(e, dt, gamma), neg});
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), d}));
  return ok_status();
}

// Y = max(0, X) + min(0, alpha (e^(X/alpha) - 1)): dX = dY * (X > 0 ? 1 : Y / alpha + 1).
Status celu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const double alpha = g.node().attr_float("alpha");
  const Value neg = e.emit("Add", {e.emit("Div", {g.output(0), scalar(e, dt, alpha)}), one(e, dt)});
  const Value d = e.emit("Where", {e.emit("Greater", {g.input(0), scalar(e, dt, 0)}), one(e, dt), neg});
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), d}));
  return ok_status();
}

// Y = X > alpha ? X : 0: dX = dY where X > alpha.
Status thresholded_relu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value above = e.emit("Greater", {g.input(0), scalar(e, dt, g.node().attr_float("alpha"))});
  g.set_grad(0, e.emit("Where", {above, g.grad_output(0), scalar(e, dt, 0)}));
  return ok_status();
}

// Y = X tanh(softplus(X)): dX = dY * (t + X sigmoid(X) (1 - t^2)), t = tanh(softplus(X)).
Status mish_grad(GradContext& g) {
  return chain(g, [](Emitter& e, Value x, DType dt) {
    const Value t = e.emit("Tanh", {e.emit("Softplus", {x})});
    const Value sech2 = e.emit("Sub", {one(e, dt), square(e, t)});
    return e.emit("Add", {t, e.emit("Mul", {e.emit("Mul", {x, e.emit("Sigmoid", {x})}), sech2})});
  });
}

// Y = X < 0 ? slope X : X (slope broadcasts to X): dX = dY * (X < 0 ? slope : 1),
// dslope = sum_to(dY * X where X < 0).
Status prelu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value x = g.input(0), slope = g.input(1), dy = g.grad_output(0);
  const Value neg = e.emit("Less", {x, scalar(e, dt, 0)});
  if (g.wants(0)) g.set_grad(0, sum_to(e, e.emit("Mul", {dy, e.emit("Where", {neg, slope, one(e, dt)})}), x));
  if (g.wants(1)) g.set_grad(1, sum_to(e, e.emit("Where", {neg, e.emit("Mul", {dy, x}), scalar(e, dt, 0)}), slope));
  return ok_status();
}

}  // namespace

void register_activation_math_grads(OpRegistry& r) {
  r.set_grad("Sin", &sin_grad);
  r.set_grad("Cos", &cos_grad);
  r.set_grad("Tan", &tan_grad);
  r.set_grad("Asin", &asin_grad);
  r.set_grad("Acos", &acos_grad);
  r.set_grad("Atan", &atan_grad);
  r.set_grad("Sinh", &sinh_grad);
  r.set_grad("Cosh", &cosh_grad);
  r.set_grad("Asinh", &asinh_grad);
  r.set_grad("Acosh", &acosh_grad);
  r.set_grad("Atanh", &atanh_grad);
  r.set_grad("Softsign", &softsign_grad);
  r.set_grad("Selu", &selu_grad);
  r.set_grad("Celu", &celu_grad);
  r.set_grad("ThresholdedRelu", &thresholded_relu_grad);
  r.set_grad("Mish", &mish_grad);
  r.set_grad("PRelu", &prelu_grad);
}

}  // namespace tsr::ops
