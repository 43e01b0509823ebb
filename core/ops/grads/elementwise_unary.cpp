// Gradient rules (VJPs) of the unary math ops and activations (core/ops/families/
// elementwise_unary.cpp). Where the derivative is a function of the output Y (Sigmoid, Tanh, Exp,
// Sqrt, Reciprocal, Relu, HardSigmoid, Elu) the rule reads Y rather than X, so X need not be kept
// alive for the backward pass. At kinks the one-sided convention of PyTorch is used: the
// derivative of Relu at 0 is 0, of Abs at 0 is 0 (Sign), of Clip at x == min or x == max is 1.
#include "core/ops/grad.h"

#include <numbers>

namespace tsr::ops {
namespace {

DType dtype_of(GradContext& g) { return g.input_type(0).dtype; }

// dY where `mask`, else 0 (`mask` broadcasts to dY).
Value masked(Emitter& e, Value mask, Value dy, DType dt) { return e.emit("Where", {mask, dy, scalar(e, dt, 0)}); }

// Y = max(0, X): dX = dY where Y > 0 (0 at X == 0).
Status relu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  g.set_grad(0, masked(e, e.emit("Greater", {g.output(0), scalar(e, dt, 0)}), g.grad_output(0), dt));
  return ok_status();
}

// Y = X < 0 ? alpha X : X: dX = dY * (X < 0 ? alpha : 1).
Status leaky_relu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value dy = g.grad_output(0);
  const double alpha = g.node().attr_float("alpha");
  const Value neg = e.emit("Less", {g.input(0), scalar(e, dt, 0)});
  g.set_grad(0, e.emit("Where", {neg, e.emit("Mul", {dy, scalar(e, dt, alpha)}), dy}));
  return ok_status();
}

// Y = 1 / (1 + e^-X): dX = dY * Y * (1 - Y).
Status sigmoid_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value y = g.output(0);
  const Value one_minus = e.emit("Sub", {scalar(e, dtype_of(g), 1), y});
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), e.emit("Mul", {y, one_minus})}));
  return ok_status();
}

// Y = tanh(X): dX = dY * (1 - Y^2).
Status tanh_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value y = g.output(0);
  const Value d = e.emit("Sub", {scalar(e, dtype_of(g), 1), e.emit("Mul", {y, y})});
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), d}));
  return ok_status();
}

// Y = clamp(alpha X + beta, 0, 1): dX = dY * alpha where 0 < Y < 1 (0 on the flat parts and at
// the corners).
Status hard_sigmoid_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value y = g.output(0);
  const Value inside = e.emit("And", {e.emit("Greater", {y, scalar(e, dt, 0)}), e.emit("Less", {y, scalar(e, dt, 1)})});
  const Value scaled = e.emit("Mul", {g.grad_output(0), scalar(e, dt, g.node().attr_float("alpha"))});
  g.set_grad(0, masked(e, inside, scaled, dt));
  return ok_status();
}

// Y = X * clamp(X/6 + 1/2, 0, 1): dX = dY * (X < -3 ? 0 : X > 3 ? 1 : X/3 + 1/2).
Status hard_swish_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value x = g.input(0), dy = g.grad_output(0);
  const Value mid = e.emit("Add", {e.emit("Mul", {x, scalar(e, dt, 1.0 / 3.0)}), scalar(e, dt, 0.5)});
  Value d = e.emit("Where", {e.emit("Greater", {x, scalar(e, dt, 3)}), scalar(e, dt, 1), mid});
  d = e.emit("Where", {e.emit("Less", {x, scalar(e, dt, -3)}), scalar(e, dt, 0), d});
  g.set_grad(0, e.emit("Mul", {dy, d}));
  return ok_status();
}

// Y = e^X: dX = dY * Y.
Status exp_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Mul", {g.grad_output(0), g.output(0)}));
  return ok_status();
}

// Y = ln X: dX = dY / X.
Status log_grad(GradContext& g) {
  g.set_grad(0, g.emitter().emit("Div", {g.grad_output(0), g.input(0)}));
  return ok_status();
}

// Y = sqrt(X): dX = dY / (2 Y).
Status sqrt_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("Div", {e.emit("Mul", {g.grad_output(0), scalar(e, dtype_of(g), 0.5)}), g.output(0)}));
  return ok_status();
}

// Y = 1 / X: dX = -dY * Y^2.
Status reciprocal_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const Value y = g.output(0);
  g.set_grad(0, e.emit("Neg", {e.emit("Mul", {g.grad_output(0), e.emit("Mul", {y, y})})}));
  return ok_status();
}

// Y = |X|: dX = dY * sign(X) (0 at X == 0).
Status abs_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), e.emit("Sign", {g.input(0)})}));
  return ok_status();
}

