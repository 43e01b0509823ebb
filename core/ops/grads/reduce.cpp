// Gradient rules of the reductions (core/ops/families/reduce.cpp).
#include <algorithm>

#include "core/ops/grad.h"

namespace tsr::ops {
namespace {

// The reduced axes of a Reduce* node, normalized and sorted; empty = every axis. Axes come from
// the attribute or a constant input[1] (dynamic axes are not differentiable here).
Expected<std::vector<int64_t>> reduced_axes(GradContext& g) {
  Emitter& e = g.emitter();
  const ValueType x = g.input_type(0);
  if (!x.has_shape) return g.error("the input rank must be known");
  std::vector<int64_t> axes;
  if (g.has_input(1)) {
    const Tensor* v = e.known_value(g.input(1));
    if (!v) return g.error("axes must be a constant");
    axes = v->to_i64_vector();
  } else {
    axes = g.node().attr_ints("axes");
  }
  if (axes.empty() && g.node().attr_int("noop_with_empty_axes") != 0) return std::vector<int64_t>{};
  const auto r = static_cast<int64_t>(x.shape.size());
  if (axes.empty())
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  for (int64_t& a : axes) {
    if (a < -r || a >= r) return g.error("axis ", a, " out of range for rank ", r);
    if (a < 0) a += r;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

}  // namespace

namespace {

// `v` (shaped like the node's output) with the reduced axes re-inserted as 1s when the node
// dropped them (keepdims=0): it then broadcasts against X.
Expected<Value> keepdims_view(GradContext& g, Value v) {
  Emitter& e = g.emitter();
  if (!g.input_type(0).has_shape) {
    // X's rank unknown until run time: reducing every axis (or none, with noop_with_empty_axes)
    // leaves a dY that broadcasts to X as it is; explicit non-negative axes are re-inserted where
    // they were. Negative axes need the rank.
    std::vector<int64_t> axes = g.node().attr_ints("axes");
    if (g.has_input(1)) {
      const Tensor* c = e.known_value(g.input(1));
      if (!c) return g.error("axes must be a constant");
      axes = c->to_i64_vector();
    }
    if (axes.empty()) return v;
    if (std::any_of(axes.begin(), axes.end(), [](int64_t a) { return a < 0; }))
      return g.error("negative axes need the input rank, which is unknown");
    std::sort(axes.begin(), axes.end());
    if (g.node().attr_int("keepdims") == 0) v = e.emit("Unsqueeze", {v, ints_const(e, axes)});
    return v;
  }
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, reduced_axes(g));
  if (g.node().attr_int("keepdims") == 0 && !axes.empty()) v = e.emit("Unsqueeze", {v, ints_const(e, axes)});
  return v;
}

}  // namespace

// dY of a reduction broadcast back to X's shape: the reduced axes are re-inserted (when the
// node dropped them) and dY is expanded over them.
Expected<Value> unreduce(GradContext& g, Value dy) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value v, keepdims_view(g, dy));
  return e.emit("Expand", {v, shape_of(e, g.input(0))});
}

namespace {

// Y = sum_axes X: dX = broadcast(dY).
Status reduce_sum_grad(GradContext& g) {
  TSR_ASSIGN_OR_RETURN(const Value dx, unreduce(g, g.grad_output(0)));
  g.set_grad(0, dx);
  return ok_status();
}

// Y = mean_axes X: dX = broadcast(dY) / (numel(X) / numel(Y)).
Status reduce_mean_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value dx, unreduce(g, g.grad_output(0)));
  const DType dt = g.input_type(0).dtype;
  const Value count = cast(e, e.emit("Div", {e.emit("Size", {g.input(0)}), e.emit("Size", {g.output(0)})}), dt);
  g.set_grad(0, e.emit("Div", {dx, count}));
  return ok_status();
}

// Y = max_axes X (or min): dX = dY / k at the k positions equal to Y in each reduced group, 0
// elsewhere (ties share the gradient evenly, as PyTorch's amax/amin; the sum over the group is
// dY). An empty axes list with noop_with_empty_axes (an identity) gives dX = dY.
Status reduce_extremum_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, reduced_axes(g));
  if (axes.empty()) {
    g.set_grad(0, g.grad_output(0));
    return ok_status();
  }
  const DType dt = g.input_type(0).dtype;
  TSR_ASSIGN_OR_RETURN(const Value y, keepdims_view(g, g.output(0)));
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  const Value hit = cast(e, e.emit("Equal", {g.input(0), y}), dt);
  const Value count = e.emit("ReduceSum", {hit, ints_const(e, axes)});  // keepdims=1
  g.set_grad(0, e.emit("Mul", {hit, e.emit("Div", {dy, count})}));
  return ok_status();
}

// Y = prod_axes X: dX = broadcast(dY * Y) / X (X must be nonzero).
Status reduce_prod_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value y, keepdims_view(g, g.output(0)));
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  g.set_grad(0, e.emit("Div", {e.emit("Mul", {dy, y}), g.input(0)}));
  return ok_status();
}

// Y = sum_axes X^2: dX = 2 X broadcast(dY).
Status reduce_sum_square_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  const Value twice = e.emit("Mul", {dy, scalar(e, g.input_type(0).dtype, 2)});
  g.set_grad(0, e.emit("Mul", {g.input(0), twice}));
  return ok_status();
}

// Y = sum_axes |X|: dX = sign(X) broadcast(dY) (0 at X == 0).
Status reduce_l1_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  g.set_grad(0, e.emit("Mul", {e.emit("Sign", {g.input(0)}), dy}));
  return ok_status();
}

// Y = sqrt(sum_axes X^2): dX = X broadcast(dY / Y) (Y must be nonzero).
Status reduce_l2_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value y, keepdims_view(g, g.output(0)));
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  g.set_grad(0, e.emit("Mul", {g.input(0), e.emit("Div", {dy, y})}));
  return ok_status();
}

// Y = ln(sum_axes X): dX = broadcast(dY / e^Y) (= dY / sum X).
Status reduce_log_sum_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value dx, unreduce(g, e.emit("Div", {g.grad_output(0), e.emit("Exp", {g.output(0)})})));
  g.set_grad(0, dx);
  return ok_status();
}

// Y = ln(sum_axes e^X): dX = e^(X - Y) broadcast(dY) (softmax over the group).
Status reduce_log_sum_exp_grad(GradContext& g) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const Value y, keepdims_view(g, g.output(0)));
  TSR_ASSIGN_OR_RETURN(const Value dy, keepdims_view(g, g.grad_output(0)));
  g.set_grad(0, e.emit("Mul", {e.emit("Exp", {e.emit("Sub", {g.input(0), y})}), dy}));
  return ok_status();
}

}  // namespace

void register_reduce_grads(OpRegistry& r) {
  r.set_grad("ReduceSum", &reduce_sum_grad);
  r.set_grad("ReduceMean", &reduce_mean_grad);
  r.set_grad("ReduceMax", &reduce_extremum_grad);
  r.set_grad("ReduceMin", &reduce_extremum_grad);
  r.set_grad("ReduceProd", &reduce_prod_grad);
  r.set_grad("ReduceSumSquare", &reduce_sum_square_grad);
  r.set_grad("ReduceL1", &reduce_l1_grad);
  r.set_grad("ReduceL2", &reduce_l2_grad);
  r.set_grad("ReduceLogSum", &reduce_log_sum_grad);
  r.set_grad("ReduceLogSumExp", &reduce_log_sum_exp_grad);
}

}  // namespace tsr::ops
