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
  if (axes.empty() && g.node().attr_int("noop_with_empty_axes", 0) != 0) return std::vector<int64_t>{};
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

// dY of a reduction broadcast back to X's shape: the reduced axes are re-inserted (when the
// node dropped them) and dY is expanded over them.
Expected<Value> unreduce(GradContext& g, Value dy) {
  Emitter& e = g.emitter();
  TSR_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, reduced_axes(g));
  if (g.node().attr_int("keepdims", 1) == 0 && !axes.empty()) dy = e.emit("Unsqueeze", {dy, ints_const(e, axes)});
  return e.emit("Expand", {dy, shape_of(e, g.input(0))});
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

}  // namespace

void register_reduce_grads(OpRegistry& r) {
  r.set_grad("ReduceSum", &reduce_sum_grad);
  r.set_grad("ReduceMean", &reduce_mean_grad);
}

}  // namespace tsr::ops