// Y = erf(X): dX = dY * 2/sqrt(pi) * e^(-X^2).
Status erf_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value x = g.input(0);
  const Value gauss = e.emit("Exp", {e.emit("Neg", {e.emit("Mul", {x, x})})});
  const Value c = scalar(e, dt, 2.0 * std::numbers::inv_sqrtpi);
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), e.emit("Mul", {gauss, c})}));
  return ok_status();
}

// Y = X < 0 ? alpha (e^X - 1) : X: dX = dY * (X < 0 ? Y + alpha : 1).
Status elu_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value dy = g.grad_output(0);
  const Value alpha = scalar(e, dt, g.node().attr_float("alpha"));
  const Value neg = e.emit("Less", {g.input(0), scalar(e, dt, 0)});
  g.set_grad(0, e.emit("Where", {neg, e.emit("Mul", {dy, e.emit("Add", {g.output(0), alpha})}), dy}));
  return ok_status();
}

// Y = ln(1 + e^X): dX = dY * sigmoid(X).
Status softplus_grad(GradContext& g) {
  Emitter& e = g.emitter();
  g.set_grad(0, e.emit("Mul", {g.grad_output(0), e.emit("Sigmoid", {g.input(0)})}));
  return ok_status();
}

// Y = X < min ? min : X > max ? max : X (min/max optional scalars, as the kernel evaluates it):
// dX = dY where min <= X <= max (ties go to X), dmin = sum(dY where X < min),
// dmax = sum(dY where X > max and X >= min). Assumes min <= max.
Status clip_grad(GradContext& g) {
  Emitter& e = g.emitter();
  const DType dt = dtype_of(g);
  const Value x = g.input(0), dy = g.grad_output(0);
  const bool both = g.has_input(1) && g.has_input(2);
  if (g.wants(0) && both) {
    // Both bounds (ReLU6): one fused pass, dY where !(X < min) && !(X > max) (ClipGrad).
    g.set_grad(0, e.emit("ClipGrad", {dy, x, g.input(1), g.input(2)}));
    if (!g.wants(1) && !g.wants(2)) return ok_status();
  }
  Value below, above;  // bool masks: where min / max is the output
  if (g.has_input(1)) below = e.emit("Less", {x, g.input(1)});
  if (g.has_input(2)) {
    above = e.emit("Greater", {x, g.input(2)});
    if (below.valid()) above = e.emit("And", {above, e.emit("Not", {below})});
  }
  if (g.wants(0) && !both) {
    const Value clipped = below.valid() ? below : above;
    g.set_grad(0, clipped.valid() ? e.emit("Where", {clipped, scalar(e, dt, 0), dy}) : dy);
  }
  if (g.wants(1)) g.set_grad(1, sum_to(e, masked(e, below, dy, dt), g.input(1)));
  if (g.wants(2)) g.set_grad(2, sum_to(e, masked(e, above, dy, dt), g.input(2)));
  return ok_status();
}

// Piecewise-constant Y (Sign, Floor, Ceil, Round): dX = 0 (almost everywhere).
Status zero_grad(GradContext& g) {
  g.set_grad(0, zeros_like(g.emitter(), g.input(0)));
  return ok_status();
}

// Y = Gelu(X): dX = GeluGrad(dY, X) (one fused kernel; the derivative has several terms).
Status gelu_grad(GradContext& g) {
  std::vector<ir::Attribute> attrs;
  if (const ir::Attribute* a = g.node().attr("approximate")) attrs.push_back(*a);
  g.set_grad(0, g.emitter().emit("GeluGrad", {g.grad_output(0), g.input(0)}, std::move(attrs)));
  return ok_status();
}

}  // namespace

void register_elementwise_unary_grads(OpRegistry& r) {
  r.set_grad("Relu", &relu_grad);
  r.set_grad("LeakyRelu", &leaky_relu_grad);
  r.set_grad("Sigmoid", &sigmoid_grad);
  r.set_grad("Tanh", &tanh_grad);
  r.set_grad("HardSigmoid", &hard_sigmoid_grad);
  r.set_grad("HardSwish", &hard_swish_grad);
  r.set_grad("Exp", &exp_grad);
  r.set_grad("Log", &log_grad);
  r.set_grad("Sqrt", &sqrt_grad);
  r.set_grad("Reciprocal", &reciprocal_grad);
  r.set_grad("Abs", &abs_grad);
  r.set_grad("Erf", &erf_grad);
  r.set_grad("Elu", &elu_grad);
  r.set_grad("Softplus", &softplus_grad);
  r.set_grad("Clip", &clip_grad);
  r.set_grad("Gelu", &gelu_grad);
  for (const char* op : {"Sign", "Floor", "Ceil", "Round"}) r.set_grad(op, &zero_grad);
}

}  // namespace tsr::ops
